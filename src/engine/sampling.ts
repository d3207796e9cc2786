// Sampling as small pure functions over a batch of float32 logits [B, V], each row with its own
// temperature, top-k and top-p, one native call per op for the whole batch.
//
// The logprob reported for a chosen token is log softmax(logits / temperature)[token]: under the
// temperature-scaled distribution, BEFORE top-k/top-p truncation. It is what
// `model.logprobs(batch, { temperature })` computes for the same tokens, so a trainer's "old"
// logprobs equal the rollout's. Greedy rows (temperature 0) report log softmax(logits)[token]
// (temperature 1), as `model.logprobs` with its default temperature.
//
// Randomness is counter-based, per row: the uniform number that draws the token at position p of a
// request with seed s is a hash of (s, p) (no generator state). So a request with a seed gets the
// same tokens whatever else is in the batch, whenever it is scheduled, and after a preemption
// recomputes it. The hash: k = key(s), then u = mix32(p * 0x9E3779B9 + k mod 2^32) / 2^32, with
// mix32 Chris Wellons' lowbias32 (a bijection of 32-bit words with full avalanche) and the top 24
// bits kept, as float32 holds them exactly. The host computes it with the step's other per-row
// fields, which it writes anyway (it knows each row's position): on the device it took a dozen
// elementwise int64 kernels a sampled step, about 2 us each at small batches on an H200.
import * as torch from '../torch/index.js';
import type { Device, Tensor } from '../torch/index.js';

// searchsorted.Tensor(sorted_sequence, self, out_int32, right, side, sorter)
const searchsorted = torch.aten('searchsorted', 'Tensor');

const GOLDEN = 0x9e3779b9;
const MIX_A = 0x7feb352d;
const MIX_B = 0x846ca68b;

/** lowbias32 on one unsigned 32-bit word (the host half of the hash). */
function mix32(x: number): number {
  x = (x ^ (x >>> 16)) >>> 0;
  x = Math.imul(x, MIX_A) >>> 0;
  x = (x ^ (x >>> 15)) >>> 0;
  x = Math.imul(x, MIX_B) >>> 0;
  return (x ^ (x >>> 16)) >>> 0;
}

/** The 32-bit key of a request's seed (any safe integer; its low and high 32-bit words both count). */
export function seedKey(seed: number): number {
  const lo = Number(BigInt.asUintN(32, BigInt(seed)));
  const hi = Number(BigInt.asUintN(32, BigInt(seed) >> 32n));
  return mix32((lo ^ mix32((hi ^ GOLDEN) >>> 0)) >>> 0);
}

/**
 * The uniform number in [0, 1) that draws the token at `position` of a request whose seed has key
 * `key` (`seedKey`): the hash of (key, position) (see the module doc), a multiple of 2^-24.
 */
export function counterUniform(key: number, position: number): number {
  return (mix32((Math.imul(position, GOLDEN) + key) >>> 0) >>> 8) / 2 ** 24;
}

/** One row's sampling settings (from a request's `SamplingParams`). */
export interface RowSampling {
  /** 0 = greedy; default 1. */
  temperature?: number;
  /** Keep the k most likely tokens; 0, -1 or undefined = off. */
  topK?: number;
  /** Keep the smallest set of most likely tokens whose probability reaches p; 1 or undefined = off. */
  topP?: number;
  /** The seed of the row's random numbers (any safe integer); default 0. */
  seed?: number;
}

/** The batch's settings as tensors (`null` when no row uses the feature). */
export interface SamplingTensors {
  /** [B, 1] float32; greedy rows hold 1 (their logprobs are at temperature 1). */
  temperature: Tensor;
  /** [B] bool: rows that take the argmax; null when none does. */
  greedy: Tensor | null;
  /** Every row is greedy: nothing is sampled. */
  allGreedy: boolean;
  /** [B, 1] int64 k per row (V where off); null when no row uses top-k. */
  topK: Tensor | null;
  /** [B, 1] float32 p per row (1 where off); null when no row uses top-p. */
  topP: Tensor | null;
  /** [B] float32: each row's uniform number (`counterUniform` of its seed and the position it draws); null when every row is greedy. */
  uniforms: Tensor | null;
}

export function isGreedy(s: RowSampling): boolean {
  return s.temperature === 0;
}

/** One row's settings as the sampling tensors hold them (worked out once per request). */
export interface RowSettings {
  greedy: boolean;
  /** 1 for greedy rows (their logprobs are at temperature 1). */
  temperature: number;
  /** V where off. */
  topK: number;
  /** 1 where off. */
  topP: number;
  /** `seedKey` of the row's seed. */
  key: number;
}

export function rowSettings(r: RowSampling, vocabSize: number): RowSettings {
  const greedy = isGreedy(r);
  return {
    greedy,
    temperature: greedy ? 1 : (r.temperature ?? 1),
    topK: r.topK !== undefined && r.topK > 0 ? Math.min(r.topK, vocabSize) : vocabSize,
    topP: r.topP ?? 1,
    key: seedKey(r.seed ?? 0),
  };
}

/** Which sampling features a batch uses: which of `SamplingTensors` are there, and which ops run. */
export interface SamplingFeatures {
  /** Every row greedy: the argmax only. */
  allGreedy: boolean;
  /** Greedy rows beside sampled ones (the greedy mask). */
  mixed: boolean;
  /** A sampled row keeps fewer than V tokens (top-k). */
  topK: boolean;
  /** A sampled row keeps less than probability 1 (top-p). */
  topP: boolean;
}

export function samplingFeatures(rows: readonly RowSettings[], vocabSize: number): SamplingFeatures {
  let greedy = 0;
  let topK = false;
  let topP = false;
  for (const r of rows) {
    if (r.greedy) greedy++;
    else {
      topK ||= r.topK < vocabSize;
      topP ||= r.topP < 1;
    }
  }
  return { allGreedy: greedy === rows.length, mixed: greedy > 0 && greedy < rows.length, topK, topP };
}

/** A name for the features (a CUDA graph per batch bucket and features): 'greedy', 'sample', 'mixed+top-p', ... */
export function featuresKey(f: SamplingFeatures): string {
  if (f.allGreedy) return 'greedy';
  const parts = [f.mixed && 'mixed', f.topK && 'top-k', f.topP && 'top-p'].filter(Boolean);
  return parts.length ? parts.join('+') : 'sample';
}

// Rows of the packed settings: float64 [SAMPLING_FIELDS, B], exact for every value they hold
// (integers, and uniforms of 24 bits), so the host writes plain numbers and the device casts.
const TEMPERATURE = 0;
const TOP_K = 1;
const TOP_P = 2;
const UNIFORM = 3;
const GREEDY = 4;
export const SAMPLING_FIELDS = 5;

/**
 * Writes row `i`'s settings for drawing the token at `position` into packed settings `out` of
 * `stride` rows per field (float64 [SAMPLING_FIELDS, stride]), from `offset`.
 */
export function writeSettings(
  out: Float64Array,
  offset: number,
  stride: number,
  i: number,
  r: RowSettings,
  position: number,
): void {
  out[offset + TEMPERATURE * stride + i] = r.temperature;
  out[offset + TOP_K * stride + i] = r.topK;
  out[offset + TOP_P * stride + i] = r.topP;
  out[offset + UNIFORM * stride + i] = r.greedy ? 0 : counterUniform(r.key, position);
  out[offset + GREEDY * stride + i] = r.greedy ? 1 : 0;
}

/**
 * The sampling tensors of packed settings `fields` (float64 [SAMPLING_FIELDS, B], on the device) for
 * a batch with features `f`: device casts only, so a CUDA graph captures them.
 */
export function samplingFromFields(fields: Tensor, f: SamplingFeatures): SamplingTensors {
  // every field to float32 in one cast (each holds what float32 holds exactly: top-k is at most the
  // vocabulary, below 2^24), then views of it
  const f32 = fields.to('float32');
  const field = (i: number) => f32.select(0, i);
  return {
    temperature: field(TEMPERATURE).unsqueeze(-1),
    greedy: f.mixed ? field(GREEDY).ne(0) : null,
    allGreedy: f.allGreedy,
    topK: f.topK ? field(TOP_K).to('int64').unsqueeze(-1) : null,
    topP: f.topP ? field(TOP_P).unsqueeze(-1) : null,
    uniforms: f.allGreedy ? null : field(UNIFORM),
  };
}

/**
 * Builds the per-row tensors of a batch's settings (one small host-to-device copy); row i draws the
 * token at `positions[i]` (the counter of its random number).
 */
export function samplingTensors(
  rows: readonly RowSampling[],
  vocabSize: number,
  device: Device,
  positions: readonly number[],
): SamplingTensors {
  if (positions.length !== rows.length)
    throw new RangeError(`samplingTensors: ${rows.length} rows but ${positions.length} positions (one a row)`);
  const settings = rows.map((r) => rowSettings(r, vocabSize));
  const packed = new Float64Array(SAMPLING_FIELDS * rows.length);
  settings.forEach((r, i) => writeSettings(packed, 0, rows.length, i, r, positions[i]));
  const fields = torch.tensor(packed, { shape: [SAMPLING_FIELDS, rows.length] }).to(device);
  return samplingFromFields(fields, samplingFeatures(settings, vocabSize));
}

/** logits / temperature per row [B, V] (the distribution logprobs are reported under). */
export function scaleLogits(logits: Tensor, temperature: Tensor): Tensor {
  return logits.div(temperature);
}

/**
 * log p(token) per row [B] under the scaled logits: scaled[token] - logsumexp(scaled), as `CausalLM.logprobs`.
 * `logsumexp` [B, 1] of `scaled` may be passed when already computed.
 */
export function tokenLogprobs(scaled: Tensor, tokens: Tensor, logsumexp: Tensor = scaled.logsumexp(-1, true)): Tensor {
  return scaled.gather(-1, tokens.unsqueeze(-1)).sub(logsumexp).squeeze(-1);
}

/** The most likely token per row [B] int64. */
export function greedyTokens(logits: Tensor): Tensor {
  return logits.argmax(-1);
}

/**
 * Scaled logits sorted in descending order [B, V], with what top-k and top-p drop set to -inf,
 * and the vocabulary index of each sorted column [B, V]. top-p keeps a token while the probability
 * of the tokens before it is below p (so the most likely token is always kept).
 */
export function truncateSorted(
  scaled: Tensor,
  topK: Tensor | null,
  topP: Tensor | null,
): { sorted: Tensor; index: Tensor } {
  let [sorted, index] = scaled.sort(-1, true);
  if (topK) {
    const rank = torch.arange(0, scaled.size(-1), 1, { device: scaled.device }).unsqueeze(0);
    sorted = sorted.maskedFill(rank.ge(topK), -Infinity);
  }
  if (topP) {
    const probs = sorted.softmax(-1);
    const before = probs.cumsum(-1).sub(probs);
    sorted = sorted.maskedFill(before.gt(topP), -Infinity);
  }
  return { sorted, index };
}

/**
 * One sample per row from softmax(logits) [B, V] (rows may hold -inf) by inverting the CDF: the
 * row's uniform number u ([B] in [0, 1)), u * total located in the running sum of the probabilities. That draws
 * index i with probability p_i, like the exponential race (argmax p / E), but without a random
 * number (a log) per vocabulary entry, which cost three times a tiny model's forward on a CPU.
 * `logsumexp` [B, 1] of the logits, when the caller has it, saves a pass over the vocabulary.
 */
export function sampleFromLogits(
  logits: Tensor,
  uniforms: Tensor,
  logsumexp: Tensor = logits.logsumexp(-1, true),
): Tensor {
  const cdf = logits.sub(logsumexp).exp().cumsum(-1);
  const total = cdf.narrow(-1, cdf.size(-1) - 1, 1).contiguous();
  const target = uniforms.unsqueeze(-1).mul(total);
  // right=True: the first index whose running sum passes the target, which never lands on a token of
  // probability 0. Rounding can put the target at the total itself: then take the last token whose
  // probability is not 0 (the first index where the running sum reaches the total).
  const drawn: Tensor = searchsorted(cdf, target, false, true, null, null);
  const last: Tensor = searchsorted(cdf, total, false, false, null, null);
  return drawn.minimum(last).squeeze(-1);
}

/**
 * The next token of every row and its logprob (float32 [B], see the module doc) from logits [B, V]
 * (float32, or the lm_head's output in the model's dtype: read as float32). Greedy rows take
 * the argmax; the others sample from the top-k/top-p truncated scaled distribution with their
 * uniform numbers (`s.uniforms`).
 */
export function sampleTokens(logits: Tensor, s: SamplingTensors): { tokens: Tensor; logprobs: Tensor } {
  // On CUDA without top-k/top-p: the same draw in one kernel (torch.sampleRows) instead of about a
  // dozen passes over [B, vocab] (1.1 ms a step at 256 rows of Qwen3's vocabulary on an H200); it
  // reads bf16 logits as they are, where a cast to float32 would write them out again at twice the bytes
  const oneKernel = logits.dtype === 'float32' || logits.dtype === 'bfloat16';
  if (logits.device !== 'cpu' && !s.topK && !s.topP && oneKernel && torch.hasFusedDecodeKernels()) {
    const B = logits.size(0);
    return torch.sampleRows(
      logits.contiguous(),
      s.temperature.reshape(B).contiguous(),
      s.uniforms?.contiguous() ?? null,
      s.greedy?.contiguous() ?? null,
    );
  }
  const x = logits.to('float32');
  const scaled = scaleLogits(x, s.temperature);
  const lse = scaled.logsumexp(-1, true);
  let tokens: Tensor;
  if (s.allGreedy) {
    tokens = greedyTokens(x);
  } else {
    let sampled: Tensor;
    const u = s.uniforms!;
    if (s.topK || s.topP) {
      const { sorted, index } = truncateSorted(scaled, s.topK, s.topP);
      sampled = index.gather(-1, sampleFromLogits(sorted, u).unsqueeze(-1)).squeeze(-1);
    } else {
      sampled = sampleFromLogits(scaled, u, lse);
    }
    tokens = s.greedy ? torch.where(s.greedy, greedyTokens(x), sampled) : sampled;
  }
  return { tokens, logprobs: tokenLogprobs(scaled, tokens, lse) };
}
