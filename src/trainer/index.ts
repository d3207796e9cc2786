/**
 * agent-r1/trainer: the RL training loop over step-level rows (one row per agent step, its prompt
 * and response ids exactly as generated).
 *
 * ```ts
 * const policy = loadCausalLM(dir, { requiresGrad: true });
 * const engine = new Engine(policy);                 // shares the policy's parameter tensors
 * const trainer = new Trainer({ policy, generator: engine, tokenizer, trainData, valData }, {
 *   data: { trainBatchSize: 64 },
 *   rollout: { n: 5, sampling: { maxTokens: 1024, temperature: 1 }, defaultAgentFlow: 'agent_env_loop', flow: { maxSteps: 5 } },
 *   actor: { optim: { lr: 1e-6 }, ppoMiniBatchSize: 16, ppoMicroBatchSizePerGpu: 8 },
 *   algorithm: { advEstimator: 'grpo' },
 *   trainer: { totalEpochs: 15, testFreq: 10, saveFreq: 50, defaultLocalDir: 'checkpoints', metricsPath: 'metrics.jsonl' },
 * });
 * await trainer.fit();
 * ```
 *
 * Per step: rollout -> `stepsToRows` -> old (and ref) log-probs, critic values -> rewards (KL in
 * reward) -> advantages -> critic update -> actor update -> update_weights (`Generator.updateWeights`,
 * `syncWeights`) -> metrics -> validation
 * and checkpoints. StepPO is `advEstimator: 'gae'` + a critic + `lossMode: 'gspo'` +
 * `lossAggMode: 'seq-mean-token-mean'` (gamma 0.99, lam 1).
 */
export {
  Trainer,
  frozenCopy,
  type TrainerComponents,
  type TrainingProgress,
  type Reseedable,
  type CacheReleasing,
} from './trainer.js';
export { DataParallel } from './data-parallel.js';
export { ZeroAdamW } from './zero-optimizer.js';
export {
  resolveTrainerOptions,
  needsCritic,
  type TrainerOptions,
  type TrainerOptionsInput,
  type DataOptions,
  type RolloutOptions,
  type ActorOptions,
  type CriticOptions,
  type AlgorithmOptions,
  type RunOptions,
  type OptimOptions,
  type UpdateOptions,
} from './options.js';
export {
  stepsToRows,
  packRows,
  gatherResponses,
  responsesAt,
  selectRows,
  TrainingRows,
  type StepLike,
  type StepsToRowsOptions,
  type PackedRows,
} from './training-rows.js';
export { computeLogprobs, computeValues, type ForwardOptions } from './logprobs.js';
export { updateActor, actorLossConfig, type ActorBatch } from './actor-update.js';
export { updateCritic, criticMask, type CriticBatch } from './critic-update.js';
export {
  ppoLoop,
  miniBatches,
  microBatches,
  type MicroLoss,
  type MiniBatchLoss,
  type PpoLoopOptions,
} from './ppo-loop.js';
export { lrSchedule } from './schedule.js';
export { BatchSchedule } from './data.js';
export { MetricsLog, JsonlSink, TensorBoardSink, progressLine, type MetricsSink } from './metrics.js';
export { EventFileWriter } from './tfevents.js';
export {
  saveCheckpoint,
  writeCheckpoint,
  loadCheckpoint,
  latestCheckpoint,
  checkpointToResume,
  verifyCheckpoint,
  checkpointSteps,
  resumeHint,
  loadWeightsInto,
  stepDir,
  CheckpointError,
  LATEST_FILE,
  type TrainerState,
  type CheckpointParts,
} from './checkpoint.js';
export { mulberry32, mixSeed, shuffled } from '../random.js';
