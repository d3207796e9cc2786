// ZeRO-1 (stage 1 of Rajbhandari et al. 2020; torch's ZeroRedundancyOptimizer): AdamW whose state
// (exp_avg, exp_avg_sq) each of the N data-parallel ranks keeps for 1/N of the parameters only.
// The parameters lie end to end in flat buckets (one device and dtype each, at most BUCKET_ELEMENTS);
// a bucket is padded to a multiple of N and rank r owns its r-th slice. Per optimizer step:
//   1. the gradients are reduce-scattered: each rank receives the sum over ranks of its slice only
//      (and the full gradients are dropped);
//   2. the global grad norm is one all-reduce of the slices' sums of squares; each rank clips its slice;
//   3. each rank steps its slice with AdamW, whose update is elementwise, so slicing changes no
//      number, and the slices are all-gathered into every rank's full parameters.
// A reduce-scatter plus an all-gather moves as many bytes as DDP's one all-reduce.
//
// Checkpoints keep the unsharded format (per-parameter `<name>.exp_avg`, `.exp_avg_sq`, `.step`, as
// AdamW writes): `consolidateState()`, which every rank joins, gathers the slices on rank 0, which
// writes them; `loadStateTensors` takes per-parameter tensors and keeps this rank's slices. So a
// checkpoint resumes on any number of ranks, or on one process with AdamW.
//
// Under mixed precision the model's parameters are the fp32 masters and stay whole on every rank
// (forwards read their compute copies, refreshed from them); this rank's slice of them is what it steps.
import * as torch from '../torch/index.js';
import { AdamW, Optimizer, type AdamWOptions, type NamedParams, type Tensor } from '../torch/index.js';
import { UserError } from '../errors.js';
import { BUCKET_ELEMENTS, type DataParallel } from './data-parallel.js';

interface Bucket {
  params: NamedParams;
  /** Where each parameter starts in the flat bucket. */
  offsets: number[];
  numel: number;
  /** Elements per rank's slice: ceil(numel / N). */
  sliceSize: number;
  /** This rank's slice of the flat parameters (what AdamW steps; refreshed from the parameters before a step). */
  slice: Tensor;
}

const STATE_KEYS = ['exp_avg', 'exp_avg_sq'] as const;

/** Bytes as `83204 bytes (0.08 MiB)`. */
function bytesText(bytes: number): string {
  return `${bytes} bytes (${(bytes / 2 ** 20).toFixed(2)} MiB)`;
}

export class ZeroAdamW extends Optimizer {
  private readonly buckets: Bucket[] = [];
  /** AdamW over this rank's slices, named `bucket<i>`. */
  private readonly shard: AdamW;
  /** Rank 0's gathered per-parameter state, between consolidateState() and saveState(). */
  private consolidated: Map<string, Tensor> | null = null;

  constructor(
    params: NamedParams,
    opts: AdamWOptions,
    readonly dataParallel: DataParallel,
    /** Most elements per bucket (a smaller one makes several buckets of a tiny model, for tests). */
    bucketElements = BUCKET_ELEMENTS,
  ) {
    super(params, opts.lr);
    const n = dataParallel.worldSize;
    const byKind = new Map<string, NamedParams>();
    for (const e of this.params) {
      const k = `${e[1].device}/${e[1].dtype}`;
      (byKind.get(k) ?? byKind.set(k, []).get(k)!).push(e);
    }
    for (const group of byKind.values()) {
      let current: NamedParams = [];
      let size = 0;
      const close = () => {
        if (current.length === 0) return;
        const sliceSize = Math.ceil(size / n);
        const p0 = current[0][1];
        const slice = torch.keep(torch.zeros([sliceSize], { dtype: p0.dtype, device: p0.device }));
        const offsets: number[] = [];
        let at = 0;
        for (const [, p] of current) {
          offsets.push(at);
          at += p.numel;
        }
        this.buckets.push({ params: current, offsets, numel: size, sliceSize, slice });
        current = [];
        size = 0;
      };
      for (const e of group) {
        if (size > 0 && size + e[1].numel > bucketElements) close();
        current.push(e);
        size += e[1].numel;
      }
      close();
    }
    this.shard = new AdamW(
      this.buckets.map((b, i): [string, Tensor] => [`bucket${i}`, b.slice]),
      opts,
    );
  }

  private get rank(): number {
    return this.dataParallel.rank;
  }

  /**
   * For each parameter of `b` that overlaps this rank's slice: the parameter (flat), where the overlap
   * starts in it, where it starts in the slice, and its length.
   */
  private overlaps(b: Bucket): { param: Tensor; from: number; to: number; length: number }[] {
    const lo = this.rank * b.sliceSize;
    const hi = lo + b.sliceSize;
    const out: { param: Tensor; from: number; to: number; length: number }[] = [];
    b.params.forEach(([, p], i) => {
      const start = Math.max(lo, b.offsets[i]);
      const end = Math.min(hi, b.offsets[i] + p.numel);
      if (start < end) out.push({ param: p, from: start - b.offsets[i], to: start - lo, length: end - start });
    });
    return out;
  }

  /** The flat bucket of `values` (one per parameter of `b`), zero-padded to N slices. */
  private flat(b: Bucket, values: Tensor[]): Tensor {
    const pad = b.sliceSize * this.dataParallel.worldSize - b.numel;
    const parts = values.map((v) => v.reshape(-1));
    if (pad > 0) parts.push(torch.zeros([pad], { dtype: b.slice.dtype, device: b.slice.device }));
    return torch.cat(parts);
  }

  /**
   * Sums the gradients over the ranks into this rank's slices (a reduce-scatter per bucket; a
   * parameter without a gradient counts as zero), drops the full gradients, and clips the slices
   * to a global L2 norm of `maxNorm`. Returns the norm before clipping (not finite: left as is).
   */
  reduceAndClipGrads(maxNorm: number): number {
    const group = this.dataParallel.group;
    let localSq = 0;
    torch.noGrad(() => {
      for (const b of this.buckets) {
        torch.scope(() => {
          const grads = b.params.map(([, p]) => p.grad ?? torch.zerosLike(p));
          const summed = torch.zeros([b.sliceSize], { dtype: b.slice.dtype, device: b.slice.device });
          group.reduceScatterInto(summed, this.flat(b, grads), 'sum');
          b.slice.grad = summed;
          localSq += summed.double().pow(2).sum().item();
        });
        for (const [, p] of b.params) p.grad = null;
      }
    });
    const total = Math.sqrt(this.dataParallel.sum([localSq])[0]);
    if (!Number.isFinite(total)) return total;
    // as clipGradNorm
    const coef = maxNorm / (total + 1e-6);
    if (coef < 1)
      torch.noGrad(() =>
        torch.scope(() => {
          for (const b of this.buckets) b.slice.grad!.mul_(coef);
        }),
      );
    return total;
  }

  override zeroGrad(): void {
    super.zeroGrad();
    this.shard.zeroGrad();
  }

  /** Steps this rank's slices (after reduceAndClipGrads) and all-gathers them into every rank's parameters. */
  step(): void {
    const group = this.dataParallel.group;
    torch.noGrad(() => {
      // the parameters are the truth (a checkpoint load or a broadcast may have changed them)
      for (const b of this.buckets)
        torch.scope(() => {
          for (const o of this.overlaps(b))
            b.slice.narrow(0, o.to, o.length).copy_(o.param.reshape(-1).narrow(0, o.from, o.length));
        });
      this.shard.lr = this.lr;
      this.shard.step();
      for (const b of this.buckets)
        torch.scope(() => {
          const full = torch.empty([b.sliceSize * this.dataParallel.worldSize], {
            dtype: b.slice.dtype,
            device: b.slice.device,
          });
          group.allGatherInto(full, b.slice);
          b.params.forEach(([, p], i) => p.copy_(full.narrow(0, b.offsets[i], p.numel).reshape(...p.shape)));
        });
    });
  }

  /** This rank's own optimizer state (its slices' exp_avg, exp_avg_sq, step), keyed `bucket<i>.<key>`. */
  localState(): Map<string, Tensor> {
    return this.shard.stateTensors();
  }

  /** Optimizer-state bytes this rank holds once stepped, and what every rank would hold unsharded. */
  stateBytes(): { local: number; unsharded: number } {
    const step = 4; // the float32 step count per tensor
    let local = 0;
    let unsharded = 0;
    for (const b of this.buckets) {
      const size = b.slice.itemsize;
      local += STATE_KEYS.length * b.sliceSize * size + step;
      unsharded += STATE_KEYS.length * b.numel * size + step * b.params.length;
    }
    return { local, unsharded };
  }

  /** One line for the run's log. */
  describe(): string {
    const { local, unsharded } = this.stateBytes();
    const n = this.dataParallel.worldSize;
    return `ZeRO-1: optimizer state on rank ${this.rank} ${bytesText(local)} of ${bytesText(unsharded)} unsharded (${n} ranks)`;
  }

  /**
   * Gathers every rank's slices of the state into per-parameter tensors on rank 0, for a checkpoint.
   * A collective: every rank calls it; rank 0 then reads them with stateTensors() or saveState().
   */
  consolidateState(): void {
    this.releaseConsolidated();
    const state = this.shard.stateTensors();
    const keep = this.rank === 0;
    const out = new Map<string, Tensor>();
    torch.noGrad(() => {
      this.buckets.forEach((b, i) => {
        // never stepped (no state yet): nothing to gather, as AdamW saves nothing for it
        if (!state.has(`bucket${i}.exp_avg`)) return;
        for (const key of STATE_KEYS) {
          torch.scope(() => {
            const full = torch.empty([b.sliceSize * this.dataParallel.worldSize], {
              dtype: b.slice.dtype,
              device: b.slice.device,
            });
            this.dataParallel.group.allGatherInto(full, state.get(`bucket${i}.${key}`)!);
            if (!keep) return;
            b.params.forEach(([name, p], j) =>
              out.set(
                `${name}.${key}`,
                torch.keep(
                  full
                    .narrow(0, b.offsets[j], p.numel)
                    .reshape(...p.shape)
                    .clone(),
                ),
              ),
            );
          });
        }
        if (keep)
          for (const [name] of b.params) out.set(`${name}.step`, torch.keep(state.get(`bucket${i}.step`)!.clone()));
      });
    });
    this.consolidated = keep ? out : null;
  }

  private releaseConsolidated(): void {
    for (const t of this.consolidated?.values() ?? []) t.dispose();
    this.consolidated = null;
  }

  /** The per-parameter state gathered by consolidateState() (rank 0 only). */
  stateTensors(): Map<string, Tensor> {
    if (!this.consolidated)
      throw new UserError(
        `the optimizer state is sharded over ${this.dataParallel.worldSize} ranks: call consolidateState() on every rank first (rank 0 then holds it whole)`,
      );
    return this.consolidated;
  }

  /** Writes the consolidated state (rank 0, after consolidateState()), then frees it. */
  override saveState(path: string): void {
    try {
      super.saveState(path);
    } finally {
      this.releaseConsolidated();
    }
  }

  /** Takes per-parameter state (AdamW's keys, as a checkpoint holds it) and keeps this rank's slices. */
  loadStateTensors(state: Map<string, Tensor>): void {
    const mine = new Map<string, Tensor>();
    try {
      this.buckets.forEach((b, i) => {
        const have = b.params.filter(([name]) => state.has(`${name}.exp_avg`));
        if (have.length === 0) return;
        if (have.length < b.params.length) {
          const missing = b.params.find(([name]) => !state.has(`${name}.exp_avg`))![0];
          throw new UserError(
            `optimizer state has no exp_avg for '${missing}' (the state covers only some parameters)`,
          );
        }
        const steps = new Set<number>();
        for (const [name, p] of b.params) {
          for (const key of [...STATE_KEYS, 'step']) {
            const t = state.get(`${name}.${key}`);
            if (!t)
              throw new UserError(`optimizer state for '${name}' is incomplete (needs exp_avg, exp_avg_sq, step)`);
            if (key !== 'step' && t.shape.join() !== p.shape.join())
              throw new UserError(`optimizer state for '${name}' has shape [${t.shape}], the parameter [${p.shape}]`);
          }
          steps.add(torch.scope(() => state.get(`${name}.step`)!.item()));
        }
        if (steps.size > 1)
          throw new UserError(
            `optimizer state has different step counts (${[...steps].join(', ')}) for parameters that are stepped together`,
          );
        const lo = this.rank * b.sliceSize;
        for (const key of STATE_KEYS)
          mine.set(
            `bucket${i}.${key}`,
            torch.keep(
              torch.scope(() =>
                this.flat(
                  b,
                  b.params.map(([name]) => state.get(`${name}.${key}`)!.to(b.slice.dtype)),
                )
                  .narrow(0, lo, b.sliceSize)
                  .clone(),
              ),
            ),
          );
        mine.set(`bucket${i}.step`, torch.keep(state.get(`${b.params[0][0]}.step`)!.clone()));
      });
      this.shard.loadStateTensors(mine);
    } finally {
      for (const t of mine.values()) t.dispose();
    }
  }

  /** Frees this rank's state and slices. */
  override dispose(): void {
    this.releaseConsolidated();
    for (const t of new Set(this.shard.stateTensors().values())) t.dispose();
    for (const b of this.buckets) b.slice.dispose();
  }
}
