// The update loop actor and critic share: ppo_epochs x mini-batches x micro-batches, one
// forwardBackward per micro-batch with mini-batch-wide loss denominators, then grad-norm clipping
// and one optimizer step per mini-batch. Mini-batches are counted as verl and Agent-R1 count them:
// ppo_mini_batch_size prompts x rollout.n rows, where every agent step is a row, so a multi-step
// batch gets more optimizer steps than it has prompt groups.
import * as torch from '../torch/index.js';
import type { Optimizer, Tensor } from '../torch/index.js';
import type { CausalLM, LossInputs } from '../models/index.js';
import { packRows, type PackedRows, type TrainingRows } from './training-rows.js';
import { mixSeed, shuffled } from '../random.js';
import { aggDenominators } from '../rl/index.js';
import type { UpdateOptions } from './options.js';
import type { DataParallel } from './data-parallel.js';
import { ZeroAdamW } from './zero-optimizer.js';

/**
 * Mini-batches of row indices: the batch's real rows in order (padding rows left out), cut into
 * consecutive runs of `rowsPerMiniBatch` (verl's `ppo_mini_batch_size x rollout.n`; the last run may
 * be shorter, as Agent-R1 allows). With `shuffle` the order of the mini-batches is permuted from the
 * seed (Agent-R1 permutes mini-batch ids per epoch; the rows inside a mini-batch stay together).
 */
export function miniBatches(
  rows: TrainingRows,
  rowsPerMiniBatch: number,
  o: { shuffle?: boolean; seed?: number } = {},
): number[][] {
  const real = Array.from({ length: rows.size }, (_, i) => i).filter((i) => !rows.padding[i]);
  const out: number[][] = [];
  for (let s = 0; s < real.length; s += rowsPerMiniBatch) out.push(real.slice(s, s + rowsPerMiniBatch));
  return o.shuffle ? shuffled(out, o.seed ?? 0) : out;
}

/**
 * Consecutive micro-batches of at most `size` rows (0: one micro-batch), or, with `maxTokens`
 * (verl's use_dynamic_bsz), of at most that many packed tokens (`lengths[i]` per row; a longer
 * row goes alone). Padding rows (length 0) cost nothing.
 */
export function microBatches(
  indices: readonly number[],
  size: number,
  o: { maxTokens?: number; lengths?: readonly number[] } = {},
): number[][] {
  if (o.maxTokens !== undefined && o.lengths) {
    const out: number[][] = [];
    let current: number[] = [];
    let tokens = 0;
    for (const i of indices) {
      const n = o.lengths[i];
      if (current.length > 0 && tokens + n > o.maxTokens) {
        out.push(current);
        current = [];
        tokens = 0;
      }
      current.push(i);
      tokens += n;
    }
    if (current.length) out.push(current);
    return out;
  }
  if (!(size > 0) || size >= indices.length) return [[...indices]];
  const out: number[][] = [];
  for (let s = 0; s < indices.length; s += size) out.push(indices.slice(s, s + size));
  return out;
}

/** What a micro-batch's loss returns: the loss and metrics, and how to combine them. */
export interface MicroLoss {
  loss: Tensor;
  /** Summed over the mini-batch's micro-batches (each is its share of the mini-batch value). */
  sums?: Record<string, number>;
  /** Averaged over micro-batches, weighted by `weight`. */
  means?: Record<string, number>;
  /** Weight of `means` (e.g. the micro-batch's action tokens). */
  weight?: number;
}

export interface PpoLoopOptions extends UpdateOptions {
  gradClip: number;
  lr: number;
  /** `rollout.n`: rows per prompt, so a mini-batch is `ppoMiniBatchSize x n` rows. */
  n: number;
  forward: { temperature?: number; withEntropy?: boolean; withValues?: boolean };
  /** Called after each mini-batch's optimizer step (taken or skipped): how many of how many. */
  onMiniBatch?: (done: number, total: number) => void;
  /** Data-parallel ranks: denominators and gradients are summed over them (data-parallel.ts). */
  dataParallel?: DataParallel;
}

export interface RankReduce {
  sum(values: readonly number[]): number[];
  max(values: readonly number[]): number[];
}

/** Loss denominators of a mini-batch's rows (`aggDenominators`), global over the data-parallel ranks. */
export function miniBatchDenominators(
  responseMask: Tensor,
  overRanks: RankReduce,
): { numTokens: number; numSeqs: number; lossScaleFactor: number } {
  const local = torch.scope(() => aggDenominators(responseMask));
  const [numTokens, numSeqs] = overRanks.sum([local.numTokens, local.numSeqs]);
  const [lossScaleFactor] = overRanks.max([local.lossScaleFactor]);
  return { numTokens, numSeqs, lossScaleFactor };
}

/**
 * Per mini-batch (its row indices): a function making its micro-batch losses. The model reads out
 * only the micro-batch's response positions (`micro.positions`): the loss inputs are [P], mapped
 * to (b, L) with `responsesAt`. It may compute
 * numbers (denominators) up front but must not hold tensors past the call.
 */
export type MiniBatchLoss = (
  miniBatch: readonly number[],
  /** Reduces numbers over the data-parallel ranks (the identity on one process): global denominators. */
  overRanks: RankReduce,
) => (inputs: LossInputs, micro: PackedRows, indices: readonly number[]) => MicroLoss;

/**
 * Sums the mini-batch's gradients over the data-parallel ranks (ZeRO-1: reduce-scattered into each
 * rank's shard; else all-reduced) and clips them to a global L2 norm of `maxNorm`; returns the norm.
 */
function sumAndClipGrads(
  optimizer: Optimizer,
  params: [string, Tensor][],
  dp: DataParallel | undefined,
  maxNorm: number,
): number {
  if (optimizer instanceof ZeroAdamW) return optimizer.reduceAndClipGrads(maxNorm);
  if (dp) dp.allReduceGrads(params.map(([, p]) => p));
  return torch.clipGradNorm(params, maxNorm);
}

/**
 * Runs the loop and returns metrics averaged over the optimizer steps: the loss's own, plus
 * `grad_norm`, `lr`, and `skipped_steps` (mini-batches whose gradient norm was not finite:
 * no step, as verl).
 */
export function ppoLoop(
  model: CausalLM,
  optimizer: Optimizer,
  rows: TrainingRows,
  o: PpoLoopOptions,
  lossFor: MiniBatchLoss,
): Record<string, number> {
  const params = model.namedParameters().filter(([, p]) => p.requiresGrad);
  const totals: Record<string, number> = {};
  let steps = 0;
  let skipped = 0;
  optimizer.lr = o.lr;
  const dp = o.dataParallel;
  // each rank holds 1/world of the prompts: its mini-batches are that share of the global ones
  const rowsPerMini = Math.max(1, Math.round((o.ppoMiniBatchSize * o.n) / (dp?.worldSize ?? 1)));
  const epochs = Array.from({ length: o.ppoEpochs }, (_, epoch) =>
    miniBatches(rows, rowsPerMini, { shuffle: o.shuffle, seed: mixSeed(o.dataLoaderSeed, epoch) }),
  );
  if (dp) {
    // every rank runs as many mini-batches as the rank with the most: collectives pair up
    const most = dp.max(epochs.map((m) => m.length));
    epochs.forEach((minis, e) => {
      while (minis.length < most[e]) minis.push([]);
    });
  }
  const overRanks: RankReduce = dp ? dp : { sum: (xs) => [...xs], max: (xs) => [...xs] };
  const total = epochs.reduce((count, minis) => count + minis.length, 0);
  for (const minis of epochs) {
    for (const mini of minis) {
      const sums: Record<string, number> = {};
      const means: Record<string, number> = {};
      let weight = 0;
      const microLoss = lossFor(mini, overRanks);
      const lengths = rows.sequences.map((q) => q.length);
      const micros = microBatches(
        mini,
        o.ppoMicroBatchSizePerGpu,
        o.useDynamicBsz ? { maxTokens: o.ppoMaxTokenLenPerGpu, lengths } : {},
      );
      for (const indices of micros) {
        torch.scope(() => {
          using p = packRows(rows, indices);
          if (!p.packed) return;
          let out: MicroLoss | undefined;
          model.forwardBackward(
            p.packed,
            (inputs) => {
              out = microLoss(inputs, p, indices);
              return out.loss;
            },
            { ...o.forward, gradientCheckpointing: o.gradientCheckpointing, positions: p.positions },
          );
          for (const [k, v] of Object.entries(out!.sums ?? {})) sums[k] = (sums[k] ?? 0) + v;
          const w = out!.weight ?? 1;
          weight += w;
          for (const [k, v] of Object.entries(out!.means ?? {})) means[k] = (means[k] ?? 0) + v * w;
        });
      }
      const gradNorm = sumAndClipGrads(optimizer, params, dp, o.gradClip);
      if (Number.isFinite(gradNorm)) {
        optimizer.step();
        // mixed precision: the next mini-batch's forward reads the compute copies of the masters (the
        // engine gets the weights in the trainer's update_weights phase, not here)
        model.refreshComputeWeights();
      } else skipped++;
      optimizer.zeroGrad();
      steps++;
      for (const [k, v] of Object.entries(sums)) totals[k] = (totals[k] ?? 0) + v;
      for (const [k, v] of Object.entries(means)) totals[k] = (totals[k] ?? 0) + (weight > 0 ? v / weight : 0);
      totals.grad_norm = (totals.grad_norm ?? 0) + gradNorm;
      o.onMiniBatch?.(steps, total);
    }
  }
  const metrics: Record<string, number> = {};
  for (const [k, v] of Object.entries(totals)) metrics[k] = steps > 0 ? v / steps : 0;
  metrics.lr = o.lr;
  metrics.skipped_steps = skipped;
  metrics.optimizer_steps = steps - skipped;
  return metrics;
}
