// CUDA graphs for the decode step (vLLM's meaning; `enforce_eager` turns them off). `decodeStep`
// (forward.ts) is a fixed sequence of kernels for a given batch B and block-table width W once its
// inputs live in device buffers (its contract). So one graph is captured per (B, W) bucket on first
// use (B: vLLM's sizes 1, 2, 4, then multiples of 8; W: a multiple of 4 blocks, since the step
// gathers W blocks per row and a coarser bucket would gather more), all in one shared memory pool,
// each reading views of the same static input buffers; a batch of B rows runs in the smallest
// bucket that holds it, its padding rows repeating row 0 (the contract: rows never mix, and a
// repeated row writes the same key and value to the same slot). A step is then two small
// host-to-device copies and one graph launch; for an all-greedy batch the sampling is in the graph
// too. Graphs keep only small outputs (token ids and logprobs, or logits copied into one buffer
// every graph shares), so their number costs little memory.
import * as torch from '../torch/index.js';
import type { Tensor } from '../torch/index.js';
import type { KVCache } from './kv-cache.js';
import { decodeStep, type DecodeAttention, type GenerationModel } from './forward.js';
import { sampleTokens } from './sampling.js';

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

export interface DecodeRows {
  ids: readonly number[];
  positions: readonly number[];
  slots: readonly number[];
  /** Each row's block ids in order (a row may hold fewer than the step's width). */
  blocks: readonly (readonly number[])[];
  /** The step's block-table width (graphWidth of the widest row). */
  width: number;
}

/** One captured bucket: the graph, and its own outputs when it samples (greedy). */
interface Captured {
  graph: torch.CUDAGraph;
  /** With greedy sampling in the graph: the argmax and its logprob per row. */
  tokens?: Tensor;
  logprobs?: Tensor;
  ones?: Tensor;
}

// Rows of the static int64 input buffer [3, maxBatch].
const IDS = 0;
const POSITIONS = 1;
const SLOTS = 2;

/**
 * The decode step of `m` over `cache`, replayed from CUDA graphs. Tied to this cache's tensors:
 * make a new one when the cache is made again.
 */
export class DecodeGraphs implements Disposable {
  readonly sizes: number[];
  private readonly inputs: Tensor;
  private readonly tables: Tensor;
  /** Float32 logits [maxBatch, vocab] every non-sampling graph writes (made on first use). */
  private logits: Tensor | null = null;
  private readonly graphs = new Map<string, Captured>();
  private readonly pool = torch.graphPoolHandle();
  private readonly m: GenerationModel;

  constructor(
    m: GenerationModel,
    private readonly cache: KVCache,
    private readonly o: { maxBatch: number; maxWidth: number; attention: DecodeAttention; fusedKernels?: boolean },
  ) {
    // The RoPE frequencies on the device: a copy from host memory cannot be captured.
    this.m = { ...m, invFreq: torch.keep(m.invFreq.to({ device: cache.device })) };
    this.sizes = graphBatchSizes(o.maxBatch);
    const device = cache.device;
    this.inputs = torch.keep(torch.zeros([3, o.maxBatch], { dtype: 'int64', device }));
    this.tables = torch.keep(torch.zeros([o.maxBatch, o.maxWidth], { dtype: 'int64', device }));
  }

  /** Graphs captured so far (one per bucket used). */
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

  /** Float32 logits [B, vocab] of one decode step: a view of the graph's output, valid until the next replay. */
  run(rows: DecodeRows): Tensor {
    this.replay(rows, false);
    return this.logits!.narrow(0, 0, rows.ids.length);
  }

  /** One decode step with greedy sampling in the graph (every row greedy): token ids [B] and their logprobs [B]. */
  runGreedy(rows: DecodeRows): { tokens: Tensor; logprobs: Tensor } {
    const g = this.replay(rows, true);
    const B = rows.ids.length;
    return { tokens: g.tokens!.narrow(0, 0, B), logprobs: g.logprobs!.narrow(0, 0, B) };
  }

  private replay(rows: DecodeRows, greedy: boolean): Captured {
    const bucket = this.bucketOf(rows.ids.length);
    this.fill(rows, bucket);
    const key = `${bucket}:${rows.width}:${greedy}`;
    let g = this.graphs.get(key);
    if (!g) {
      g = this.capture(bucket, rows.width, greedy);
      this.graphs.set(key, g);
    }
    g.graph.replay();
    return g;
  }

  /** Writes the rows (padding rows repeat row 0) into the static buffers: two host-to-device copies. */
  private fill(rows: DecodeRows, bucket: number): void {
    const { maxBatch, maxWidth } = this.o;
    const host = new BigInt64Array(3 * maxBatch);
    const tables = new BigInt64Array(bucket * maxWidth);
    for (let i = 0; i < bucket; i++) {
      const r = i < rows.ids.length ? i : 0;
      host[IDS * maxBatch + i] = BigInt(rows.ids[r]);
      host[POSITIONS * maxBatch + i] = BigInt(rows.positions[r]);
      host[SLOTS * maxBatch + i] = BigInt(rows.slots[r]);
      const blocks = rows.blocks[r];
      for (let j = 0; j < blocks.length && j < rows.width; j++) tables[i * maxWidth + j] = BigInt(blocks[j]);
    }
    torch.scope(() => {
      this.inputs.copy_(torch.tensor(host).view(3, maxBatch));
      this.tables.narrow(0, 0, bucket).copy_(torch.tensor(tables).view(bucket, maxWidth));
    });
  }

  /** The decode step of a (bucket, width) batch reading the static buffers. */
  private step(bucket: number, width: number): Tensor {
    const row = (r: number) => this.inputs.select(0, r).narrow(0, 0, bucket);
    return decodeStep(this.m, this.cache, {
      ids: row(IDS),
      positions: row(POSITIONS),
      slots: row(SLOTS),
      blockTables: this.tables.narrow(0, 0, bucket).narrow(1, 0, width),
      attention: this.o.attention,
      fusedKernels: this.o.fusedKernels,
    });
  }

  private capture(bucket: number, width: number, greedy: boolean): Captured {
    const device = this.cache.device;
    // greedy rows' logprobs are at temperature 1, as sampleTokens reports them
    const ones = greedy ? torch.keep(torch.ones([bucket, 1], { device })) : undefined;
    if (!greedy && !this.logits) {
      const vocab = this.m.spec.vocabSize;
      this.logits = torch.keep(torch.zeros([this.o.maxBatch, vocab], { dtype: 'float32', device }));
    }
    const body = (): { tokens?: Tensor; logprobs?: Tensor } => {
      const logits = this.step(bucket, width);
      if (!ones) {
        this.logits!.narrow(0, 0, bucket).copy_(logits);
        return {};
      }
      const sampling = { temperature: ones, greedy: null, allGreedy: true, topK: null, topP: null, keys: null };
      return sampleTokens(logits, sampling, this.inputs.select(0, POSITIONS).narrow(0, 0, bucket));
    };
    // One eager run first (lazy initialisation of kernels and handles happens outside the capture);
    // it writes the same keys and values the replay writes.
    torch.noGrad(() => torch.scope(body));
    const graph = new torch.CUDAGraph();
    try {
      const out = torch.noGrad(() => graph.capture(body, { device, pool: this.pool }));
      return { graph, ...out, ones };
    } catch (e) {
      graph.dispose();
      ones?.dispose();
      throw new GraphCaptureError(
        `capturing the decode step of ${bucket} rows x ${width} blocks failed: ${(e as Error).message}`,
        { cause: e },
      );
    }
  }

  dispose(): void {
    for (const g of this.graphs.values()) {
      g.graph.dispose();
      g.ones?.dispose();
    }
    this.graphs.clear();
    this.inputs.dispose();
    this.tables.dispose();
    this.logits?.dispose();
    this.logits = null;
    this.m.invFreq.dispose();
  }
  [Symbol.dispose](): void {
    this.dispose();
  }
}
