// The decode step's trunk with the fused kernels (src/torch/fused-decode.ts) on CUDA in bf16: per
// layer the stacked q/k/v matmul, one kernel for the q/k norms, RoPE and the cache write, the paged
// attention, the output matmul, one kernel for the residual add and the next norm, the stacked
// gate/up matmul, one for silu * up, the down matmul: 9 launches where the models' trunk
// (src/models/layers.ts) takes about 24. A step of one row (and of up to 4, on small weights),
// bound by reading the weights once, runs its matmuls as gemvRows with the norms and silu * up
// folded into them: 6 launches (7 with a split attention). Each kernel starts while the one before
// ends (torch.setDependentLaunches). A step of one row of a model with large layers runs every
// layer in one kernel instead (torch.decodeTrunk, decodeTrunkRows), which keeps the memory streaming
// weights through the attention and from one matmul to the next, where the chain of kernels idles.
// The same math as that trunk: every kernel rounds where the ops it replaces round (the CUDA tests
// compare them), so the logits agree with the trunk's up to the order of a few sums. The residual
// stream is carried beside the normed activations, as vLLM's fused_add_rms_norm does: each add
// happens inside the following norm's kernel.
import * as torch from '../torch/index.js';
import type { Tensor } from '../torch/index.js';
import { embed } from '../models/index.js';
import type { KVCache } from './kv-cache.js';
import type { GenerationModel } from './forward.js';

/**
 * The largest weights a step multiplies through gemvRows, at one row and at 2-4 rows; above them,
 * libtorch's matmul (and the norm and silu * up as kernels of their own). Measured inside CUDA
 * graphs on an H200 (bench/results/h200-decode-gemv.log): at one row gemvRows reads every weight
 * of the 0.6B and 4B shapes' layers at least as fast as libtorch's matmul (1.01x-5.2x; 3.3-3.7 TB/s
 * on the 4B shape's gate/up and down); at 4 rows its sums, not its reads, bound it, and it is
 * faster only on weights of up to 6 MiB (the 0.6B shape's o and down: 3.3x and 1.0x; 0.53x-0.86x above).
 */
export const GEMV_MAX_WEIGHT_BYTES = { oneRow: 256 * 2 ** 20, fewRows: 6 * 2 ** 20 };

/**
 * The decode trunk (torch.decodeTrunk: every layer in one kernel) runs steps of one row of models
 * whose layers hold at least DECODE_TRUNK_MIN_LAYER_BYTES of weights: below that, its hand-offs
 * between blocks at each matmul and the attention cost more than the layered kernels' launches.
 * Measured on the H200 (bench/results/h200-decode-trunk.log, batch 1): the Qwen3-4B shape (192 MiB a
 * layer) 342-343 tokens/s through the trunk against 326-329 layered; the Qwen3-0.6B shape (30 MiB a
 * layer) 1,002-1,005 against 1,069. Its sums are the layered kernels' (the same bits), so the choice
 * changes speed only.
 */
export const DECODE_TRUNK_MIN_LAYER_BYTES = 128 * 2 ** 20;

/**
 * The most rows a step of this model runs through the decode trunk: 1 where its layers are large
 * enough (DECODE_TRUNK_MIN_LAYER_BYTES), else 0; AGENT_R1_DECODE_TRUNK_ROWS=0..4 sets it for every
 * model (0: never), to compare the two paths in the benches and tests.
 */
export function decodeTrunkRows(m: GenerationModel): number {
  const v = process.env.AGENT_R1_DECODE_TRUNK_ROWS;
  if (v !== undefined && v !== '') {
    if (!/^[0-4]$/.test(v))
      throw new RangeError(`AGENT_R1_DECODE_TRUNK_ROWS must be 0 to 4 (0: never run the decode trunk), got '${v}'`);
    return Number(v);
  }
  const p = m.layers[0];
  const layerBytes = [p.q, p.k, p.v, p.o, p.gate, p.up, p.down].reduce((sum, w) => sum + w.numel * 2, 0);
  return layerBytes >= DECODE_TRUNK_MIN_LAYER_BYTES ? 1 : 0;
}

/** Why the decode trunk cannot run a step of `rows` rows of this model over this cache, or null when it can. */
export function decodeTrunkUnsupported(m: GenerationModel, cache: KVCache, rows: number): string | null {
  const { spec } = m;
  return torch.decodeTrunkUnsupported(cache.device, {
    hidden: spec.hiddenSize,
    numHeads: spec.numHeads,
    numKvHeads: spec.numKvHeads,
    headDim: spec.headDim,
    intermediate: spec.intermediateSize,
    layers: m.layers.length,
    rows,
    blockSize: cache.blockSize,
  });
}

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
  o: { ids: Tensor; positions: Tensor; slots: Tensor; blockTables: Tensor },
  attend: (layer: number, q: Tensor) => Tensor,
): Tensor {
  const { spec } = m;
  const eps = spec.rmsNormEps;
  const B = o.ids.size(0);
  const invFreq = m.invFreq.to({ device: cache.device });
  if (B <= decodeTrunkRows(m) && !decodeTrunkUnsupported(m, cache, B)) {
    const trunk = torch.decodeTrunk(
      embed(m.embedTokens, o.ids, spec.padTokenId),
      m.layers.map((p, layer) => {
        const f = p.fused!;
        return {
          qkv: f.qkv,
          qkvBias: f.qkvBias,
          inputNorm: p.inputNorm,
          qkNorm: f.qkNorm,
          o: p.o,
          oBias: p.oBias,
          postAttentionNorm: p.postAttentionNorm,
          gateUp: f.gateUp,
          gateUpBias: f.gateUpBias,
          down: p.down,
          downBias: p.downBias,
          kCache: cache.k[layer],
          vCache: cache.v[layer],
        };
      }),
      {
        positions: o.positions,
        slots: o.slots,
        blockTables: o.blockTables,
        invFreq,
        blockSize: cache.blockSize,
        eps,
        scale: 1 / Math.sqrt(spec.headDim),
      },
    );
    return torch.addRmsNorm(trunk.out, trunk.residual, m.norm, eps).out;
  }
  // a step of few rows runs its matmuls through gemvRows, with the norm before or silu * up folded in
  const gemvMaxBytes =
    B === 1 ? GEMV_MAX_WEIGHT_BYTES.oneRow : B <= torch.GEMV_MAX_ROWS ? GEMV_MAX_WEIGHT_BYTES.fewRows : 0;
  const viaGemv = (w: Tensor) => w.numel * 2 <= gemvMaxBytes;
  const linear = (x: Tensor, w: Tensor, b: Tensor | null) =>
    viaGemv(w) ? torch.gemvRows(x, w, b) : torch.linear(x, w, b);
  const normLinear = (x: Tensor, residual: Tensor | null, norm: Tensor, w: Tensor, b: Tensor | null) => {
    if (viaGemv(w)) return torch.addRmsNormGemvRows(x, residual, norm, eps, w, b);
    const normed = torch.addRmsNorm(x, residual, norm, eps);
    return { out: torch.linear(normed.out, w, b), residual: normed.residual };
  };
  const siluLinear = (gateUp: Tensor, w: Tensor, b: Tensor | null) =>
    viaGemv(w) ? torch.gemvRows(gateUp, w, b, { siluMul: true }) : torch.linear(torch.siluMul(gateUp), w, b);
  let x = embed(m.embedTokens, o.ids, spec.padTokenId);
  let residual: Tensor | null = null;
  m.layers.forEach((p, layer) => {
    const f = p.fused!;
    // what the next layer reads: the MLP's output (not yet added) and the residual stream before it
    const next = torch.scope(() => {
      const qkv = normLinear(x, residual, p.inputNorm, f.qkv, f.qkvBias);
      const q = torch.qkNormRopeCache(qkv.out, {
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
      const gateUp = normLinear(attn, qkv.residual, p.postAttentionNorm, f.gateUp, f.gateUpBias);
      return { x: siluLinear(gateUp.out, p.down, p.downBias), residual: gateUp.residual };
    });
    x = next.x;
    residual = next.residual;
  });
  return torch.addRmsNorm(x, residual, m.norm, eps).out;
}
