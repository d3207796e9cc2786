// The tokenizer of a Hugging Face model folder: tokenizer.json through @huggingface/tokenizers,
// the chat template through @huggingface/jinja, with transformers' behaviour around both.
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { UserError } from '../../errors.js';
import { cutAtFinalMessage, markFinalMessage } from './continue-final.js';
import { cleanUpTokenization, shouldCleanUpSpaces } from './decode-cleanup.js';
import { readTokenizerFiles } from './files.js';
import { RecentMap } from './recent.js';
import { templateMessages, templateTools } from './messages.js';
import {
  addedTokens,
  mergeSpecialTokensMap,
  readEosTokenIds,
  readSpecialTokens,
  specialTokenVars,
} from './special-tokens.js';
import { loadChatTemplates, pickChatTemplate, type ChatTemplates } from './templates.js';
import type { ChatMessage, ChatTemplateOptions, SpecialTokens } from './types.js';

export interface TokenizerObjectsOptions {
  /** A chat template, or named ones ('default', 'tool_use', ...), that replace tokenizer_config.json's `chat_template`. */
  chatTemplate?: string | Record<string, string>;
  /** A chat template used only when there is no other (chat_template.json's). */
  fallbackChatTemplate?: string;
  /** generation_config.json's content, for `eosTokenIds`. */
  generationConfig?: object;
  /** special_tokens_map.json's content (used as transformers does, only when the config has no `added_tokens_decoder`). */
  specialTokensMap?: object;
  /** Where the objects came from, for error messages. */
  origin?: string;
}

/** Texts at least this long, and id lists at least this long, are remembered by `encode` and
 *  `decode` (shorter ones cost less to redo than to look up). */
const RECENT_MIN_CHARS = 256;
const RECENT_MIN_IDS = 64;
/** How many of each are remembered: a dataset's prompts, or a few rollouts' responses, at a few KB each. */
const RECENT_ENTRIES = 8192;

export class Tokenizer {
  /** Number of token ids: one more than the largest id in the vocabulary and added tokens (`len(tokenizer)` in transformers). */
  readonly vocabSize: number;
  readonly eosTokenIds: number[];
  readonly padTokenId: number | undefined;
  readonly bosTokenId: number | undefined;
  readonly specialTokens: SpecialTokens;
  private readonly specialIds: ReadonlySet<number>;
  private readonly templateVars: Record<string, string>;
  private readonly cleanUpSpaces: boolean;
  /** Recent encodes of long texts and decodes of long id lists: a GRPO group's n samples and the
   *  dataset's prompt-length filter encode the same prompt, and a rollout decodes each response
   *  three times (the environment's step, the reward, the trajectory dump); a 300-token text costs
   *  1-2 ms either way. */
  private readonly recentEncodes = new RecentMap<readonly number[]>(RECENT_ENTRIES);
  private readonly recentDecodes = new RecentMap<string>(RECENT_ENTRIES);

  private constructor(
    private readonly hf: HfTokenizer,
    private readonly templates: ChatTemplates,
    tokenizerJson: object,
    tokenizerConfig: object,
    generationConfig: object | undefined,
    private readonly origin: string,
  ) {
    this.specialTokens = readSpecialTokens(tokenizerJson, tokenizerConfig);
    this.templateVars = specialTokenVars(tokenizerConfig);
    const idOf = (token: string | undefined) => (token === undefined ? undefined : this.tokenToId(token));
    this.bosTokenId = idOf(this.specialTokens.bos);
    this.padTokenId = idOf(this.specialTokens.pad);
    this.eosTokenIds = readEosTokenIds(generationConfig, idOf(this.specialTokens.eos));
    this.specialIds = new Set(
      addedTokens(tokenizerJson)
        .filter((t) => t.special)
        .map((t) => t.id),
    );
    let maxId = -1;
    for (const id of hf.get_vocab(true).values()) if (id > maxId) maxId = id;
    this.vocabSize = maxId + 1;
    this.cleanUpSpaces = shouldCleanUpSpaces(
      tokenizerConfig,
      (tokenizerJson as { model?: { type?: unknown } }).model?.type,
    );
  }

  /**
   * Loads tokenizer.json and tokenizer_config.json, and when present chat_template.jinja,
   * additional_chat_templates/*.jinja, chat_template.json, generation_config.json and special_tokens_map.json.
   */
  static async fromDir(dir: string): Promise<Tokenizer> {
    const files = await readTokenizerFiles(dir);
    return Tokenizer.fromObjects(files.tokenizerJson, files.tokenizerConfig, {
      chatTemplate: files.chatTemplate,
      fallbackChatTemplate: files.fallbackChatTemplate,
      generationConfig: files.generationConfig,
      specialTokensMap: files.specialTokensMap,
      origin: `model folder '${dir}'`,
    });
  }

  static fromObjects(tokenizerJson: object, tokenizerConfig: object, opts: TokenizerObjectsOptions = {}): Tokenizer {
    const origin = opts.origin ?? 'the given tokenizer objects';
    tokenizerConfig = mergeSpecialTokensMap(tokenizerConfig, opts.specialTokensMap);
    // tokenizer.json's post-processor alone decides what encode adds: transformers drops the config's
    // add_bos_token / add_eos_token whenever a tokenizer.json exists (tested in tokenizer-config.test.ts).
    let hf: HfTokenizer;
    try {
      hf = new HfTokenizer(tokenizerJson, tokenizerConfig);
    } catch (err) {
      throw new UserError(`cannot build a tokenizer from tokenizer.json of ${origin}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    const templates = loadChatTemplates(tokenizerConfig, opts.chatTemplate, opts.fallbackChatTemplate, origin);
    return new Tokenizer(hf, templates, tokenizerJson, tokenizerConfig, opts.generationConfig, origin);
  }

  /** Text to ids. `addSpecialTokens` (default true, as in transformers) applies the post-processor (e.g. Llama's BOS). */
  encode(text: string, opts: { addSpecialTokens?: boolean } = {}): number[] {
    const special = opts.addSpecialTokens ?? true;
    const encode = () => this.hf.encode(text, { add_special_tokens: special }).ids;
    if (text.length < RECENT_MIN_CHARS) return encode();
    return [...this.recentEncodes.getOrMake((special ? '1' : '0') + text, encode)];
  }

  /**
   * Ids to text; `skipSpecialTokens` drops added tokens marked special. Ids past the vocabulary
   * (a model's embedding is often larger than its tokenizer) decode to nothing, as in transformers.
   */
  decode(ids: readonly number[], opts: { skipSpecialTokens?: boolean } = {}): string {
    for (const [i, id] of ids.entries()) {
      if (!Number.isInteger(id) || id < 0)
        throw new UserError(`token id at index ${i} is ${id}; token ids are non-negative integers`);
    }
    const kept = opts.skipSpecialTokens ? ids.filter((id) => !this.specialIds.has(id)) : [...ids];
    if (kept.length === 0) return '';
    const decode = () => {
      const text = this.hf.decode(kept, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
      return this.cleanUpSpaces ? cleanUpTokenization(text) : text;
    };
    return kept.length < RECENT_MIN_IDS ? decode() : this.recentDecodes.getOrMake(kept.join(','), decode);
  }

  /** The chat rendered by the model's own template (transformers' `apply_chat_template(tokenize=False)`). */
  renderChat(messages: ChatMessage[], opts: ChatTemplateOptions = {}): string {
    if (opts.continueFinalMessage && opts.addGenerationPrompt) {
      throw new UserError(
        'continueFinalMessage and addGenerationPrompt cannot both be set: one continues the last message, the other starts a new one',
      );
    }
    const template = pickChatTemplate(this.templates, opts.tools !== undefined, this.origin);
    const vars: Record<string, unknown> = { ...this.templateVars, ...opts.templateVars };
    if (opts.enableThinking !== undefined) vars.enable_thinking = opts.enableThinking;
    const chat = templateMessages(messages);
    const field = opts.continueFinalMessage === true ? 'content' : opts.continueFinalMessage || undefined;
    const finalText = field === undefined ? undefined : markFinalMessage(chat, field, template.source, template.name);
    const rendered = template.render({
      ...vars,
      messages: chat,
      tools: templateTools(opts.tools),
      documents: null,
      add_generation_prompt: opts.addGenerationPrompt ?? false,
    });
    return finalText === undefined ? rendered : cutAtFinalMessage(rendered, finalText, template.name);
  }

  /** The rendered chat as ids, encoded without adding special tokens (transformers' `apply_chat_template(tokenize=True)`). */
  encodeChat(messages: ChatMessage[], opts: ChatTemplateOptions = {}): number[] {
    return this.encode(this.renderChat(messages, opts), { addSpecialTokens: false });
  }

  tokenToId(token: string): number | undefined {
    return this.hf.token_to_id(token);
  }

  idToToken(id: number): string | undefined {
    return this.hf.id_to_token(id);
  }

  /** Whether `id` is an added token marked special (e.g. `<|im_end|>`). */
  isSpecialId(id: number): boolean {
    return this.specialIds.has(id);
  }
}
