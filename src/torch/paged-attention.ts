// Decode attention over a paged KV cache, read in place (native/src/paged_attention.cc: a CUDA
// kernel compiled at run time by NVRTC). For each sequence b, q[b] (one token, Hq heads) attends
// over the tokens [0, positions[b]] that its block table places in the cache: token p lives at
// slot blockTables[b][p / blockSize] * blockSize + p % blockSize of k and v ([slots, Hkv, D]).
import { native } from './native.js';
import { withTorchError } from './errors.js';
import { type Tensor, wrap } from './tensor.js';
import { cudaIndex, type Device } from './device.js';

/** Whether this addon has the kernel (a build against a CUDA libtorch). */
export function hasPagedDecodeAttention(): boolean {
  return native.builtWithCuda;
}

/**
 * Compiles and loads the kernel for this head dim, group size and cache block size now (it cannot be
 * during a CUDA graph capture).
 */
export function preparePagedDecodeAttention(device: Device, headDim: number, group: number, blockSize: number): void {
  withTorchError('pagedDecodeAttentionPrepare', [], () =>
    native.pagedDecodeAttentionPrepare(cudaIndex(device), headDim, group, blockSize),
  );
}

/**
 * out [B, Hq, D] = softmax(q k^T * scale) v per sequence over its cached tokens. q: bf16 [B, Hq, D];
 * k, v: bf16 [slots, Hkv, D] (Hq a multiple of Hkv, at most 8 times); blockTables: int64 [B, W];
 * positions: int64 [B]. `splits`: each sequence's tokens cut into this many ranges, one thread
 * block each, merged after (1 to 64; default: the kernel's choice, more when few sequences would
 * leave SMs idle).
 */
export function pagedDecodeAttention(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  blockTables: Tensor,
  positions: Tensor,
  o: { blockSize: number; scale: number; splits?: number },
): Tensor {
  return wrap(
    withTorchError('pagedDecodeAttention', [q.shape, k.shape, blockTables.shape], () =>
      native.pagedDecodeAttention(
        q.handle$,
        k.handle$,
        v.handle$,
        blockTables.handle$,
        positions.handle$,
        o.blockSize,
        o.scale,
        o.splits ?? 0,
      ),
    ),
  );
}
