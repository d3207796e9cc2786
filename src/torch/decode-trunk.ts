// The decode trunk (native/src/decode_trunk.cc): every layer of a decode step of 1 to 4 rows in one
// persistent CUDA kernel that streams the weights through shared memory without stopping between
// matmuls, layers or the attention. The same operations as the layered fused kernels
// (fused-decode.ts, paged-attention.ts) give the same values, up to the order of the attention's sums.
import { native, type Handle } from './native.js';
import { withTorchError } from './errors.js';
import { type Tensor, wrap } from './tensor.js';
import { cudaIndex, type Device } from './device.js';

/** One layer as the trunk reads it: the stacked q/k/v and gate/up weights (models' FusedLayerParams), the rest as the model has them, and the layer's cache [slots, Hkv, D]. */
export interface DecodeTrunkLayer {
  qkv: Tensor;
  qkvBias: Tensor | null;
  inputNorm: Tensor;
  qkNorm: Tensor | null;
  o: Tensor;
  oBias: Tensor | null;
  postAttentionNorm: Tensor;
  gateUp: Tensor;
  gateUpBias: Tensor | null;
  down: Tensor;
  downBias: Tensor | null;
  kCache: Tensor;
  vCache: Tensor;
}

/** The shape of a step the trunk is asked about. */
export interface DecodeTrunkShape {
  hidden: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  intermediate: number;
  layers: number;
  /** Sequences a step (1 to 4). */
  rows: number;
  /** Tokens a cache block. */
  blockSize: number;
}

const unsupportedCache = new Map<string, string | null>();

/**
 * Why the trunk cannot run a step of this shape on `device` (rows past 4, a head dim it has no
 * kernel for, a device without the copy engine of compute capability 9.0, a ring of weight rows
 * that does not fit in shared memory...), or null when it can.
 */
export function decodeTrunkUnsupported(device: Device, s: DecodeTrunkShape): string | null {
  if (device === 'cpu') return 'the decode trunk runs on CUDA';
  if (!native.builtWithCuda) return 'this addon was not built against a CUDA libtorch';
  const key = `${device}:${JSON.stringify(s)}`;
  let why = unsupportedCache.get(key);
  if (why === undefined) {
    why = withTorchError('decodeTrunkUnsupported', [], () =>
      native.fusedDecodeTrunkUnsupported(
        cudaIndex(device),
        s.hidden,
        s.numHeads,
        s.numKvHeads,
        s.headDim,
        s.intermediate,
        s.layers,
        s.rows,
        s.blockSize,
      ),
    );
    unsupportedCache.set(key, why);
  }
  return why;
}

/**
 * Every layer of a decode step (bf16, CUDA): x [B, hidden] holds the B tokens' embeddings; each
 * writes its key and value at `slots` [B] in every layer's cache and attends over its tokens
 * [0, positions[b]] that `blockTables` [B, W] place in the cache's blocks of `blockSize` tokens.
 * Returns the last layer's MLP output and the residual stream before it (their sum, normed, is the
 * step's hidden state: addRmsNorm).
 */
export function decodeTrunk(
  x: Tensor,
  layers: readonly DecodeTrunkLayer[],
  o: {
    positions: Tensor;
    slots: Tensor;
    blockTables: Tensor;
    invFreq: Tensor;
    blockSize: number;
    eps: number;
    scale: number;
  },
): { out: Tensor; residual: Tensor } {
  const handles: (Handle | null)[] = [];
  for (const l of layers) {
    for (const t of [
      l.qkv,
      l.qkvBias,
      l.inputNorm,
      l.qkNorm,
      l.o,
      l.oBias,
      l.postAttentionNorm,
      l.gateUp,
      l.gateUpBias,
      l.down,
      l.downBias,
      l.kCache,
      l.vCache,
    ])
      handles.push(t?.handle$ ?? null);
  }
  const [out, residual] = withTorchError('decodeTrunk', [x.shape, o.blockTables.shape], () =>
    native.fusedDecodeTrunk(
      x.handle$,
      handles,
      o.positions.handle$,
      o.slots.handle$,
      o.blockTables.handle$,
      o.invFreq.handle$,
      o.blockSize,
      o.eps,
      o.scale,
    ),
  );
  return { out: wrap(out), residual: wrap(residual) };
}

/**
 * The decode trunk's trace, with AGENT_R1_DECODE_TRUNK_TRACE=1: each block's clock (ns) at each step
 * of each layer of the last traced step on `device`, [blocks, layers, 21] int64
 * (native/src/decode_trunk.cc's TRACE_EVENTS say which), or null when no step was traced.
 */
export function decodeTrunkTrace(device: Device): Tensor | null {
  const h = withTorchError('decodeTrunkTrace', [], () => native.fusedDecodeTrunkTrace(cudaIndex(device)));
  return h ? wrap(h) : null;
}
