// Tokenizer parity against Python transformers (AutoTokenizer on the same files), plus bad inputs.
// Each tokenizer's whole corpus goes to Python in one call (start-up is slow).
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Tokenizer, type ChatTemplateOptions } from '../../src/models/tokenizer/index.js';
import { UserError } from '../../src/errors.js';
import { runPython } from '../helpers/python.js';
import { tokenizerFixtureDir, type TokenizerFixture } from '../helpers/tokenizers.js';
import { fuzzChats, fuzzTexts, LLAMA_CHATS, QWEN3_CHATS, TEXTS as CORPUS, type ChatCase } from './tokenizer-corpus.js';

const TEXTS = [...CORPUS, ...fuzzTexts(1000, 7)];

const REFERENCE = readFileSync(fileURLToPath(new URL('./tokenizer_reference.py', import.meta.url)), 'utf8');

interface Reference {
  vocab_size: number;
  bos_token_id: number | null;
  eos_token_id: number | null;
  pad_token_id: number | null;
  id_to_token: (string | null)[];
  encode_with: number[][];
  encode_without: number[][];
  decode: string[];
  decode_skip: string[];
  chats: Array<{ text: string; ids: number[] } | { error: string }>;
}

function chatOptions(c: ChatCase): ChatTemplateOptions {
  const { tools, addGenerationPrompt, enableThinking, continueFinalMessage, templateVars } = c;
  return { tools, addGenerationPrompt, enableThinking, continueFinalMessage, templateVars };
}

function pythonChat(c: ChatCase) {
  const kwargs: Record<string, unknown> = { ...c.templateVars };
  if (c.enableThinking !== undefined) kwargs.enable_thinking = c.enableThinking;
  if (c.continueFinalMessage !== undefined) kwargs.continue_final_message = c.continueFinalMessage;
  return {
    messages: c.messages,
    tools: c.tools ?? null,
    add_generation_prompt: c.addGenerationPrompt ?? false,
    kwargs,
  };
}

/** Deterministic pseudo-random ids in [0, n), to decode arbitrary (often invalid UTF-8) byte sequences. */
function randomIds(count: number, n: number, seed: number): number[] {
  const out: number[] = [];
  let s = seed;
  for (let i = 0; i < count; i++) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    out.push(s % n);
  }
  return out;
}

function decodeCorpus(tok: Tokenizer): number[][] {
  const cases: number[][] = [];
  for (const text of TEXTS) {
    const ids = tok.encode(text);
    if (ids.length === 0) continue;
    cases.push(ids, ids.slice(0, Math.ceil(ids.length / 2)), ids.slice(1));
  }
  for (let seed = 1; seed <= 8; seed++) cases.push(randomIds(64, tok.vocabSize, seed));
  // Every special token, in one sequence and around text.
  const specials = tok.specialTokens.all.map((t) => tok.tokenToId(t)!);
  cases.push(specials, [
    ...specials.slice(0, 3),
    ...tok.encode('plain text', { addSpecialTokens: false }),
    ...specials.slice(-3),
  ]);
  // Ids past the tokenizer's vocabulary (a model's embedding is often larger): transformers skips them.
  cases.push([
    ...tok.encode('before', { addSpecialTokens: false }),
    tok.vocabSize,
    tok.vocabSize + 100,
    ...tok.encode(' after', { addSpecialTokens: false }),
  ]);
  return cases;
}

function parity(name: TokenizerFixture, chats: ChatCase[]) {
  describe(`${name}: parity with transformers`, () => {
    let tok: Tokenizer;
    let ref: Reference;
    let decodeIds: number[][];
    const probeIds = [0, 1, 100, 1000, 10000, 100000];

    before(async () => {
      tok = await Tokenizer.fromDir(tokenizerFixtureDir(name));
      decodeIds = decodeCorpus(tok);
      const ids = [...probeIds, ...tok.specialTokens.all.map((t) => tok.tokenToId(t)!)];
      probeIds.splice(0, probeIds.length, ...ids);
      ref = runPython<Reference>(REFERENCE, {
        dir: tokenizerFixtureDir(name),
        texts: TEXTS,
        decode_ids: decodeIds,
        probe_ids: probeIds,
        chats: chats.map(pythonChat),
      });
    });

    it('vocabulary size, special token ids, id <-> token', () => {
      assert.equal(tok.vocabSize, ref.vocab_size);
      assert.equal(tok.bosTokenId, ref.bos_token_id ?? undefined);
      assert.equal(tok.padTokenId, ref.pad_token_id ?? undefined);
      assert.ok(ref.eos_token_id !== null && tok.eosTokenIds.includes(ref.eos_token_id));
      assert.deepEqual(
        probeIds.map((id) => tok.idToToken(id) ?? null),
        ref.id_to_token,
      );
      for (const [i, id] of probeIds.entries()) assert.equal(tok.tokenToId(ref.id_to_token[i]!), id);
    });

    it('encode with special tokens equals tokenizer(text)', () => {
      for (const [i, text] of TEXTS.entries())
        assert.deepEqual(tok.encode(text), ref.encode_with[i], JSON.stringify(text));
    });

    it('encode without special tokens equals tokenizer(text, add_special_tokens=False)', () => {
      for (const [i, text] of TEXTS.entries()) {
        assert.deepEqual(tok.encode(text, { addSpecialTokens: false }), ref.encode_without[i], JSON.stringify(text));
      }
    });

    it('a long text encoded again (remembered) gives the same ids as a fresh tokenizer, and edits to them do not leak', async () => {
      const fresh = await Tokenizer.fromDir(tokenizerFixtureDir(name));
      const long = TEXTS.join(' | ').repeat(3);
      assert.ok(long.length >= 256, 'long enough to be remembered');
      for (const addSpecialTokens of [true, false, true]) {
        const want = fresh.encode(long, { addSpecialTokens });
        const first = tok.encode(long, { addSpecialTokens });
        assert.deepEqual(first, want);
        first.push(-1);
        first[0] = -7;
        assert.deepEqual(tok.encode(long, { addSpecialTokens }), want, `again (addSpecialTokens ${addSpecialTokens})`);
      }
    });

    it('long ids decoded again (remembered) give the same text as a fresh tokenizer, with and without special tokens', async () => {
      const fresh = await Tokenizer.fromDir(tokenizerFixtureDir(name));
      const ids = [...decodeIds.flat(), ...probeIds];
      assert.ok(ids.length >= 64, 'long enough to be remembered');
      for (const skipSpecialTokens of [false, true, false]) {
        const want = fresh.decode(ids, { skipSpecialTokens });
        assert.equal(tok.decode(ids, { skipSpecialTokens }), want);
        assert.equal(tok.decode(ids, { skipSpecialTokens }), want, `again (skipSpecialTokens ${skipSpecialTokens})`);
      }
      assert.notEqual(tok.decode(ids), tok.decode(ids.slice(1)), 'a different list is not taken for a remembered one');
    });

    it('decode equals tokenizer.decode, with and without skip_special_tokens', () => {
      for (const [i, ids] of decodeIds.entries()) {
        assert.equal(tok.decode(ids), ref.decode[i], `ids ${JSON.stringify(ids)}`);
        assert.equal(
          tok.decode(ids, { skipSpecialTokens: true }),
          ref.decode_skip[i],
          `skip, ids ${JSON.stringify(ids)}`,
        );
      }
    });

    for (const [i, c] of chats.entries()) {
      it(`chat: ${c.name}`, () => {
        const expected = ref.chats[i];
        if ('error' in expected) {
          assert.throws(
            () => tok.renderChat(c.messages, chatOptions(c)),
            UserError,
            `transformers failed: ${expected.error}`,
          );
          return;
        }
        assert.equal(tok.renderChat(c.messages, chatOptions(c)), expected.text);
        assert.deepEqual(tok.encodeChat(c.messages, chatOptions(c)), expected.ids);
      });
    }
  });
}

parity('qwen3', [...QWEN3_CHATS, ...fuzzChats(60, 3, true)]);
parity('llama3_1', [
  ...LLAMA_CHATS,
  ...fuzzChats(30, 5, false).map((c) => ({ ...c, templateVars: { date_string: '26 Jul 2024' } })),
]);
parity('gptoss', []);
