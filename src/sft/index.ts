/**
 * agent-r1/sft: supervised fine-tuning on the step rows RL trains on (one row per assistant turn:
 * the prompt ids as the row's own flow renders that step, the action's ids + EOS), loss on the
 * assistant tokens only, packed micro-batches, checkpoints as Hugging Face folders.
 *
 * ```ts
 * const { rows, bad } = await buildSftRows(samples, { tokenizer, eosTokenId: tokenizer.tokenToId('<|im_end|>')! });
 * const sft = new SftTrainer({ model, trainRows: rows }, options);
 * await sft.fit();                 // <defaultLocalDir>/global_step_N/ loads with loadCausalLM and transformers
 * ```
 * From a config: `loadSftConfig` (agent-r1/config) and `sftFromConfig` (agent-r1/cli).
 */
export { buildSftRows, type BuildSftRowsOptions, type SftRows } from './replay.js';
export { truncateRows, type Truncation } from './truncate.js';
export { SftTrainer, type SftComponents } from './trainer.js';
export type { SftTrainerOptions } from './options.js';
export type { SftSample, SftStepRow, SftRowProblem } from './types.js';
