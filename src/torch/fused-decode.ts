// The engine's fused decode kernels (native/src/fused_decode.cc: CUDA C compiled at run time by
// NVRTC), each the same values as the libtorch ops it replaces up to the order of a sum, in one
// launch: what a decode step of one token per sequence is made of besides its matmuls and attention.
import { native } from './native.js';
import { withTorchError } from './errors.js';
import { type Tensor, wrap } from './tensor.js';
import { cudaIndex, type Device } from './device.js';

/** Whether this addon has the kernels (a build against a CUDA libtorch). */
export function hasFusedDecodeKernels(): boolean {
  return native.builtWithCuda;
}

/** Compiles and loads the kernels for this head dim now (they cannot be during a CUDA graph capture). */
export function prepareFusedDecodeKernels(device: Device, headDim: number): void {
  withTorchError('prepareFusedDecodeKernels', [], () => native.fusedDecodePrepare(cudaIndex(device), headDim));
}

/**
 * With a residual: r = x + residual, then out = rms_norm(r) * weight; returns { out, residual: r }.
 * Without: out = rms_norm(x) * weight and residual = x (a pre-norm trunk's first norm).
 * bf16 [T, H] (H even), weight [H].
 */
export function addRmsNorm(
  x: Tensor,
  residual: Tensor | null,
  weight: Tensor,
  eps: number,
): { out: Tensor; residual: Tensor } {
  const [out, r] = withTorchError('addRmsNorm', [x.shape, weight.shape], () =>
    native.fusedAddRmsNorm(x.handle$, residual?.handle$ ?? null, weight.handle$, eps),
  );
  return { out: wrap(out), residual: r ? wrap(r) : x };
}

/**
 * Per head of qkv [T, (Hq + 2 Hkv) * D] (the stacked q/k/v projection, bf16): q and k normed by
 * `norm` [Hq + Hkv, D] when given (Qwen3's q/k norms), then rotated (rotate-half RoPE at
 * `positions` [T] int64 with `invFreq` [D / 2] float32 on the device); k and v written to the
 * caches [slots, Hkv, D] at `slots` [T] int64. Returns q [T, Hq, D], contiguous.
 */
export function qkNormRopeCache(
  qkv: Tensor,
  o: {
    norm: Tensor | null;
    positions: Tensor;
    invFreq: Tensor;
    slots: Tensor;
    kCache: Tensor;
    vCache: Tensor;
    numHeads: number;
    numKvHeads: number;
    headDim: number;
    eps: number;
  },
): Tensor {
  return wrap(
    withTorchError('qkNormRopeCache', [qkv.shape, o.kCache.shape], () =>
      native.fusedQkNormRopeCache(
        qkv.handle$,
        o.norm?.handle$ ?? null,
        o.positions.handle$,
        o.invFreq.handle$,
        o.slots.handle$,
        o.kCache.handle$,
        o.vCache.handle$,
        o.numHeads,
        o.numKvHeads,
        o.headDim,
        o.eps,
      ),
    ),
  );
}

/** silu(gate) * up of gateUp [T, 2 I] = [gate | up] (bf16, I even) -> [T, I]. */
export function siluMul(gateUp: Tensor): Tensor {
  return wrap(withTorchError('siluMul', [gateUp.shape], () => native.fusedSiluMul(gateUp.handle$)));
}

/**
 * dst.copy_(src) between a contiguous pinned host tensor and a contiguous CUDA tensor (either way) of
 * one dtype and size (a multiple of 4 bytes), as one kernel on the CUDA tensor's stream that reaches
 * the host memory through its device address: the copy engine's transfer that a non-blocking copy_
 * queues starts some microseconds after the work ahead of it ends, where a kernel starts at once.
 */
export function copyPinned(dst: Tensor, src: Tensor): void {
  withTorchError('copyPinned', [dst.shape, src.shape], () => native.fusedCopyPinned(dst.handle$, src.handle$));
}

/** Compiles and loads `sampleRows` (and copyPinned's kernel) now (it cannot be during a CUDA graph capture). */
export function prepareSampleRows(device: Device): void {
  withTorchError('prepareSampleRows', [], () => native.fusedSamplingPrepare(cudaIndex(device)));
}

/**
 * Each row's next token and its logprob from float32 or bf16 logits [B, V] on CUDA, in one kernel: the
 * values of the engine's sampleTokens without top-k and top-p (src/engine/sampling.ts) up to the
 * order of sums. scaled = logits / temperature [B]; a row is greedy (first argmax) where `greedy`
 * [B] bool says so, or every row when `uniforms` is null; otherwise it takes the first token whose
 * running sum of softmax(scaled) passes its uniform number [B] in [0, 1). logprob = log softmax(scaled)[token].
 */
export function sampleRows(
  logits: Tensor,
  temperature: Tensor,
  uniforms: Tensor | null,
  greedy: Tensor | null,
): { tokens: Tensor; logprobs: Tensor } {
  const [t, l] = withTorchError('sampleRows', [logits.shape, temperature.shape], () =>
    native.fusedSampleRows(logits.handle$, temperature.handle$, uniforms?.handle$ ?? null, greedy?.handle$ ?? null),
  );
  return { tokens: wrap(t), logprobs: wrap(l) };
}

/** The most rows `gemvRows` takes. */
export const GEMV_MAX_ROWS = 4;

/**
 * x [M, K] W^T (+ bias) for M <= GEMV_MAX_ROWS rows in bf16 (W [N, K], K a multiple of 8): a linear
 * bound by reading the weight once (src/engine/fused-decode.ts says where it pays). With `siluMul`,
 * x is a gate/up projection's output [M, 2 K] and silu(gate) * up (as siluMul rounds it) is multiplied.
 */
export function gemvRows(x: Tensor, weight: Tensor, bias: Tensor | null, o: { siluMul?: boolean } = {}): Tensor {
  const [out] = withTorchError('gemvRows', [x.shape, weight.shape], () =>
    native.fusedGemvRows(x.handle$, weight.handle$, bias?.handle$ ?? null, o.siluMul ? 1 : 0, null, null, 0),
  );
  return wrap(out);
}

/**
 * addRmsNorm(x, residual, normWeight, eps) and gemvRows of its output by `weight` (+ bias) in one
 * kernel: returns { out: rms_norm(r) * normWeight W^T (+ bias), residual: r }, r = x + residual (or x).
 */
export function addRmsNormGemvRows(
  x: Tensor,
  residual: Tensor | null,
  normWeight: Tensor,
  eps: number,
  weight: Tensor,
  bias: Tensor | null,
): { out: Tensor; residual: Tensor } {
  const [out, r] = withTorchError('addRmsNormGemvRows', [x.shape, weight.shape], () =>
    native.fusedGemvRows(
      x.handle$,
      weight.handle$,
      bias?.handle$ ?? null,
      2,
      residual?.handle$ ?? null,
      normWeight.handle$,
      eps,
    ),
  );
  return { out: wrap(out), residual: r ? wrap(r) : x };
}

/**
 * Programmatic dependent launches of the engine's CUDA kernels (on by default, on devices of
 * compute capability 9.0 and up): each may start while the one before it ends, its first weight
 * loads overlapping that kernel's last blocks. Off: each starts after the one before has ended
 * (bench/engine-decode.ts --dependent-launch off measures the difference). For every later launch.
 */
export function setDependentLaunches(on: boolean): void {
  withTorchError('setDependentLaunches', [], () => native.setDependentLaunches(on));
}

/** Whether programmatic dependent launches are on (setDependentLaunches). */
export function dependentLaunches(): boolean {
  return withTorchError('dependentLaunches', [], () => native.dependentLaunches());
}
