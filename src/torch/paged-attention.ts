// Decode attention over a paged KV cache, read in place (native/src/paged_attention.cc: a CUDA
// kernel compiled at run time by NVRTC). For each sequence b, q[b] (one token, Hq heads) attends
// over the tokens [0, positions[b]] that its block table places in the cache: token p lives at
// slot blockTables[b][p / blockSize] * blockSize + p % blockSize of k and v ([slots, Hkv, D]).
// qkNormRopePagedAttention folds the decode step's q/k norms, RoPE and cache write in (one launch
// where qkNormRopeCache and pagedDecodeAttention take two).
import { native } from './native.js';
import { TorchError, withTorchError } from './errors.js';
import { type Tensor, wrap } from './tensor.js';
import { cudaIndex, type Device } from './device.js';

/** Whether this addon has the kernel (a build against a CUDA libtorch). */
export function hasPagedDecodeAttention(): boolean {
  return native.builtWithCuda;
}

/**
 * Compiles and loads the kernel for this head dim, group size and cache block size now, and with
 * `fusedQkv` the variant `qkNormRopePagedAttention` runs, and allocates the device's counters of
 * split launches (none of this can be done during a CUDA graph capture).
 */
export function preparePagedDecodeAttention(
  device: Device,
  headDim: number,
  group: number,
  blockSize: number,
  o: { fusedQkv?: boolean } = {},
): void {
  withTorchError('pagedDecodeAttentionPrepare', [], () =>
    native.pagedDecodeAttentionPrepare(cudaIndex(device), headDim, group, blockSize, o.fusedQkv ?? false),
  );
}

/** The most splits of a sequence's tokens (`splits` of pagedDecodeAttention and qkNormRopePagedAttention). */
const MAX_SPLITS = 64;

function checkSplits(op: string, splits: number | undefined): number {
  const n = splits ?? 0;
  if (!Number.isInteger(n) || n < 0 || n > MAX_SPLITS)
    throw new TorchError(
      `${op}: splits must be an integer from 0 (the default choice) to ${MAX_SPLITS}, got ${n}`,
      'argument',
      op,
    );
  return n;
}

/**
 * out [B, Hq, D] = softmax(q k^T * scale) v per sequence over its cached tokens. q: bf16 [B, Hq, D];
 * k, v: bf16 [slots, Hkv, D] (Hq a multiple of Hkv, at most 8 times); blockTables: int64 [B, W];
 * positions: int64 [B]. `splits`: each sequence's tokens cut into this many ranges, one thread
 * block each, merged by the last of them to finish, in the same launch (1 to 64; default: the
 * kernel's choice, more when few sequences would leave SMs idle).
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
        checkSplits('pagedDecodeAttention', o.splits),
      ),
    ),
  );
}

/**
 * qkNormRopeCache (src/torch/fused-decode.ts) then pagedDecodeAttention in one kernel, bit for bit
 * the same out, kCache and vCache: from qkv [B, (Hq + 2 Hkv) * D] (a decode step's stacked q/k/v
 * projection, bf16, unit column stride), each query head normed by `norm` [Hq + Hkv, D] when given
 * (Qwen3's q/k norms) and rotated (rotate-half RoPE at `positions` [B] int64 with `invFreq` [D / 2]
 * float32 on the device), attends over its sequence's tokens [0, positions[b]] in the cache, whose
 * new token's key (normed and rotated alike) and value are written at `slots` [B] int64 first.
 * kCache, vCache: bf16 [slots, Hkv, D] (D 64, 128 or 256; Hq a multiple of Hkv, at most 8 times);
 * blockTables: int64 [B, W]. slots[b] must be the slot of position positions[b] in row b's block
 * table (blockTables[b][p / blockSize] * blockSize + p % blockSize), as a decode step's are: the
 * kernel writes it and reads it back in the same launch. `splits` as pagedDecodeAttention's.
 * Returns out [B, Hq, D].
 */
export function qkNormRopePagedAttention(
  qkv: Tensor,
  o: {
    norm: Tensor | null;
    positions: Tensor;
    invFreq: Tensor;
    slots: Tensor;
    kCache: Tensor;
    vCache: Tensor;
    blockTables: Tensor;
    blockSize: number;
    scale: number;
    eps: number;
    numHeads: number;
    numKvHeads: number;
    splits?: number;
  },
): Tensor {
  const op = 'qkNormRopePagedAttention';
  const shapes = [qkv.shape, o.kCache.shape, o.blockTables.shape];
  const { numHeads: Hq, numKvHeads: Hkv } = o;
  if (!Number.isInteger(Hq) || !Number.isInteger(Hkv) || Hkv < 1 || Hq % Hkv !== 0 || Hq / Hkv > 8)
    throw new TorchError(
      `${op}: numHeads (${Hq}) must be a multiple, at most 8 times, of numKvHeads (${Hkv})`,
      'argument',
      op,
      shapes,
    );
  if (!Number.isInteger(o.blockSize) || o.blockSize < 1)
    throw new TorchError(`${op}: blockSize must be a positive integer, got ${o.blockSize}`, 'argument', op, shapes);
  const D = o.kCache.shape[2];
  if (o.kCache.ndim !== 3 || o.kCache.shape[1] !== Hkv || qkv.ndim !== 2 || qkv.shape[1] !== (Hq + 2 * Hkv) * D)
    throw new TorchError(
      `${op}: qkv must be [B, (numHeads + 2 numKvHeads) * D] and the caches [slots, numKvHeads, D]; got qkv [${qkv.shape.join(', ')}], kCache [${o.kCache.shape.join(', ')}] for ${Hq}/${Hkv} heads`,
      'shape',
      op,
      shapes,
    );
  const splits = checkSplits(op, o.splits);
  return wrap(
    withTorchError(op, shapes, () =>
      native.qkNormRopePagedAttention(
        qkv.handle$,
        o.norm?.handle$ ?? null,
        o.positions.handle$,
        o.invFreq.handle$,
        o.slots.handle$,
        o.kCache.handle$,
        o.vCache.handle$,
        o.blockTables.handle$,
        o.blockSize,
        o.scale,
        o.eps,
        Hq,
        Hkv,
        splits,
      ),
    ),
  );
}
