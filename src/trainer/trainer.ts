// The training loop: dataset rows -> rollout (agent flows against a Generator) -> rows ->
// old/ref log-probs and values -> rewards (KL in reward) -> advantages -> critic and actor
// updates -> update_weights (the engine gets the policy) -> metrics -> validation and checkpoints.
import { join } from 'node:path';
import * as torch from '../torch/index.js';
import { AdamW, type Tensor } from '../torch/index.js';
import type { DataParallel } from './data-parallel.js';
import { ZeroAdamW } from './zero-optimizer.js';
import type { CausalLM } from '../models/index.js';
import {
  checkSamples,
  formatSampleProblems,
  mcpServers,
  runRollout,
  type AgentSample,
  type ChatTokenizer,
  type Generator,
  type RolloutBatch,
  type SamplingParams,
} from '../agent/index.js';
import {
  advantageEstimators,
  applyKlPenalty,
  computeAdvantage,
  createKlController,
  maskedMean,
  placeStepRewards,
  policyLosses,
  type KlController,
} from '../rl/index.js';
import { Engine, engineMetrics } from '../engine/index.js';
import { UserError } from '../errors.js';
import { needsCritic, resolveTrainerOptions, type TrainerOptions, type TrainerOptionsInput } from './options.js';
import { stepsToRows, type TrainingRows } from './training-rows.js';
import { writeAdvantageDump } from './advantage-dump.js';
import { computeLogprobs, computeValues } from './logprobs.js';
import { updateActor } from './actor-update.js';
import { updateCritic } from './critic-update.js';
import { lrSchedule } from './schedule.js';
import { BatchSchedule } from './data.js';
import { JsonlSink, MetricsLog, TensorBoardSink, type MetricsSink } from './metrics.js';
import { trajectoryScores, validationMetrics } from './reward-metrics.js';
import { mixSeed, shuffled } from '../random.js';
import {
  checkpointToResume,
  loadCheckpoint,
  saveCheckpoint,
  stepDir,
  type CheckpointParts,
  type TrainerState,
} from './checkpoint.js';

/** A generator whose sampling can be reseeded (SamplingPolicy): the trainer reseeds it before each rollout. */
export interface Reseedable {
  reseed(seed: number): void;
}

/** A generator holding a KV cache it can give back between rollouts (Engine): `rollout.free_cache_engine`. */
export interface CacheReleasing {
  releaseCache(): void;
}

export interface TrainerComponents {
  /** The policy (actor). Its parameters are trained in place. */
  policy: CausalLM;
  /** Generates rollouts. An in-process engine shares the policy's parameter tensors (no copy). */
  generator: Generator & Partial<Reseedable> & Partial<CacheReleasing> & { metrics?(): Record<string, number> };
  /**
   * Data-parallel ranks (data-parallel.ts): this process rolls out and trains on its share of each
   * batch; gradients are summed over the ranks. Rank 0 alone writes metrics and checkpoints.
   */
  dataParallel?: DataParallel;
  tokenizer: ChatTokenizer;
  trainData: readonly AgentSample[];
  valData?: readonly AgentSample[];
  /** Frozen reference for use_kl_loss / use_kl_in_reward; a copy of the policy at the start when absent. */
  reference?: CausalLM;
  /** The critic (a value head) for gae / token_gae. */
  critic?: CausalLM;
  /**
   * Called in each step's update_weights phase with the policy and the version its weights now are
   * (the number of updates): push the weights to remote servers here.
   */
  syncWeights?: (policy: CausalLM, version: string) => void | Promise<void>;
  /** Called with each step's metrics (after they are written). */
  onMetrics?: (step: number, metrics: Record<string, number>) => void;
  /** Where the per-step console line goes when trainer.logger has console (default console.log; progress bars pass theirs). */
  printLine?: (line: string) => void;
  /** Called as work inside a step advances (trajectories ended, mini-batches updated): for progress bars. */
  onProgress?: (event: TrainingProgress) => void;
}

/** Progress inside a training step (1-based `step`; validation at step 0 runs before training). */
export interface TrainingProgress {
  step: number;
  phase: 'rollout' | 'validation' | 'update_critic' | 'update_actor';
  done: number;
  total: number;
}

/**
 * A frozen copy of a model (same class, cloned parameters, no grad). Under mixed precision the copy
 * computes in the model's compute dtype too, so a reference made from the policy gives the policy's
 * log-probs bit for bit until the first update (KL starts at 0).
 */
export function frozenCopy(model: CausalLM): CausalLM {
  const params = torch.noGrad(() => new Map([...model.params].map(([k, v]) => [k, torch.keep(v.detach().clone())])));
  const Model = model.constructor as new (...a: ConstructorParameters<typeof CausalLM>) => CausalLM;
  const copy = new Model(
    model.config,
    model.spec,
    params,
    model.hasLmHead,
    model.mixedPrecision ? { computeDtype: model.computeDtype } : {},
  );
  copy.attention = model.attention;
  return copy.requiresGrad_(false);
}

/** Per row of (B, L) host rewards: sum_j r * m. */
function rowSums(
  host: { tokenLevelRewards: Float64Array; responseMask: Float64Array },
  B: number,
  L: number,
): number[] {
  return Array.from({ length: B }, (_, i) => {
    let sum = 0;
    for (let j = 0; j < L; j++) sum += host.tokenLevelRewards[i * L + j] * host.responseMask[i * L + j];
    return sum;
  });
}

function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}

/** Why a rollout left no step to train on, in words: the trajectories' end reasons (with the first detail) and the non-finite rewards. */
function skipReason(batch: RolloutBatch, nonFinite: number): string {
  const counts = new Map<string, number>();
  for (const t of batch.trajectories) counts.set(t.endReason, (counts.get(t.endReason) ?? 0) + 1);
  const parts = [`${batch.trajectories.length} trajectories: ${[...counts].map(([r, k]) => `${k} ${r}`).join(', ')}`];
  const detail = batch.trajectories.find((t) => t.error ?? t.endDetail);
  if (detail) parts.push(`e.g. ${detail.error ?? detail.endDetail}`);
  if (nonFinite) parts.push(`${nonFinite} with a non-finite reward`);
  return parts.join('; ');
}

/** verl's perf/max_memory_{allocated,reserved}_gb on a CUDA device: the peaks since the last step's, in GiB. */
function deviceMemoryMetrics(device: string): Record<string, number> {
  if (!device.startsWith('cuda')) return {};
  const index = Number(device.split(':')[1] ?? 0);
  const stats = torch.cuda.memoryStats(index);
  torch.cuda.resetPeakMemoryStats(index);
  return {
    'perf/max_memory_allocated_gb': stats.peakAllocated / 2 ** 30,
    'perf/max_memory_reserved_gb': stats.peakReserved / 2 ** 30,
  };
}

export class Trainer implements Disposable {
  readonly options: TrainerOptions;
  /** Training steps done (the next step's 0-based index). */
  globalStep = 0;
  /** Steps run by this trainer (since fit() began), and those of them that updated the model (the others had no trainable step). */
  stepsRun = 0;
  stepsTrained = 0;
  /** Why the last skipped step had nothing to train on (the trajectories' end reasons, non-finite rewards). */
  lastSkipReason?: string;
  readonly actorOptimizer: AdamW | ZeroAdamW;
  readonly criticOptimizer?: AdamW | ZeroAdamW;
  readonly reference?: CausalLM;
  readonly schedule: BatchSchedule;
  readonly totalTrainingSteps: number;
  private readonly ownsReference: boolean;
  private readonly kl: KlController;
  private readonly log: MetricsLog;
  private readonly actorLr: (step: number) => number;
  private readonly criticLr: (step: number) => number;

  constructor(
    readonly components: TrainerComponents,
    input: TrainerOptionsInput,
  ) {
    this.options = resolveTrainerOptions(input);
    const o = this.options;
    // unknown names fail here, before any rollout (NotRegisteredError lists the registered ones)
    advantageEstimators.get(o.algorithm.advEstimator);
    policyLosses.get(o.actor.lossMode);
    // ... and so do rows naming an unknown flow, env or tool, listed with their indices
    for (const [name, rows] of [
      ['trainData', components.trainData],
      ['valData', components.valData ?? []],
    ] as const) {
      const problems = checkSamples(rows, {
        defaultAgentFlow: o.rollout.defaultAgentFlow,
        envKwargs: o.rollout.flow.envKwargs,
        mcpServers: o.rollout.flow.mcpServers,
      });
      if (problems.length)
        throw new UserError(
          `${new Set(problems.map((p) => p.index)).size} ${name} rows are refused:\n  ${formatSampleProblems(problems).join('\n  ')}`,
        );
    }
    const { policy } = components;
    if (!policy.namedParameters().some(([, p]) => p.requiresGrad)) policy.requiresGrad_(true);
    if (needsCritic(o.algorithm.advEstimator)) {
      if (!components.critic)
        throw new UserError(
          `algorithm.adv_estimator '${o.algorithm.advEstimator}' needs a critic (components.critic, a model with a value head)`,
        );
      if (!components.critic.hasValueHead)
        throw new UserError('the critic has no value head; create or load it with { valueHead: true }');
      if (!components.critic.namedParameters().some(([, p]) => p.requiresGrad)) components.critic.requiresGrad_(true);
    }
    const needRef = o.actor.useKlLoss || o.algorithm.useKlInReward;
    this.ownsReference = needRef && !components.reference;
    this.reference = needRef ? (components.reference ?? frozenCopy(policy)) : undefined;
    this.schedule = new BatchSchedule(components.trainData.length, o.data.trainBatchSize, o.data);
    this.totalTrainingSteps = o.trainer.totalTrainingSteps ?? this.schedule.stepsPerEpoch * o.trainer.totalEpochs;
    const dp = components.dataParallel;
    // with several ranks each keeps the AdamW state of its shard only (ZeRO-1)
    const adam = (m: CausalLM, opt: TrainerOptions['actor']['optim']) => {
      const params = m.namedParameters().filter(([, p]) => p.requiresGrad);
      const adamw = { lr: opt.lr, betas: opt.betas, weightDecay: opt.weightDecay };
      return dp ? new ZeroAdamW(params, adamw, dp) : new AdamW(params, adamw);
    };
    this.actorOptimizer = adam(policy, o.actor.optim);
    this.actorLr = lrSchedule(o.actor.optim, this.totalTrainingSteps);
    this.criticLr = lrSchedule(o.critic.optim, this.totalTrainingSteps);
    if (components.critic && needsCritic(o.algorithm.advEstimator))
      this.criticOptimizer = adam(components.critic, o.critic.optim);
    if (dp) {
      const w = dp.worldSize;
      const share = (key: string, v: number) => {
        if (v % w !== 0)
          throw new UserError(
            `${key}=${v} must divide evenly over the ${w} data-parallel ranks (each trains on ${key} / ${w})`,
          );
      };
      share('data.train_batch_size', o.data.trainBatchSize);
      share('actor_rollout_ref.actor.ppo_mini_batch_size', o.actor.ppoMiniBatchSize);
      if (this.criticOptimizer) share('critic.ppo_mini_batch_size', o.critic.ppoMiniBatchSize);
      // every rank starts from rank 0's weights (a fresh value head is random per process)
      dp.broadcastParams(policy.namedParameters().map(([, p]) => p));
      if (this.criticOptimizer) dp.broadcastParams(components.critic!.namedParameters().map(([, p]) => p));
    }
    this.kl = createKlController(o.algorithm.klCtrl);
    const sinks: MetricsSink[] = [];
    if (o.trainer.fileLoggerPath) sinks.push(new JsonlSink(o.trainer.fileLoggerPath, 'verl'));
    if (o.trainer.tensorboardDir) sinks.push(new TensorBoardSink(o.trainer.tensorboardDir));
    this.log = new MetricsLog({
      path: o.trainer.metricsPath,
      console: o.trainer.console,
      totalSteps: this.totalTrainingSteps,
      print: components.printLine,
      sinks,
    });
  }

  private get critic(): CausalLM | undefined {
    return this.criticOptimizer ? this.components.critic : undefined;
  }

  /** A (done, total) callback reporting `phase` of `step` to onProgress, if one is set. */
  private progress(
    step: number,
    phase: TrainingProgress['phase'],
  ): ((done: number, total: number) => void) | undefined {
    const report = this.components.onProgress;
    return report ? (done, total) => report({ step, phase, done, total }) : undefined;
  }

  /** Resumes (per resume_mode), validates first if asked, trains to totalTrainingSteps with validation and checkpoints. */
  async fit(): Promise<Record<string, number>> {
    // each MCP server the rows name is connected once for the whole run, not once per step
    const releaseMcp = mcpServers.hold();
    try {
      return await this.fitHeld();
    } finally {
      await releaseMcp();
    }
  }

  private async fitHeld(): Promise<Record<string, number>> {
    const t = this.options.trainer;
    const resumeFrom = checkpointToResume(t);
    if (resumeFrom) {
      this.loadCheckpoint(resumeFrom);
      // the steps after the checkpoint are trained again: their old metrics lines go
      const cut = this.log.cutAfter(this.globalStep);
      if (t.console)
        (this.components.printLine ?? console.log)(
          `resumed from ${resumeFrom} at step ${this.globalStep}${cut ? `; ${cut} metrics lines past it removed` : ''}`,
        );
    } else {
      this.log.startFresh();
    }
    this.stepsRun = 0;
    this.stepsTrained = 0;
    let last: Record<string, number> = {};
    if ((t.valBeforeTrain || t.valOnly) && this.components.valData?.length) {
      last = await this.validate();
      this.log.write(this.globalStep, last);
    }
    if (t.valOnly) return last;
    while (this.globalStep < this.totalTrainingSteps) last = await this.trainStep();
    return last;
  }

  /**
   * The dataset rows of training step `step` (this rank's share of them, with data parallelism: its
   * consecutive slice of whole prompts). Every rank's data position is a function of the step alone,
   * so a checkpoint's globalStep is all a resume with any number of ranks needs.
   */
  batchAt(step: number): AgentSample[] {
    let indices = this.schedule.batch(step).indices;
    const dp = this.components.dataParallel;
    if (dp) {
      const share = indices.length / dp.worldSize;
      indices = indices.slice(dp.rank * share, (dp.rank + 1) * share);
    }
    return indices.map((i) => this.components.trainData[i]);
  }

  /** Rank 0 (or the only process): the one that writes metrics and checkpoints. */
  private get leads(): boolean {
    return (this.components.dataParallel?.rank ?? 0) === 0;
  }

  private parts(): CheckpointParts {
    const parts: CheckpointParts = { actor: { model: this.components.policy, optimizer: this.actorOptimizer } };
    if (this.critic && this.criticOptimizer) parts.critic = { model: this.critic, optimizer: this.criticOptimizer };
    return parts;
  }

  /**
   * Saves global_step_N under trainer.default_local_dir (or `root`); returns the folder. With data
   * parallelism every rank calls it: the ZeRO-1 optimizers gather their shards to rank 0, which
   * alone writes (the checkpoint holds the whole state, as one process writes it).
   */
  saveCheckpoint(root = this.options.trainer.defaultLocalDir): string {
    for (const opt of [this.actorOptimizer, this.criticOptimizer]) if (opt instanceof ZeroAdamW) opt.consolidateState();
    const state: TrainerState = { globalStep: this.globalStep, klCoef: this.kl.value };
    if (!this.leads) return stepDir(root, this.globalStep);
    return saveCheckpoint(root, this.parts(), state, { maxToKeep: this.options.trainer.maxCkptToKeep });
  }

  /** Restores weights, optimizer states and the step counter from a global_step_N folder. */
  loadCheckpoint(dir: string): void {
    const state = loadCheckpoint(dir, this.parts());
    this.globalStep = state.globalStep;
    if (state.klCoef !== undefined) (this.kl as { value: number }).value = state.klCoef;
  }

  /** One training step on the next batch; returns (and logs) its metrics. */
  async trainStep(): Promise<Record<string, number>> {
    const o = this.options;
    const step = this.globalStep;
    const started = performance.now();
    const { epoch } = this.schedule.batch(step);
    // Rollout randomness per step from the seed: a generator's own stream (reseed), and libtorch's
    // global generators (an in-process Engine samples from them), so a resumed run repeats it.
    // Each data-parallel rank has streams of its own (rank 0 those of a single process): with one
    // stream on every rank, the k-th request of each would sample with the same seed.
    const rank = this.components.dataParallel?.rank ?? 0;
    const seed = (tag: number) => (rank ? mixSeed(o.data.seed, tag, step, rank) : mixSeed(o.data.seed, tag, step));
    this.components.generator.reseed?.(seed(0x5eed));
    torch.manualSeed(seed(0x70c4));
    // an in-process engine's step counts and timings over this rollout: rollout/engine/...
    const engine = this.components.generator instanceof Engine ? this.components.generator : null;
    const engineBefore = engine?.stats;
    const rollout = await runRollout(this.batchAt(step), {
      generator: this.components.generator,
      tokenizer: this.components.tokenizer,
      sampling: o.rollout.sampling,
      config: o.rollout.flow,
      n: o.rollout.n,
      defaultAgentFlow: o.rollout.defaultAgentFlow,
      concurrency: o.rollout.concurrency,
      rewardFnKey: o.rollout.rewardFnKey,
      rewardFunction: o.rollout.rewardFunction,
      // the weights after `step` updates generate this rollout (a remote server reports its own)
      policyVersion: String(step),
      onTrajectoryEnd: this.progress(step + 1, 'rollout'),
      // `<rollout_data_dir>/<global_step>.jsonl`, the step being trained counted from 1 (verl's global_steps).
      ...(o.trainer.rolloutDataDir
        ? { dumpPath: join(o.trainer.rolloutDataDir, `${step + 1}.jsonl`), dumpStep: step + 1, deferDump: true }
        : {}),
    });
    // free_cache_engine: the training phase gets the KV cache's memory; the next rollout takes it again
    if (o.rollout.freeCacheEngine) this.components.generator.releaseCache?.();
    const rolloutSeconds = (performance.now() - started) / 1000;
    // the dump is not generation: timed on its own, as verl's timing_s/dump_rollout_generations
    let dumpSeconds: number | undefined;
    if (rollout.writeDump) {
      const t0 = performance.now();
      rollout.writeDump();
      dumpSeconds = (performance.now() - t0) / 1000;
    }
    const metrics: Record<string, number> = {
      ...rollout.metrics,
      ...this.components.generator.metrics?.(),
      ...(engine && engineBefore ? engineMetrics(engineBefore, engine.stats) : {}),
      'training/epoch': epoch,
      'training/global_step': step + 1,
      ...(dumpSeconds !== undefined ? { 'timing_s/dump_rollout_generations': dumpSeconds } : {}),
    };
    // Means over trajectories with a finite reward; failed ones are `rollout/num_failed` (see trajectoryScores).
    metrics['reward/trajectory_mean'] = mean(trajectoryScores(rollout).scored.map((t) => t.score));
    // A reward function that returned NaN/Infinity spoils its trajectory, not the batch.
    const spoiled = new Set(rollout.steps.filter((x) => !Number.isFinite(x.rewardScore)).map((x) => x.trajectoryUid));
    const steps = spoiled.size ? rollout.steps.filter((x) => !spoiled.has(x.trajectoryUid)) : rollout.steps;
    metrics['training/dropped_nonfinite_reward'] = spoiled.size;
    let skipNote: string | undefined;
    const dp = this.components.dataParallel;
    // with data parallelism the ranks skip together (a lone skipper would leave the others waiting)
    const fewestSteps = dp ? dp.min([steps.length])[0] : steps.length;
    if (fewestSteps === 0) {
      metrics['training/skipped_batch'] = 1;
      this.lastSkipReason = skipReason(rollout, spoiled.size);
      skipNote = `skipped: nothing to train on (${this.lastSkipReason})`;
    } else {
      const rows = stepsToRows(steps, { device: this.components.policy.device, dtype: o.trainer.rlDtype });
      try {
        Object.assign(metrics, this.update(rows, step));
      } finally {
        rows.dispose();
      }
      metrics['training/skipped_batch'] = 0;
      this.stepsTrained++;
    }
    this.stepsRun++;
    const updated = await this.updateWeights(String(step + 1));
    if (updated !== undefined) metrics['timing_s/update_weights'] = updated;
    this.globalStep = step + 1;
    metrics['timing_s/gen'] = rolloutSeconds;
    const t = o.trainer;
    const last = this.globalStep >= this.totalTrainingSteps;
    if (t.testFreq > 0 && this.components.valData?.length && (this.globalStep % t.testFreq === 0 || last))
      Object.assign(metrics, await this.validate());
    metrics['timing_s/step'] = (performance.now() - started) / 1000;
    Object.assign(metrics, deviceMemoryMetrics(this.components.policy.device));
    // The step's metrics line goes before its checkpoint: a run killed between the two resumes from
    // the previous checkpoint and cuts this line (cutAfter); the other order could leave a
    // checkpoint whose step has no line, which a resume would never write.
    this.log.write(this.globalStep, metrics, skipNote);
    // every rank: ZeRO-1 optimizers gather their state to rank 0, which writes
    if (t.saveFreq > 0 && (this.globalStep % t.saveFreq === 0 || last)) this.saveCheckpoint();
    this.components.onMetrics?.(this.globalStep, metrics);
    return metrics;
  }

  /**
   * The step's update_weights phase (verl's weight sync to the rollout engine), after the updates and
   * before validation: the generator serves the updated policy from the next rollout on. An in-process
   * `Engine` takes it through `Generator.updateWeights`; remote servers through `syncWeights`, with
   * `version`. Returns its seconds (`timing_s/update_weights`), or undefined when neither is there.
   */
  private async updateWeights(version: string): Promise<number | undefined> {
    const { generator, policy, syncWeights } = this.components;
    if (!generator.updateWeights && !syncWeights) return undefined;
    const started = performance.now();
    await generator.updateWeights?.(policy);
    await syncWeights?.(policy, version);
    return (performance.now() - started) / 1000;
  }

  /** Everything after the rollout, inside one scope: no tensor outlives the step. */
  private update(rows: TrainingRows, step: number): Record<string, number> {
    const o = this.options;
    const temperature =
      o.rollout.sampling.temperature && o.rollout.sampling.temperature > 0 ? o.rollout.sampling.temperature : 1;
    const dtype = o.trainer.rlDtype;
    const forward = { microBatchSize: o.rollout.logProbMicroBatchSize, maxTokens: o.rollout.logProbMaxTokenLen, dtype };
    const refForward = {
      microBatchSize: o.ref.logProbMicroBatchSize,
      maxTokens: o.ref.logProbMaxTokenLen,
      dtype,
      temperature,
    };
    const valuesForward = {
      microBatchSize: o.critic.forwardMicroBatchSize,
      maxTokens: o.critic.forwardMaxTokenLen,
      dtype,
    };
    return torch.scope(() => {
      const metrics: Record<string, number> = {};
      const timed = <T>(name: string, fn: () => T): T => {
        const t0 = performance.now();
        try {
          return fn();
        } finally {
          metrics[`timing_s/${name}`] = (performance.now() - t0) / 1000;
        }
      };
      let oldLogprobs: Tensor;
      if (o.rollout.recomputeOldLogprobs) {
        oldLogprobs = timed('old_log_prob', () =>
          computeLogprobs(this.components.policy, rows, { ...forward, temperature }),
        );
      } else {
        if (!rows.rolloutLogprobs)
          throw new UserError('rollout.recompute_old_logprobs is off but the generator returned no logprobs');
        oldLogprobs = rows.rolloutLogprobs.to(dtype);
      }
      if (rows.rolloutLogprobs && o.rollout.calculateLogProbs) {
        metrics['training/rollout_probs_diff_mean'] = torch.noGrad(() =>
          maskedMean(oldLogprobs.sub(rows.rolloutLogprobs!.to(dtype)).abs(), rows.responseMask.to(dtype)).item(),
        );
      }
      const refLogprobs = this.reference
        ? timed('ref', () => computeLogprobs(this.reference!, rows, refForward))
        : undefined;
      const values = this.critic ? timed('values', () => computeValues(this.critic!, rows, valuesForward)) : undefined;

      // Rewards go one way: placed on the host, where the rollout left them, then to the device once.
      // The estimators read the host copy unless the KL penalty (computed on the device) changed them.
      const placed = placeStepRewards(rows.stepRewards, rows.responseMask, { dtype, hostMask: rows.hostResponseMask });
      Object.assign(metrics, placed.metrics);
      let rewards = placed.tokenLevelRewards;
      let hostRewards: typeof placed.host | undefined = placed.host;
      if (o.algorithm.useKlInReward) {
        hostRewards = undefined;
        const r = applyKlPenalty(
          { tokenLevelScores: rewards, oldLogprobs, refLogprobs: refLogprobs!, responseMask: rows.responseMask },
          this.kl,
          o.algorithm.klPenalty,
        );
        rewards = r.tokenLevelRewards;
        Object.assign(metrics, r.metrics);
      }
      const adv = timed('adv', () =>
        computeAdvantage(
          o.algorithm.advEstimator,
          {
            tokenLevelRewards: rewards,
            responseMask: rows.responseMask,
            trajectoryUid: rows.trajectoryUid,
            stepIndex: rows.stepIndex,
            groupUid: rows.groupUid,
            values,
            anchors: rows.anchors,
            host: hostRewards,
            // whitening (gae, token_gae, reinforce_plus_plus) over the global batch, not this rank's share
            ...(this.components.dataParallel ? { sumAcrossRanks: (v) => this.components.dataParallel!.sum(v) } : {}),
          },
          o.algorithm,
        ),
      );
      for (const [k, v] of Object.entries(adv.metrics)) metrics[`adv/${k}`] = v;
      const m = rows.responseMask.to(dtype);
      torch.noGrad(() => {
        const real = <T>(xs: readonly T[]) => xs.filter((_, i) => !rows.padding[i]);
        const scores = real(rows.stepRewards);
        const rowRewards = hostRewards ? rowSums(hostRewards, rows.size, rows.width) : rewards.mul(m).sum(-1).toArray();
        Object.assign(metrics, {
          'critic/score/mean': mean(scores),
          'critic/score/max': Math.max(...scores),
          'critic/score/min': Math.min(...scores),
          'critic/rewards/mean': mean(real(rowRewards)),
          'critic/advantages/mean': maskedMean(adv.advantages, m).item(),
          'critic/returns/mean': maskedMean(adv.returns, m).item(),
          'response_length/mean': mean(real(rows.responseLengths)),
          'response_length/max': Math.max(...real(rows.responseLengths)),
          'prompt_length/mean': mean(real(rows.promptLengths)),
          'prompt_length/max': Math.max(...real(rows.promptLengths)),
          'training/num_rows': scores.length,
        });
        if (values) metrics['critic/values/mean'] = maskedMean(values, m).item();
        if (o.trainer.rolloutDataDir)
          writeAdvantageDump(join(o.trainer.rolloutDataDir, `${step + 1}.advantages.jsonl`), rows, adv.advantages, m);
      });

      const n = o.rollout.n;
      if (this.critic && this.criticOptimizer) {
        const cm = timed('update_critic', () =>
          updateCritic(this.critic!, this.criticOptimizer!, { rows, values: values!, returns: adv.returns }, o.critic, {
            lr: this.criticLr(step),
            n,
            advEstimator: o.algorithm.advEstimator,
            onMiniBatch: this.progress(step + 1, 'update_critic'),
            dataParallel: this.components.dataParallel,
          }),
        );
        for (const [k, v] of Object.entries(cm)) metrics[`critic/${k}`] = v;
      }
      // verl: `if critic_warmup <= global_steps` (global_steps counts from 1)
      if (o.critic.warmup <= step + 1) {
        const am = timed('update_actor', () =>
          updateActor(
            this.components.policy,
            this.actorOptimizer,
            { rows, oldLogprobs, advantages: adv.advantages, refLogprobs },
            o.actor,
            {
              lr: this.actorLr(step),
              n,
              temperature,
              onMiniBatch: this.progress(step + 1, 'update_actor'),
              dataParallel: this.components.dataParallel,
            },
          ),
        );
        for (const [k, v] of Object.entries(am)) metrics[`actor/${k}`] = v;
      }
      return metrics;
    });
  }

  /**
   * Validation (greedy by default, n = val_kwargs.n): `val/reward_mean` over the trajectories that
   * have a finite reward, the failed and dropped ones counted as in training (`val/num_failed`,
   * `val/num_no_steps`, `val/dropped_nonfinite_reward`), and verl's `val-core/<data_source>/reward/
   * mean@N`, `best@N`, `maj@N` (and `val-aux/...`). Dumped to `<validation_data_dir>/<global_step>.jsonl`
   * when set, the step being the number of steps trained so far (verl's global_steps at validation).
   */
  async validate(): Promise<Record<string, number>> {
    const data = this.components.valData ?? [];
    if (data.length === 0) return {};
    const o = this.options;
    this.components.generator.reseed?.(mixSeed(o.data.seed, 0x7a1, this.globalStep));
    const sampling: SamplingParams = o.rollout.valSampling;
    const dir = o.trainer.validationDataDir;
    // data.validation_shuffle: the rows in a seeded order; data.val_batch_size: at most that many
    // prompts (x val n trajectories) in flight at once, as verl's validation batches bound them.
    const rows = o.data.validationShuffle ? shuffled([...data], mixSeed(o.data.seed, 0x5a1)) : data;
    const concurrency = o.data.valBatchSize
      ? Math.min(o.rollout.concurrency ?? Number.POSITIVE_INFINITY, o.data.valBatchSize * o.rollout.valN)
      : o.rollout.concurrency;
    const rollout = await runRollout(rows, {
      generator: this.components.generator,
      tokenizer: this.components.tokenizer,
      sampling,
      config: o.rollout.flow,
      n: o.rollout.valN,
      defaultAgentFlow: o.rollout.defaultAgentFlow,
      concurrency,
      rewardFnKey: o.rollout.rewardFnKey,
      rewardFunction: o.rollout.rewardFunction,
      onTrajectoryEnd: this.progress(this.globalStep, 'validation'),
      ...(dir ? { dumpPath: join(dir, `${this.globalStep}.jsonl`), dumpStep: this.globalStep } : {}),
    });
    if (o.rollout.freeCacheEngine) this.components.generator.releaseCache?.();
    this.printValGenerations(rollout);
    const { scored, failed, noSteps, nonFinite } = trajectoryScores(rollout);
    return {
      'val/reward_mean': mean(scored.map((t) => t.score)),
      'val/num_trajectories': rollout.trajectories.length,
      'val/num_failed': failed,
      'val/num_no_steps': noSteps,
      'val/dropped_nonfinite_reward': nonFinite,
      ...validationMetrics(scored),
    };
  }

  /**
   * `trainer.log_val_generations`: prints that many validation samples (input, output, score), picked
   * as verl picks them: sorted by input, then a shuffle with a fixed seed.
   */
  private printValGenerations(rollout: RolloutBatch): void {
    const count = this.options.trainer.logValGenerations;
    if (count <= 0) return;
    const byTrajectory = new Map<string, RolloutBatch['steps']>();
    for (const s of rollout.steps)
      (byTrajectory.get(s.trajectoryUid) ?? byTrajectory.set(s.trajectoryUid, []).get(s.trajectoryUid)!).push(s);
    const samples = [...byTrajectory.values()].map((steps) => ({
      input: this.components.tokenizer.decode(steps[0].promptIds, { skipSpecialTokens: true }),
      output: this.components.tokenizer.decode(steps[steps.length - 1].responseIds, { skipSpecialTokens: true }),
      score: steps.reduce((a, s) => a + s.rewardScore, 0),
    }));
    samples.sort((a, b) => (a.input < b.input ? -1 : a.input > b.input ? 1 : 0));
    const picked = shuffled(samples, 42).slice(0, count);
    const lines = picked.map(
      (p, i) =>
        `val sample ${i + 1}/${picked.length} (score ${p.score}):\n  input: ${JSON.stringify(p.input)}\n  output: ${JSON.stringify(p.output)}`,
    );
    console.log(`validation samples at step ${this.globalStep}:\n${lines.join('\n')}`);
  }

  /** Frees the optimizer states and a reference the trainer made (not the models it was given). */
  dispose(): void {
    this.actorOptimizer.dispose();
    this.criticOptimizer?.dispose();
    if (this.ownsReference) this.reference?.dispose();
  }
  [Symbol.dispose](): void {
    this.dispose();
  }
}
