// The inputs of the engine's batched steps, in static buffers on the device: each row's token,
// position and cache slot, its sampling settings (sampling.ts's packed fields), and the decode
// step's block tables. The host writes plain numbers into one float64 staging array (exact for every
// integer here, keys and slots included, so no BigInt per element and no sign to mind) and sends
// it in one host-to-device copy per step; the step casts on the device.
//
// `decode` is the whole decode step over these buffers, decodeStep then sampleTokens: run eagerly
// (CPU, enforceEager) or captured into a CUDA graph (decode-graphs.ts), the same function, so a
// graph samples every batch and its replay returns token ids and logprobs. The counter of each
// row's random number (the position of the token it draws: its position + 1) is computed on the
// device from the positions buffer.
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

/** One decode step's rows. */
export interface DecodeRows {
  /** The token each row feeds. */
  ids: readonly number[];
  /** Its position (the tokens the cache holds for the row). */
  positions: readonly number[];
  /** The cache slot its key and value go to. */
  slots: readonly number[];
  /** Each row's block ids in order (a row may hold fewer than the step's width). */
  blocks: readonly (readonly number[])[];
  /** The step's block-table width. */
  width: number;
  sampling: readonly RowSettings[];
}

// Rows of the per-row fields [FIELDS, maxBatch]: these three, then the sampling settings.
const IDS = 0;
const POSITIONS = 1;
const SLOTS = 2;
const SAMPLING = 3;
const FIELDS = SAMPLING + SAMPLING_FIELDS;

/** Static step inputs for batches of up to `maxBatch` rows and block tables up to `maxWidth` wide. */
export class StepInputs implements Disposable {
  /** Host staging: the fields [FIELDS, maxBatch], then the block table [bucket, width] (row-major, as wide as the step). */
  private readonly host: Float64Array;
  /** The same layout on the device, float64. */
  private readonly staged: Tensor;
  private readonly fields: Tensor;

  constructor(private readonly o: { maxBatch: number; maxWidth: number; vocabSize: number; device: Device }) {
    const size = FIELDS * o.maxBatch + o.maxBatch * o.maxWidth;
    this.host = new Float64Array(size);
    this.staged = torch.keep(torch.zeros([size], { dtype: 'float64', device: o.device }));
    this.fields = torch.keep(torch.scope(() => this.staged.narrow(0, 0, FIELDS * o.maxBatch).view(FIELDS, o.maxBatch)));
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
    const tables = FIELDS * maxBatch;
    for (let i = 0; i < bucket; i++) {
      const r = i < B ? i : 0;
      h[IDS * maxBatch + i] = rows.ids[r];
      h[POSITIONS * maxBatch + i] = rows.positions[r];
      h[SLOTS * maxBatch + i] = rows.slots[r];
      writeSettings(h, SAMPLING * maxBatch, maxBatch, i, rows.sampling[r]);
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
    sampling.forEach((r, i) => {
      this.host[POSITIONS * maxBatch + i] = positions[i];
      writeSettings(this.host, SAMPLING * maxBatch, maxBatch, i, r);
    });
    this.upload(FIELDS * maxBatch);
    return samplingFeatures(sampling, this.o.vocabSize);
  }

  /** The host staging's first `n` values to the device: one copy. */
  private upload(n: number): void {
    torch.scope(() => {
      this.staged.narrow(0, 0, n).copy_(torch.tensor(this.host.subarray(0, n)));
    });
  }

  /** The int64 field `f` of the first `n` rows. */
  private ints(f: number, n: number): Tensor {
    return this.fields.select(0, f).narrow(0, 0, n).to('int64');
  }

  /** Token ids [n] and logprobs [n] drawn from logits [n, V] by the first n rows filled, with features `f`. */
  sample(logits: Tensor, f: SamplingFeatures): { tokens: Tensor; logprobs: Tensor } {
    const n = logits.size(0);
    const sampling = samplingFromFields(this.fields.narrow(0, SAMPLING, SAMPLING_FIELDS).narrow(1, 0, n), f);
    return sampleTokens(logits, sampling, this.ints(POSITIONS, n).add(1));
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
    const tables = this.staged.narrow(0, FIELDS * this.o.maxBatch, bucket * width).view(bucket, width);
    const logits = decodeStep(m, cache, {
      ids: this.ints(IDS, bucket),
      positions: this.ints(POSITIONS, bucket),
      slots: this.ints(SLOTS, bucket),
      blockTables: tables.to('int64'),
      attention: o.attention,
      fusedKernels: o.fusedKernels,
    });
    return this.sample(logits, o.features);
  }

  dispose(): void {
    this.fields.dispose();
    this.staged.dispose();
  }
  [Symbol.dispose](): void {
    this.dispose();
  }
}
