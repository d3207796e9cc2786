// The decoder layers Qwen2, Qwen3 and Llama share, written op for op as transformers
// computes them (so a bf16 model rounds where Python's rounds). Activations are packed:
// one row of T tokens from several sequences, laid out [T, ...] with no batch dimension.
import * as torch from '../torch/index.js';
import type { Tensor } from '../torch/index.js';
import type { DecoderSpec, RopeSpec } from './config.js';
import type { PackedBatch } from './packing.js';

// ---- RMSNorm -------------------------------------------------------------------------------------

/**
 * transformers' RMSNorm: x.float() * rsqrt(mean(x^2) + eps), cast back to x's dtype, times the weight
 * in x's dtype. ATen's rms_norm without a weight is the first part in one fused kernel.
 */
export function rmsNorm(x: Tensor, weight: Tensor, eps: number): Tensor {
  return torch.rmsNorm(x, null, eps).mul(weight);
}

// ---- RoPE ---------------------------------------------------------------------------------------

const op = {
  powScalar: torch.aten('pow', 'Scalar'),
  embedding: torch.aten('embedding'),
};

/** Inverse frequencies [headDim/2] in float32, computed with the same ops and order as transformers. */
export function ropeInvFreq(rope: RopeSpec, headDim: number): Tensor {
  return torch.scope(() => {
    const exponents = torch.arange(0, headDim, 2, { dtype: 'int64' }).to('float32').div(headDim);
    const invFreq = op.powScalar(rope.theta, exponents).reciprocal();
    if (rope.type === 'default') return invFreq;
    // _compute_llama3_parameters
    const { factor, lowFreqFactor, highFreqFactor, originalMaxPositionEmbeddings: oldLen } = rope;
    const lowFreqWavelen = oldLen / lowFreqFactor;
    const highFreqWavelen = oldLen / highFreqFactor;
    const wavelen = invFreq.reciprocal().mul(2 * Math.PI);
    const scaled = torch.where(wavelen.gt(lowFreqWavelen), invFreq.div(factor), invFreq);
    const smooth = wavelen
      .reciprocal()
      .mul(oldLen)
      .sub(lowFreqFactor)
      .div(highFreqFactor - lowFreqFactor);
    const smoothed = smooth.rsub(1).mul(scaled).div(factor).add(smooth.mul(scaled));
    const medium = wavelen.lt(highFreqWavelen).logicalNot().logicalAnd(wavelen.gt(lowFreqWavelen).logicalNot());
    return torch.where(medium, smoothed, scaled);
  });
}

/** cos and sin [T, 1, headDim] for the tokens' positions, computed in float32 and cast to `dtype` (as transformers). */
export function ropeTables(invFreq: Tensor, positionIds: Tensor, dtype: torch.DType): { cos: Tensor; sin: Tensor } {
  return torch.scope(() => {
    const inv = invFreq.to({ device: positionIds.device });
    const freqs = positionIds.to('float32').unsqueeze(-1).mul(inv); // [T, D/2]
    const emb = torch.cat([freqs, freqs], -1).unsqueeze(1); // [T, 1, D]
    return { cos: emb.cos().to(dtype), sin: emb.sin().to(dtype) };
  });
}

function rotateHalf(x: Tensor): Tensor {
  const half = x.size(-1) / 2;
  return torch.cat([x.narrow(-1, half, half).neg(), x.narrow(-1, 0, half)], -1);
}

/** x * cos + rotate_half(x) * sin over [T, H, D]. */
export function applyRope(x: Tensor, cos: Tensor, sin: Tensor): Tensor {
  return x.mul(cos).add(rotateHalf(x).mul(sin));
}

// ---- attention ------------------------------------------------------------------------------------

export type AttentionBackend = 'auto' | 'flash' | 'sdpa';

/**
 * Whether attention runs as flash attention: always for 'flash'; for 'auto' where the kernel exists
 * (CUDA, 16-bit floats, head_dim a multiple of 8 up to 256). Training, prefill and decode ask this one question.
 */
export function usesFlashAttention(
  backend: AttentionBackend,
  device: torch.Device,
  dtype: torch.DType,
  headDim: number,
): boolean {
  if (backend === 'flash') return true;
  return (
    backend === 'auto' &&
    device !== 'cpu' &&
    (dtype === 'bfloat16' || dtype === 'float16') &&
    headDim % 8 === 0 &&
    headDim <= 256
  );
}

/**
 * Causal attention over packed sequences: q [T, Hq, D], k and v [T, Hkv, D] -> [T, Hq, D].
 * Tokens attend only within their own sequence (cuSeqlens). On CUDA with 16-bit floats this is
 * one flash-attention varlen call (GQA native, autograd through ATen's derivative); elsewhere one
 * scaled_dot_product_attention per sequence (the tested reference).
 */
export function packedAttention(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  batch: PackedBatch,
  scale: number,
  backend: AttentionBackend = 'auto',
): Tensor {
  if (usesFlashAttention(backend, q.device, q.dtype, q.size(-1))) {
    const cu = batch.cuSeqlensTensor(q.device);
    return torch.flashAttentionVarlen(q, k, v, {
      cuQ: cu,
      cuK: cu,
      maxQ: batch.maxSeqlen,
      maxK: batch.maxSeqlen,
      causal: true,
      scale,
    });
  }
  const gqa = q.size(1) !== k.size(1);
  const outs: Tensor[] = [];
  const cu = batch.cuSeqlens;
  for (let s = 0; s + 1 < cu.length; s++) {
    const start = cu[s];
    const len = cu[s + 1] - start;
    if (len === 0) continue;
    const [qs, ks, vs] = [q, k, v].map((t) => t.narrow(0, start, len).transpose(0, 1).unsqueeze(0)); // [1, H, L, D]
    const o = torch.scaledDotProductAttention(qs, ks, vs, { isCausal: true, scale, enableGqa: gqa });
    outs.push(o.squeeze(0).transpose(0, 1)); // [L, Hq, D]
  }
  return outs.length === 1 ? outs[0] : torch.cat(outs, 0);
}

/**
 * How one layer's attention runs over the N tokens of a forward: q [N, Hq, D] and their new k, v
 * [N, Hkv, D] (RoPE applied) -> [N, Hq, D]. Training attends within packed rows (`packedAttention`);
 * the engine's prefill also writes k, v into its cache, and its decode step attends over the cache.
 */
export type Attend = (layer: number, q: Tensor, k: Tensor, v: Tensor) => Tensor;

/** The attention of a packed training forward (no cache): each token attends within its own sequence. */
export function packedAttend(spec: DecoderSpec, batch: PackedBatch, backend: AttentionBackend): Attend {
  const scale = 1 / Math.sqrt(spec.headDim);
  return (_layer, q, k, v) => packedAttention(q, k, v, batch, scale, backend);
}

// ---- the decoder layer ------------------------------------------------------------------------------

/** One layer's parameters, by their role (the tensors are the model's named parameters). */
export interface LayerParams {
  inputNorm: Tensor;
  postAttentionNorm: Tensor;
  q: Tensor;
  k: Tensor;
  v: Tensor;
  o: Tensor;
  qBias: Tensor | null;
  kBias: Tensor | null;
  vBias: Tensor | null;
  oBias: Tensor | null;
  qNorm: Tensor | null;
  kNorm: Tensor | null;
  gate: Tensor;
  up: Tensor;
  down: Tensor;
  gateBias: Tensor | null;
  upBias: Tensor | null;
  downBias: Tensor | null;
  /** Stacked copies an engine may add so a layer launches fewer kernels (vLLM's fused layouts). */
  fused?: FusedLayerParams;
}

/**
 * [q; k; v] stacked [(Hq + 2 Hkv) D, hidden] (one matmul instead of three) with its bias, [gate; up]
 * [2 I, hidden] with its bias, and the q and k norms as one [Hq + Hkv, D] weight (q and k are
 * normed and rotated together). Same math as the separate weights, fewer launches.
 */
export interface FusedLayerParams {
  qkv: Tensor;
  qkvBias: Tensor | null;
  gateUp: Tensor;
  gateUpBias: Tensor | null;
  qkNorm: Tensor | null;
}

/** What every layer of one forward shares: RoPE tables of the tokens' positions, and the attention. */
export interface LayerContext {
  cos: Tensor;
  sin: Tensor;
  attend: Attend;
}

/** The layer context of tokens at `positions` [N] (RoPE tables in `dtype`) with this attention. */
export function layerContext(invFreq: Tensor, positions: Tensor, dtype: torch.DType, attend: Attend): LayerContext {
  return { ...ropeTables(invFreq, positions, dtype), attend };
}

/**
 * Queries, keys and values of x [T, hidden] (already normed): q [T, Hq, D], k and v [T, Hkv, D],
 * with Qwen3's per-head q/k norms and RoPE (cos, sin [T, D]) applied. Training and the engine share it.
 */
export function qkvProjection(
  spec: DecoderSpec,
  p: LayerParams,
  x: Tensor,
  cos: Tensor,
  sin: Tensor,
): { q: Tensor; k: Tensor; v: Tensor } {
  const T = x.size(0);
  if (p.fused) return fusedQkvProjection(spec, p.fused, x, cos, sin);
  let q = torch.linear(x, p.q, p.qBias).view(T, spec.numHeads, spec.headDim);
  let k = torch.linear(x, p.k, p.kBias).view(T, spec.numKvHeads, spec.headDim);
  const v = torch.linear(x, p.v, p.vBias).view(T, spec.numKvHeads, spec.headDim);
  if (p.qNorm && p.kNorm) {
    q = rmsNorm(q, p.qNorm, spec.rmsNormEps);
    k = rmsNorm(k, p.kNorm, spec.rmsNormEps);
  }
  return { q: applyRope(q, cos, sin), k: applyRope(k, cos, sin), v };
}

/** qkvProjection over the stacked weights: q and k are views of one normed, rotated [T, Hq + Hkv, D]. */
function fusedQkvProjection(
  spec: DecoderSpec,
  f: FusedLayerParams,
  x: Tensor,
  cos: Tensor,
  sin: Tensor,
): { q: Tensor; k: Tensor; v: Tensor } {
  const T = x.size(0);
  const { numHeads: hq, numKvHeads: hkv, headDim: d } = spec;
  const qkv = torch.linear(x, f.qkv, f.qkvBias); // [T, (Hq + 2 Hkv) D]
  let qk = qkv.narrow(1, 0, (hq + hkv) * d).view(T, hq + hkv, d);
  const v = qkv.narrow(1, (hq + hkv) * d, hkv * d).view(T, hkv, d);
  if (f.qkNorm) qk = rmsNorm(qk, f.qkNorm, spec.rmsNormEps);
  qk = applyRope(qk, cos, sin);
  return { q: qk.narrow(1, 0, hq), k: qk.narrow(1, hq, hkv), v };
}

/** The attention output projection: out [T, Hq, D] -> [T, hidden]. */
export function outputProjection(spec: DecoderSpec, p: LayerParams, out: Tensor): Tensor {
  return torch.linear(out.reshape(out.size(0), spec.numHeads * spec.headDim), p.o, p.oBias);
}

/** Self-attention block of layer `layer`: x [T, hidden] (already normed) -> [T, hidden]. */
export function attentionBlock(spec: DecoderSpec, p: LayerParams, layer: number, x: Tensor, ctx: LayerContext): Tensor {
  const { q, k, v } = qkvProjection(spec, p, x, ctx.cos, ctx.sin);
  return outputProjection(spec, p, ctx.attend(layer, q, k, v)); // attention out [T, Hq, D]
}

/** SwiGLU MLP: down(silu(gate(x)) * up(x)). */
export function mlpBlock(p: LayerParams, x: Tensor): Tensor {
  if (p.fused) {
    const gu = torch.linear(x, p.fused.gateUp, p.fused.gateUpBias); // [T, 2 I]
    const i = gu.size(-1) / 2;
    return torch.linear(
      gu
        .narrow(-1, 0, i)
        .silu()
        .mul(gu.narrow(-1, i, i)),
      p.down,
      p.downBias,
    );
  }
  return torch.linear(
    torch
      .linear(x, p.gate, p.gateBias)
      .silu()
      .mul(torch.linear(x, p.up, p.upBias)),
    p.down,
    p.downBias,
  );
}

/** Pre-norm decoder layer `layer` (its index, for the attention's cache): h + attn(norm(h)), then + mlp(norm(.)). */
export function decoderLayer(spec: DecoderSpec, p: LayerParams, layer: number, h: Tensor, ctx: LayerContext): Tensor {
  return torch.scope(() => {
    const a = h.add(attentionBlock(spec, p, layer, rmsNorm(h, p.inputNorm, spec.rmsNormEps), ctx));
    return a.add(mlpBlock(p, rmsNorm(a, p.postAttentionNorm, spec.rmsNormEps)));
  });
}

/** Token embeddings (padding_idx as transformers sets it, which only changes the gradient). */
export function embed(weight: Tensor, ids: Tensor, paddingIdx: number | null): Tensor {
  return op.embedding(weight, ids, paddingIdx ?? -1, false, false);
}

// ---- the trunk --------------------------------------------------------------------------------------

/** What the trunk reads of a model: its shape and parameters by role (as forwards read them). */
export interface TrunkWeights {
  spec: DecoderSpec;
  embedTokens: Tensor;
  layers: readonly LayerParams[];
  /** The final norm's weight. */
  norm: Tensor;
}

/**
 * The one trunk every forward runs (training, scoring, the engine's prefill and decode): embedding,
 * the decoder layers, the final norm; ids [N] -> hidden [N, hidden]. Only `ctx.attend` differs.
 * `layerInputs`, when given, receives each layer's input and then the final norm's input
 * (numLayers + 1 tensors: what a checkpointed backward recomputes from).
 */
export function trunk(w: TrunkWeights, ids: Tensor, ctx: LayerContext, layerInputs?: Tensor[]): Tensor {
  const { spec } = w;
  let h = embed(w.embedTokens, ids, spec.padTokenId);
  w.layers.forEach((p, i) => {
    layerInputs?.push(h);
    h = decoderLayer(spec, p, i, h, ctx);
  });
  layerInputs?.push(h);
  return rmsNorm(h, w.norm, spec.rmsNormEps);
}
