// Data-parallel training over a c10d process group: every rank trains on its share of the batch
// and the update equals one process's update on the whole batch (to float tolerance):
//   - loss denominators (tokens, sequences) are summed over the ranks before any loss is made, so
//     each rank's loss is its share of the global mean;
//   - gradients are summed over the ranks in flat buckets (one all-reduce per bucket, not per
//     parameter), so every rank holds the global gradient and clips and steps identically;
//   - every rank runs the same number of mini-batches (the most any rank has; a rank short of rows
//     contributes zero gradient), so no collective waits for a rank that skipped it.
//   - the optimizer state is sharded over the ranks (ZeRO-1, zero-optimizer.ts): the Trainer steps
//     a ZeroAdamW whenever it has a DataParallel; plain AdamW with `allReduceGrads` is the unsharded way.
// Mini-batch j of the global batch is the union of every rank's j-th local mini-batch (verl's
// split: each rank's share is cut into mini-batches of ppo_mini_batch_size / world_size prompts).
import * as torch from '../torch/index.js';
import type { Device, ProcessGroup, ReduceOp, Tensor } from '../torch/index.js';

/** Elements per gradient bucket (float32: 100 MB), as DDP's default 25 MiB cap is per-bucket too. */
export const BUCKET_ELEMENTS = 25 * 1024 * 1024;

export class DataParallel {
  /**
   * `device`: where this rank's tensors live, and so the small reductions' (sum, max, min) tensors:
   * NCCL reduces only CUDA tensors (the rank's own GPU), Gloo CPU ones. Default cpu.
   */
  constructor(
    readonly group: ProcessGroup,
    readonly device: Device = 'cpu',
  ) {}

  get rank(): number {
    return this.group.rank;
  }

  get worldSize(): number {
    return this.group.worldSize;
  }

  /** Reduces a few numbers over the ranks: one small all-reduce in float64. */
  private reduce(values: readonly number[], op: ReduceOp): number[] {
    return torch.scope(() =>
      this.group.allReduce_(torch.tensor([...values], { dtype: 'float64', device: this.device }), op).toArray(),
    );
  }

  /** Sums numbers over the ranks. */
  sum(values: readonly number[]): number[] {
    return this.reduce(values, 'sum');
  }

  /** The largest of each number over the ranks. */
  max(values: readonly number[]): number[] {
    return this.reduce(values, 'max');
  }

  /** The smallest of each number over the ranks. */
  min(values: readonly number[]): number[] {
    return this.reduce(values, 'min');
  }

  /**
   * Sums the gradients of `params` over the ranks, in place. A parameter without a gradient on
   * this rank (no rows reached it) counts as zero, so every rank sends the same buckets.
   */
  allReduceGrads(params: readonly Tensor[]): void {
    torch.noGrad(() => {
      let bucket: Tensor[] = [];
      let size = 0;
      const flush = () => {
        if (bucket.length === 0) return;
        torch.scope(() => {
          const grads = bucket.map((p) => p.grad ?? torch.zerosLike(p));
          const flat = torch.cat(grads.map((g) => g.reshape(-1)));
          this.group.allReduce_(flat, 'sum');
          let at = 0;
          for (let i = 0; i < bucket.length; i++) {
            const p = bucket[i];
            const n = p.numel;
            const summed = flat.narrow(0, at, n).reshape(...p.shape);
            if (p.grad) p.grad.copy_(summed);
            else p.grad = torch.keep(summed.clone());
            at += n;
          }
        });
        bucket = [];
        size = 0;
      };
      for (const p of params) {
        if (size + p.numel > BUCKET_ELEMENTS) flush();
        bucket.push(p);
        size += p.numel;
      }
      flush();
    });
  }

  /** Copies rank 0's values of `params` to every rank (start from the same weights). */
  broadcastParams(params: readonly Tensor[]): void {
    torch.noGrad(() => {
      for (const p of params) this.group.broadcast_(p, 0);
    });
  }
}
