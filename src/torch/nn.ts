// Functions over tensors that models and losses use (torch.nn.functional's subset),
// plus the free-standing forms of cat/stack/where.
import { aten } from './op.js';
import type { Tensor, TensorOrScalar } from './tensor.js';
import type { DType } from './dtype.js';

const op = {
  cat: aten('cat'),
  stack: aten('stack'),
  where: aten('where', 'self'),
  linear: aten('linear'),
  embedding: aten('embedding'),
  sdpa: aten('scaled_dot_product_attention'),
  flash: aten('_flash_attention_forward'),
  rmsNorm: aten('rms_norm'),
  layerNorm: aten('layer_norm'),
  crossEntropy: aten('cross_entropy_loss'),
  mseLoss: aten('mse_loss'),
  dropout: aten('dropout'),
  logsigmoid: aten('log_sigmoid'),
};

export function cat(tensors: Tensor[], dim = 0): Tensor {
  return op.cat(tensors, dim);
}
export function stack(tensors: Tensor[], dim = 0): Tensor {
  return op.stack(tensors, dim);
}
/** a where cond is true, b elsewhere (numbers broadcast as scalars). */
export function where(cond: Tensor, a: TensorOrScalar, b: TensorOrScalar): Tensor {
  return op.where(cond, a, b);
}
/** x @ weight.T + bias; weight is [out, in] as in Hugging Face checkpoints. */
export function linear(x: Tensor, weight: Tensor, bias?: Tensor | null): Tensor {
  return op.linear(x, weight, bias ?? null);
}
/** Rows of `weight` [vocab, dim] picked by integer `ids`. */
export function embedding(weight: Tensor, ids: Tensor): Tensor {
  return op.embedding(weight, ids, -1, false, false);
}

export interface SdpaOptions {
  /** Boolean (true = attend) or additive float mask, broadcastable to [B, H, Lq, Lk]. */
  attnMask?: Tensor | null;
  isCausal?: boolean;
  scale?: number;
  /** Grouped-query attention: key/value with fewer heads than query. */
  enableGqa?: boolean;
  dropoutP?: number;
}
/** Scaled dot-product attention over [B, H, L, D] (flash/efficient kernels on CUDA). */
export function scaledDotProductAttention(q: Tensor, k: Tensor, v: Tensor, o: SdpaOptions = {}): Tensor {
  return op.sdpa(q, k, v, o.attnMask ?? null, o.dropoutP ?? 0, !!o.isCausal, o.scale ?? null, !!o.enableGqa);
}
export interface FlashVarlenOptions {
  /** Cumulative query and key lengths [B + 1] (int32): row b's queries and keys start at cuQ[b], cuK[b]. */
  cuQ: Tensor;
  cuK: Tensor;
  maxQ: number;
  maxK: number;
  causal?: boolean;
  scale: number;
  /** Keys each row uses [B] (int32), when fewer than cuK gives. */
  sequsedK?: Tensor | null;
  /** Each row's cache blocks [B, W] (int32), keys and values being [numBlocks, blockSize, Hkv, D]; only
   *  for a libtorch whose flash attention takes one (2.11's takes one argument fewer). */
  blockTable?: Tensor | null;
}
/**
 * Flash attention's varlen forward (CUDA, 16-bit): q [Tq, Hq, D] over k, v [Tk, Hkv, D] (GQA native),
 * rows delimited by cuQ and cuK -> [Tq, Hq, D]; the kernel's other outputs are freed.
 */
export function flashAttentionVarlen(q: Tensor, k: Tensor, v: Tensor, o: FlashVarlenOptions): Tensor {
  const [out, ...rest] = op.flash(
    q,
    k,
    v,
    o.cuQ,
    o.cuK,
    o.maxQ,
    o.maxK,
    0.0,
    !!o.causal,
    false,
    o.scale,
    null,
    null,
    o.sequsedK ?? null,
    null,
    ...(o.blockTable ? [o.blockTable] : []),
  ) as (Tensor | null)[];
  for (const t of rest) t?.dispose();
  return out!;
}
/** RMSNorm over the last dimension (libtorch's fused kernel where it has one). */
export function rmsNorm(x: Tensor, weight: Tensor | null, eps: number): Tensor {
  return op.rmsNorm(x, [x.size(-1)], weight, eps);
}
export function layerNorm(x: Tensor, weight: Tensor | null, bias: Tensor | null, eps = 1e-5): Tensor {
  return op.layerNorm(x, [x.size(-1)], weight, bias, eps, true);
}
const reductions = { none: 0, mean: 1, sum: 2 } as const;
/** Cross-entropy of logits [N, C] against class ids [N]. */
export function crossEntropy(
  logits: Tensor,
  target: Tensor,
  o: { reduction?: 'none' | 'mean' | 'sum'; ignoreIndex?: number; labelSmoothing?: number } = {},
): Tensor {
  return op.crossEntropy(
    logits,
    target,
    null,
    reductions[o.reduction ?? 'mean'],
    o.ignoreIndex ?? -100,
    o.labelSmoothing ?? 0,
  );
}
export function mseLoss(a: Tensor, b: Tensor, reduction: 'none' | 'mean' | 'sum' = 'mean'): Tensor {
  return op.mseLoss(a, b, reductions[reduction]);
}
export function dropout(x: Tensor, p: number, train: boolean): Tensor {
  return op.dropout(x, p, train);
}
export function logSigmoid(x: Tensor): Tensor {
  return op.logsigmoid(x);
}
export function softmax(x: Tensor, dim: number, dtype?: DType): Tensor {
  return x.softmax(dim, dtype);
}
export function logSoftmax(x: Tensor, dim: number, dtype?: DType): Tensor {
  return x.logSoftmax(dim, dtype);
}
