// Tokenizers and chat templates of Hugging Face model folders, matching Python transformers:
// `Tokenizer.fromDir(dir)` reads tokenizer.json (through @huggingface/tokenizers), tokenizer_config.json,
// chat_template.jinja/.json, generation_config.json and special_tokens_map.json; `encode`/`decode` give
// transformers' ids and text, `renderChat`/`encodeChat` its `apply_chat_template` (Jinja through
// @huggingface/jinja, made to print and serialise as Python Jinja does; see py-compat.ts).
export { Tokenizer } from './tokenizer.js';
export type { TokenizerObjectsOptions } from './tokenizer.js';
export type {
  ChatMessage,
  ChatTemplateOptions,
  ContentPart,
  SpecialTokens,
  ToolCall,
  ToolSchema,
} from './types.js';
export { trimTokenizer, trimTokenizerFiles, chatCorpusTexts, byteLevelAlphabet } from './trim.js';
export type { TrimTokenizerOptions, TrimResult, CorpusChat } from './trim.js';
