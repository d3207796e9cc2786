// CUDA graphs for the decode step (vLLM's meaning; `enforce_eager` turns them off). The decode step
// with its sampling (StepInputs.decode: decodeStep, forward.ts, then sampleTokens) is a fixed
// sequence of kernels for a given batch B, block-table width W and set of sampling features once
// its inputs live in device buffers (decodeStep's contract). So one graph is captured per (B, W,
// features) on first use (B: vLLM's sizes 1, 2, 4, then multiples of 8; W: a multiple of 4
// blocks, since the step gathers W blocks per row and a coarser bucket would gather more;
// features: all greedy, or sampled with or without greedy rows, top-k, top-p, so an all-greedy
// batch runs only the argmax and a temperature-only batch no sort), all in one shared memory pool,
// each reading views of the same static inputs (step-inputs.ts); a batch of B rows runs in the
// smallest bucket that holds it, its padding rows repeating row 0. A step is then one small
// host-to-device copy and one graph launch, which leaves the token ids and logprobs of every row
// in the graph's own small outputs, so the number of graphs costs little memory.
import * as torch from '../torch/index.js';
import type { Tensor } from '../torch/index.js';
import type { KVCache } from './kv-cache.js';
import type { DecodeAttention, GenerationModel } from './forward.js';
import { featuresKey, type SamplingFeatures } from './sampling.js';
import type { DecodeRows, StepInputs } from './step-inputs.js';

/** vLLM's capture sizes up to `maxBatch` (1, 2, 4, multiples of 8 below 256, then of 16), and `maxBatch` itself. */
export function graphBatchSizes(maxBatch: number): number[] {
  const sizes = [1, 2, 4];
  for (let b = 8; b < 256; b += 8) sizes.push(b);
  for (let b = 256; b <= Math.max(256, maxBatch); b += 16) sizes.push(b);
  const out = sizes.filter((b) => b < maxBatch);
  out.push(maxBatch);
  return out;
}

/** Block-table widths are bucketed to multiples of this many blocks. */
export const WIDTH_STEP = 4;

/** The block-table width a step needing `w` blocks runs at: `w` rounded up to WIDTH_STEP, at most `maxWidth`. */
export function graphWidth(w: number, maxWidth: number): number {
  return Math.min(Math.ceil(w / WIDTH_STEP) * WIDTH_STEP, maxWidth);
}

/** The decode step could not be captured (the step itself ran eagerly just before, so eager works). */
export class GraphCaptureError extends Error {}

/** One captured (bucket, width, features): the graph and its outputs (token ids and logprobs per row). */
interface Captured {
  graph: torch.CUDAGraph;
  tokens: Tensor;
  logprobs: Tensor;
}

/**
 * The decode step of `m` over `cache`, reading `inputs`, replayed from CUDA graphs. Tied to the
 * addresses of this cache's tensors: a cache made again at the same addresses (the caching
 * allocator often hands the same blocks back) is read by the same graphs (`adopt`); at other
 * addresses they must be made again.
 */
export class DecodeGraphs implements Disposable {
  readonly sizes: number[];
  private readonly graphs = new Map<string, Captured>();
  private readonly pool = torch.graphPoolHandle();
  private readonly m: GenerationModel;
  /** The cache's addresses the graphs read. */
  private readonly addresses: number[];

  constructor(
    m: GenerationModel,
    private cache: KVCache,
    private readonly inputs: StepInputs,
    private readonly o: { maxBatch: number; attention: DecodeAttention; fusedKernels?: boolean },
  ) {
    // The RoPE frequencies on the device: a copy from host memory cannot be captured.
    this.m = { ...m, invFreq: torch.keep(m.invFreq.to({ device: cache.device })) };
    this.sizes = graphBatchSizes(o.maxBatch);
    this.addresses = cache.addresses();
  }

  /**
   * When `cache` (of this one's shape) lies where the graphs' cache did, the graphs read it as they
   * are: it becomes their cache (later captures' too) and this returns true; else false, nothing changed.
   */
  adopt(cache: KVCache): boolean {
    const at = cache.addresses();
    if (at.length !== this.addresses.length || at.some((a, i) => a !== this.addresses[i])) return false;
    this.cache = cache;
    return true;
  }

  /** Graphs captured so far (one per bucket, width and features used). */
  get captured(): number {
    return this.graphs.size;
  }

  /** The batch bucket a step of `b` rows runs in. */
  bucketOf(b: number): number {
    const size = this.sizes.find((s) => s >= b);
    if (size === undefined)
      throw new RangeError(`decode batch of ${b} rows is above the largest graph (${this.o.maxBatch})`);
    return size;
  }

  /** One decode step with its sampling: token ids [B] and their logprobs [B], views of the graph's outputs valid until its next replay. */
  run(rows: DecodeRows): { tokens: Tensor; logprobs: Tensor } {
    const B = rows.ids.length;
    const bucket = this.bucketOf(B);
    const features = this.inputs.fillDecode(rows, bucket);
    const key = `${bucket}:${rows.width}:${featuresKey(features)}`;
    let g = this.graphs.get(key);
    if (!g) {
      g = this.capture(bucket, rows.width, features);
      this.graphs.set(key, g);
    }
    g.graph.replay();
    return { tokens: g.tokens.narrow(0, 0, B), logprobs: g.logprobs.narrow(0, 0, B) };
  }

  private capture(bucket: number, width: number, features: SamplingFeatures): Captured {
    const device = this.cache.device;
    const body = () =>
      this.inputs.decode(this.m, this.cache, {
        bucket,
        width,
        features,
        attention: this.o.attention,
        fusedKernels: this.o.fusedKernels,
      });
    // One eager run first (lazy initialisation of kernels and handles happens outside the capture);
    // it writes the same keys and values the replay writes, and its tokens are not kept (with
    // asyncScheduling the replay feeds from the previous step's).
    torch.noGrad(() =>
      this.inputs.keepingLastTokens(() =>
        torch.scope(() => {
          body();
        }),
      ),
    );
    const graph = new torch.CUDAGraph();
    try {
      const out = torch.noGrad(() => graph.capture(body, { device, pool: this.pool }));
      return { graph, ...out };
    } catch (e) {
      graph.dispose();
      throw new GraphCaptureError(
        `capturing the decode step of ${bucket} rows x ${width} blocks (${featuresKey(features)}) failed: ${(e as Error).message}`,
        { cause: e },
      );
    }
  }

  dispose(): void {
    for (const g of this.graphs.values()) g.graph.dispose();
    this.graphs.clear();
    this.m.invFreq.dispose();
  }
  [Symbol.dispose](): void {
    this.dispose();
  }
}
