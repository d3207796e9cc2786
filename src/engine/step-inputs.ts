// The inputs of the engine's batched steps, in static buffers on the device: each row's sampling
// settings (sampling.ts's packed fields, its uniform number included), its token, position and
// cache slot, and the decode step's block tables. The host writes plain numbers into one float64
// staging array (exact for every integer here, slots included, so no BigInt per element and no sign
// to mind) and sends it in one host-to-device copy per step; the step casts the integer fields and
// the block table to int64 in one copy on the device, as they lie side by side in both buffers
// (a cast per field took a kernel each, about 2 us apiece at small batches on an H200).
//
// `decode` is the whole decode step over these buffers, decodeStep then sampleTokens: run eagerly
// (CPU, enforceEager) or captured into a CUDA graph (decode-graphs.ts), the same function, so a
// graph samples every batch and its replay returns token ids and logprobs.
//
// With `runAhead` (the engine's async scheduling) a step can be queued before the host has read the
// previous step's tokens: each step leaves its tokens in a device buffer just before the integer
// fields, and the host writes for each row the place in that buffer of the token it feeds (the
// previous step's row `from`, or its own id where `from` is -1), so one gather feeds them. Uploads
// then go through pinned host memory without waiting for the stream, and `readBack` queues the
// copy of a step's tokens and logprobs to pinned memory; each has two buffers used in turn, as a
// buffer is written again only two steps later, after the host has waited for the step between.
import * as torch from '../torch/index.js';
import type { Device, Tensor } from '../torch/index.js';
import type { KVCache } from './kv-cache.js';
import { decodeStep, type DecodeAttention, type GenerationModel } from './forward.js';
import {
  SAMPLING_FIELDS,
  sampleTokens,
  samplingFeatures,
  samplingFromFields,
  writeSettings,
  type RowSettings,
  type SamplingFeatures,
} from './sampling.js';

/**
 * Whether, with runAhead on CUDA, a step's inputs go to the device and its tokens and logprobs come
 * back to pinned memory by kernels (torch.copyPinned, the default) or by the copy engine
 * (non-blocking copy_s; AGENT_R1_STEP_COPIES=copy-engine, to compare them in bench/engine-decode.ts).
 * With CUDA graphs these copies sit between two steps' graphs, and each copy-engine transfer starts
 * some microseconds after the work ahead of it ends (the 4B shape's batch-1 step on an H100 idled
 * 18 us a step before its first kernel; bench/results/h100-decode-step-kernels.log).
 */
function copiesByKernel(): boolean {
  const v = process.env.AGENT_R1_STEP_COPIES;
  if (v === undefined || v === '' || v === 'kernel') return true;
  if (v === 'copy-engine') return false;
  throw new RangeError(`AGENT_R1_STEP_COPIES must be 'kernel' (the default) or 'copy-engine', got '${v}'`);
}

/** One decode step's rows. */
export interface DecodeRows {
  /** The token each row feeds. */
  ids: readonly number[];
  /** Its position (the tokens the cache holds for the row). */
  positions: readonly number[];
  /** The cache slot its key and value go to. */
  slots: readonly number[];
  /** With runAhead: the row of the previous decode step whose token this row feeds instead of `ids` (-1: `ids`). */
  from?: readonly number[];
  /** Each row's block ids in order (a row may hold fewer than the step's width). */
  blocks: readonly (readonly number[])[];
  /** The step's block-table width. */
  width: number;
  sampling: readonly RowSettings[];
}

// The integer fields [INT_FIELDS, maxBatch], after the sampling settings [SAMPLING_FIELDS, maxBatch]
// in the staging and after the last step's tokens [maxBatch] in the int64 buffer, each followed by
// the block table. FEED: with runAhead, the place in the int64 buffer of the token a row feeds.
const IDS = 0;
const FEED = 1;
const POSITIONS = 2;
const SLOTS = 3;
const INT_FIELDS = 4;

/** Static step inputs for batches of up to `maxBatch` rows and block tables up to `maxWidth` wide. */
export class StepInputs implements Disposable {
  /**
   * Host staging: the sampling settings [SAMPLING_FIELDS, maxBatch], the integer fields [INT_FIELDS,
   * maxBatch], then the block table [bucket, width] (row-major, as wide as the step).
   */
  private readonly host: Float64Array;
  /** The same layout on the device, float64. */
  private readonly staged: Tensor;
  /** The staged sampling settings [SAMPLING_FIELDS, maxBatch]. */
  private readonly settings: Tensor;
  /** int64 on the device: the last decode step's token ids [maxBatch], then the staging's integer fields and block table cast. */
  private readonly ints: Tensor;
  /** With runAhead: the last decode step's token ids [maxBatch] (the start of `ints`). */
  private readonly lastTokens: Tensor | null;
  /** With runAhead on CUDA: pinned staging, and pinned token ids and logprobs of a step, two of each used in turn. */
  private readonly pinned: { staging: Tensor[]; tokens: Tensor[]; logprobs: Tensor[] } | null;
  /** Whether the copies to and from `pinned` are kernels (copiesByKernel, read once, at construction). */
  private readonly pinnedByKernel: boolean;
  private uploads = 0;
  private readBacks = 0;

  constructor(
    private readonly o: { maxBatch: number; maxWidth: number; vocabSize: number; device: Device; runAhead?: boolean },
  ) {
    // read on every device, so that a bad value fails where the engine is built, before anything is allocated
    const byKernel = copiesByKernel();
    const size = (SAMPLING_FIELDS + INT_FIELDS) * o.maxBatch + o.maxBatch * o.maxWidth;
    this.host = new Float64Array(size);
    this.staged = torch.keep(torch.zeros([size], { dtype: 'float64', device: o.device }));
    this.settings = torch.keep(
      torch.scope(() => this.staged.narrow(0, 0, SAMPLING_FIELDS * o.maxBatch).view(SAMPLING_FIELDS, o.maxBatch)),
    );
    const intsSize = o.maxBatch + INT_FIELDS * o.maxBatch + o.maxBatch * o.maxWidth;
    this.ints = torch.keep(torch.zeros([intsSize], { dtype: 'int64', device: o.device }));
    this.lastTokens = o.runAhead ? torch.keep(torch.scope(() => this.ints.narrow(0, 0, o.maxBatch))) : null;
    const pin = o.runAhead && o.device !== 'cpu';
    const two = (n: number, dtype: 'float64' | 'int64' | 'float32') =>
      [0, 1].map(() => torch.keep(torch.empty([n], { dtype, pinMemory: true })));
    this.pinned = pin
      ? { staging: two(size, 'float64'), tokens: two(o.maxBatch, 'int64'), logprobs: two(o.maxBatch, 'float32') }
      : null;
    this.pinnedByKernel = pin === true && byKernel;
  }

  /**
   * Writes a decode step's rows, padded to `bucket` rows by repeating row 0 (rows never mix in the
   * step, and a repeated row writes the same key and value to the same slot), and copies them to
   * the device. Returns the batch's sampling features.
   */
  fillDecode(rows: DecodeRows, bucket: number): SamplingFeatures {
    const { maxBatch, maxWidth } = this.o;
    const B = rows.ids.length;
    if (B < 1 || bucket < B || bucket > maxBatch || rows.width > maxWidth)
      throw new RangeError(
        `StepInputs: ${B} rows in a bucket of ${bucket}, width ${rows.width} (at most ${maxBatch} rows, width ${maxWidth})`,
      );
    const h = this.host;
    const width = rows.width;
    const at0 = SAMPLING_FIELDS * maxBatch;
    const tables = at0 + INT_FIELDS * maxBatch;
    for (let i = 0; i < bucket; i++) {
      const r = i < B ? i : 0;
      const from = rows.from?.[r] ?? -1;
      h[at0 + IDS * maxBatch + i] = rows.ids[r];
      // in `ints`: the previous step's token of row `from`, or this row's id
      h[at0 + FEED * maxBatch + i] = from >= 0 ? from : maxBatch + IDS * maxBatch + i;
      h[at0 + POSITIONS * maxBatch + i] = rows.positions[r];
      h[at0 + SLOTS * maxBatch + i] = rows.slots[r];
      writeSettings(h, 0, maxBatch, i, rows.sampling[r], rows.positions[r] + 1);
      const blocks = rows.blocks[r];
      const n = Math.min(blocks.length, width);
      const at = tables + i * width;
      for (let j = 0; j < n; j++) h[at + j] = blocks[j];
      h.fill(0, at + n, at + width); // any valid block id
    }
    this.upload(tables + bucket * width);
    return samplingFeatures(rows.sampling, this.o.vocabSize);
  }

  /**
   * Writes the sampling settings of rows whose last token is at `positions` (each draws the token
   * at position + 1), for `sample`; copies them to the device. Returns their sampling features.
   */
  fillSampling(sampling: readonly RowSettings[], positions: readonly number[]): SamplingFeatures {
    const { maxBatch } = this.o;
    if (sampling.length > maxBatch)
      throw new RangeError(`StepInputs: ${sampling.length} rows to sample, at most ${maxBatch}`);
    sampling.forEach((r, i) => writeSettings(this.host, 0, maxBatch, i, r, positions[i] + 1));
    this.upload(SAMPLING_FIELDS * maxBatch);
    return samplingFeatures(sampling, this.o.vocabSize);
  }

  /** The host staging's first `n` values to the device: one copy (with runAhead on CUDA, queued from pinned memory). */
  private upload(n: number): void {
    torch.scope(() => {
      const values = torch.tensor(this.host.subarray(0, n));
      if (!this.pinned) {
        this.staged.narrow(0, 0, n).copy_(values);
        return;
      }
      const pinned = this.pinned.staging[this.uploads++ % 2].narrow(0, 0, n).copy_(values);
      if (this.pinnedByKernel) torch.copyPinned(this.staged.narrow(0, 0, n), pinned);
      else this.staged.narrow(0, 0, n).copy_(pinned, { nonBlocking: true });
    });
  }

  /**
   * Queues the copy of a step's token ids and logprobs to the host and returns how to read them once
   * the stream has done it (at once on the CPU). With runAhead on CUDA they go to pinned memory
   * without waiting; call `read` before the step after next is read back.
   */
  readBack(out: { tokens: Tensor; logprobs: Tensor }): () => { ids: number[]; logprobs: number[] } {
    const n = out.tokens.size(0);
    if (!this.pinned) {
      const ids = torch.scope(() => out.tokens.to('cpu').toArray());
      const logprobs = torch.scope(() => out.logprobs.to('cpu').toArray());
      return () => ({ ids, logprobs });
    }
    const k = this.readBacks++ % 2;
    const tokens = this.pinned.tokens[k];
    const logprobs = this.pinned.logprobs[k];
    torch.scope(() => {
      if (this.pinnedByKernel) {
        torch.copyPinned(tokens.narrow(0, 0, n), out.tokens.contiguous());
        torch.copyPinned(logprobs.narrow(0, 0, n), out.logprobs.to('float32').contiguous());
        return;
      }
      tokens.narrow(0, 0, n).copy_(out.tokens, { nonBlocking: true });
      logprobs.narrow(0, 0, n).copy_(out.logprobs.to('float32'), { nonBlocking: true });
    });
    return () =>
      torch.scope(() => ({ ids: tokens.narrow(0, 0, n).toArray(), logprobs: logprobs.narrow(0, 0, n).toArray() }));
  }

  /** The int64 field `f` of the first `n` rows (once `decode` has cast the staging). */
  private intField(f: number, n: number): Tensor {
    return this.ints.narrow(0, this.o.maxBatch * (1 + f), n);
  }

  /**
   * Runs `fn` (a step run for its side effects only, as a graph's warm-up before capture) and puts the
   * last decode step's tokens back as they were, so the step that follows still feeds from them.
   */
  keepingLastTokens(fn: () => void): void {
    const saved = this.lastTokens ? torch.keep(torch.scope(() => this.lastTokens!.clone())) : null;
    try {
      fn();
    } finally {
      if (saved) {
        this.lastTokens!.copy_(saved);
        saved.dispose();
      }
    }
  }

  /** Token ids [n] and logprobs [n] drawn from logits [n, V] by the first n rows filled, with features `f`. */
  sample(logits: Tensor, f: SamplingFeatures): { tokens: Tensor; logprobs: Tensor } {
    const n = logits.size(0);
    return sampleTokens(logits, samplingFromFields(this.settings.narrow(1, 0, n), f));
  }

  /**
   * The decode step of the first `bucket` rows filled at block-table width `width`, sampling with
   * features `f`: token ids [bucket] and logprobs [bucket]. Device ops only (decodeStep's contract),
   * so a CUDA graph captures it; each (bucket, width) reads its own view of the staged block table.
   */
  decode(
    m: GenerationModel,
    cache: KVCache,
    o: {
      bucket: number;
      width: number;
      features: SamplingFeatures;
      attention: DecodeAttention;
      /** decodeStep's `fusedKernels`. */
      fusedKernels?: boolean;
    },
  ): { tokens: Tensor; logprobs: Tensor } {
    const { bucket, width } = o;
    const { maxBatch } = this.o;
    // the integer fields and the block table to int64 in one copy
    const n = INT_FIELDS * maxBatch + bucket * width;
    this.ints.narrow(0, maxBatch, n).copy_(this.staged.narrow(0, SAMPLING_FIELDS * maxBatch, n));
    const tables = this.ints.narrow(0, maxBatch * (1 + INT_FIELDS), bucket * width).view(bucket, width);
    const logits = decodeStep(m, cache, {
      ids: this.lastTokens ? this.ints.indexSelect(0, this.intField(FEED, bucket)) : this.intField(IDS, bucket),
      positions: this.intField(POSITIONS, bucket),
      slots: this.intField(SLOTS, bucket),
      blockTables: tables,
      attention: o.attention,
      fusedKernels: o.fusedKernels,
      modelDtypeLogits: true,
    });
    const out = this.sample(logits, o.features);
    this.lastTokens?.narrow(0, 0, bucket).copy_(out.tokens);
    return out;
  }

  dispose(): void {
    this.settings.dispose();
    this.ints.dispose();
    this.staged.dispose();
    this.lastTokens?.dispose();
    if (this.pinned) for (const t of Object.values(this.pinned).flat()) t.dispose();
  }
  [Symbol.dispose](): void {
    this.dispose();
  }
}
