// The SFT trainer's options, camelCase, each naming the verl sft_trainer key it maps
// (src/config/sft-options.ts does the mapping).
import type { OptimOptions } from '../trainer/index.js';

export interface SftTrainerOptions {
  /** `data.train_batch_size`: step rows per optimizer step. */
  trainBatchSize: number;
  /** `data.micro_batch_size_per_gpu`: step rows per forward/backward (and per validation forward). */
  microBatchSize: number;
  /** `use_remove_padding`: pack a micro-batch's rows into one forward (false: one row per forward). */
  packing: boolean;
  /** Reshuffle the step rows every epoch, from `seed` (`data.shuffle`, `data.seed` else `trainer.seed`). */
  shuffle: boolean;
  seed: number;
  /** `model.enable_gradient_checkpointing`. */
  gradientCheckpointing: boolean;
  /** `optim.*` (lr, betas, weight_decay, warmup, lr_scheduler, min_lr_ratio, clip_grad). */
  optim: OptimOptions;
  /** `trainer.total_epochs`. */
  totalEpochs: number;
  /** `trainer.total_training_steps` (null: epochs x steps per epoch). */
  totalTrainingSteps: number | null;
  /** `trainer.save_freq`: a checkpoint every N steps (<= 0: only the last step, which is always saved). */
  saveFreq: number;
  /** `trainer.test_freq`: validation every N steps (<= 0: only after the last step). */
  testFreq: number;
  /** `trainer.default_local_dir`: checkpoints (global_step_N/, a Hugging Face folder) and sft_metrics.jsonl. */
  defaultLocalDir: string;
  /** `trainer.max_ckpt_to_keep` (null: all). */
  maxCkptToKeep: number | null;
  /** `trainer.logger` has `console`: a line per step. */
  console: boolean;
  /** `trainer.logger` has `file`: verl's file logger's JSON Lines (`{"step", "data"}`) to this file. */
  fileLoggerPath?: string;
  /** `trainer.logger` has `tensorboard`: scalars as TensorBoard event files in this folder. */
  tensorboardDir?: string;
  /** Metrics as JSON Lines (default `<defaultLocalDir>/sft_metrics.jsonl`). */
  metricsPath?: string;
}
