// The decode step's trunk with the fused kernels (src/torch/fused-decode.ts) on CUDA in bf16: per
// layer the stacked q/k/v matmul, one kernel for the q/k norms, RoPE and the cache write, the paged
// attention, the output matmul, one kernel for the residual add and the next norm, the stacked
// gate/up matmul, one for silu * up, the down matmul: 9 launches where the models' trunk
// (src/models/layers.ts) takes about 24. A step of at most 4 rows runs its smaller matmuls as gemvRows. The same math as that trunk: every kernel rounds where
// the ops it replaces round (the CUDA tests compare them), so the logits agree with the trunk's up
// to the order of a few sums. The residual stream is carried beside the normed activations, as
// vLLM's fused_add_rms_norm does: each add happens inside the following norm's kernel.
import * as torch from '../torch/index.js';
import type { Tensor } from '../torch/index.js';
import { embed } from '../models/index.js';
import type { KVCache } from './kv-cache.js';
import type { GenerationModel } from './forward.js';

/**
 * The largest weight a few-row step multiplies through gemvRows. On an H200, called eagerly
 * (bench/results/h200-decode-gemv.log), gemvRows takes 0.4-0.5 of libtorch's time on the 0.6B
 * shape's projections (4-12 MiB) and more than libtorch's on every lm_head and on the 4B shape's
 * gate/up and down; inside the decode graphs the 4B shape's q/k/v and o (21-31 MiB) through it made
 * batch 1 slower (241 -> 230 tokens/s, bench/results/h200-engine-decode.log), so they stay with libtorch.
 */
export const GEMV_MAX_WEIGHT_BYTES = 16 * 2 ** 20;

/** Why the fused trunk cannot run this model on this device and dtype, or null when it can. */
export function fusedDecodeUnsupported(m: GenerationModel, device: torch.Device, dtype: torch.DType): string | null {
  const { spec } = m;
  if (device === 'cpu') return 'the fused decode kernels run on CUDA';
  if (dtype !== 'bfloat16') return 'the fused decode kernels run in bf16';
  if (![64, 128, 256].includes(spec.headDim)) return `head dim ${spec.headDim} is not 64, 128 or 256`;
  if (spec.hiddenSize % 8 || spec.intermediateSize % 8) return 'hidden and intermediate sizes must be multiples of 8';
  if (!m.layers.every((p) => p.fused))
    return 'the fused decode kernels read the stacked q/k/v and gate/up weights (fuseWeights)';
  if (!torch.hasFusedDecodeKernels()) return 'this addon was not built against a CUDA libtorch';
  return null;
}

/**
 * Hidden states [B, hidden] after the final norm of one decode step (inputs as forward.ts's
 * DecodeInputs), writing each token's key and value at its slot in every layer; `attend` is the
 * decode attention over the cache (q [B, Hq, D] contiguous -> out [B, Hq, D]).
 */
export function fusedDecodeHidden(
  m: GenerationModel,
  cache: KVCache,
  o: { ids: Tensor; positions: Tensor; slots: Tensor },
  attend: (layer: number, q: Tensor) => Tensor,
): Tensor {
  const { spec } = m;
  const eps = spec.rmsNormEps;
  const B = o.ids.size(0);
  const invFreq = m.invFreq.to({ device: cache.device });
  // a step of few rows runs its smaller matmuls through gemvRows, libtorch's matmul the rest
  const linear = (x: Tensor, w: Tensor, b: Tensor | null) =>
    B <= torch.GEMV_MAX_ROWS && w.numel * 2 <= GEMV_MAX_WEIGHT_BYTES ? torch.gemvRows(x, w, b) : torch.linear(x, w, b);
  let x = embed(m.embedTokens, o.ids, spec.padTokenId);
  let residual: Tensor | null = null;
  m.layers.forEach((p, layer) => {
    const f = p.fused!;
    // what the next layer reads: the MLP's output (not yet added) and the residual stream before it
    const next = torch.scope(() => {
      const attnIn = torch.addRmsNorm(x, residual, p.inputNorm, eps);
      const q = torch.qkNormRopeCache(linear(attnIn.out, f.qkv, f.qkvBias), {
        norm: f.qkNorm,
        positions: o.positions,
        invFreq,
        slots: o.slots,
        kCache: cache.k[layer],
        vCache: cache.v[layer],
        numHeads: spec.numHeads,
        numKvHeads: spec.numKvHeads,
        headDim: spec.headDim,
        eps,
      });
      const attn = linear(attend(layer, q).view(B, spec.numHeads * spec.headDim), p.o, p.oBias);
      const mlpIn = torch.addRmsNorm(attn, attnIn.residual, p.postAttentionNorm, eps);
      const mlp = linear(torch.siluMul(linear(mlpIn.out, f.gateUp, f.gateUpBias)), p.down, p.downBias);
      return { x: mlp, residual: mlpIn.residual };
    });
    x = next.x;
    residual = next.residual;
  });
  return torch.addRmsNorm(x, residual, m.norm, eps).out;
}
