// The model forward for generation over the paged KV cache (kv-cache.ts): a prefill of packed
// prompts that writes their keys and values into their blocks, and a batched decode step of one
// token per sequence that attends over the blocks its block table names. Both run the models'
// one trunk (src/models/layers.ts) and differ from training only in their attention, so the
// logits equal `CausalLM.forward` for the same tokens. Pure functions of (model, cache, inputs):
// the scheduler (engine.ts) owns block tables and lengths. Call them under torch.noGrad in a scope.
//
// The decode step's contract (what a CUDA graph per batch-size bucket captures and replays):
//   inputs  ids [B] int64, positions [B] int64, slots [B] int64, blockTables [B, W] int64: static
//           buffers the caller fills before each step; every shape comes from them (B, and
//           L = W * blockSize cache columns), never from their values;
//   work    device ops only: no read back to the host, no shape that depends on a value, so the
//           step is a fixed sequence of kernels for a given (B, W);
//   output  float32 logits [B, vocab] (with `modelDtypeLogits`, the lm_head's output as it is);
//   effect  each sequence's key and value written at its slot in every layer.
// Rows past the live sequences (padding a bucket) may repeat any valid inputs: rows never mix.
import * as torch from '../torch/index.js';
import type { Tensor } from '../torch/index.js';
import {
  layerContext,
  packedAttention,
  ropeInvFreq,
  trunk,
  usesFlashAttention,
  type Attend,
  type AttentionBackend,
  type CausalLM,
  type PackedBatch,
  type TrunkWeights,
} from '../models/index.js';
import { UserError } from '../errors.js';
import type { KVCache } from './kv-cache.js';
import { fusedDecodeHidden } from './fused-decode.js';

/** What generation reads of a model: the trunk's parameters by role, and the lm_head. */
export interface GenerationModel extends TrunkWeights {
  lmHead: Tensor;
  /** RoPE inverse frequencies [headDim/2] float32 (computed as the model computes them). */
  invFreq: Tensor;
}

/** The parameters of `model` by role, and its RoPE frequencies (kept: dispose `invFreq` when done). */
export function generationModel(model: CausalLM): GenerationModel {
  const lmHead = model.lmHead;
  if (!lmHead) throw new UserError(`${model.spec.architecture} has no lm_head (a critic); it cannot generate`);
  return {
    spec: model.spec,
    layers: Array.from({ length: model.spec.numLayers }, (_, i) => model.layer(i)),
    embedTokens: model.embedTokens,
    norm: model.normWeight,
    lmHead,
    invFreq: torch.keep(ropeInvFreq(model.spec.rope, model.spec.headDim)),
  };
}

/** The trunk over N tokens at `positions` with this attention -> hidden [N, hidden]. */
function hiddenOf(m: GenerationModel, ids: Tensor, positions: Tensor, attend: Attend): Tensor {
  return trunk(m, ids, layerContext(m.invFreq, positions, m.embedTokens.dtype, attend));
}

/**
 * Logits [N, vocab] in float32 of hidden states [N, hidden] (linear in the model's dtype, then cast,
 * as `CausalLM.logprobs`); with `modelDtype`, the linear's output uncast.
 */
export function logitsOf(m: GenerationModel, hidden: Tensor, modelDtype = false): Tensor {
  const logits = torch.linear(hidden, m.lmHead);
  return modelDtype ? logits : logits.to('float32');
}

export interface PrefillInputs {
  /** The sequences packed into one row (positions 0.. per sequence), on the model's device. */
  batch: PackedBatch;
  /** int64 [T]: the cache slot of every token of the row (block * blockSize + offset). */
  slots: Tensor;
  /** int64 [S]: the row index of the token whose next-token logits are returned, per output row (may repeat). */
  lastIndex: Tensor;
  attention?: AttentionBackend;
}

/**
 * Runs sequences packed as in training (attention within each: per-sequence SDPA on the CPU, flash
 * varlen on CUDA), writing their keys and values into the cache at their slots; returns the float32
 * logits [S, vocab] at `lastIndex`.
 */
export function prefill(m: GenerationModel, cache: KVCache, o: PrefillInputs): Tensor {
  const scale = 1 / Math.sqrt(m.spec.headDim);
  const { batch } = o;
  const hidden = hiddenOf(m, batch.inputIds, batch.positionIds, (layer, q, k, v) => {
    cache.write(layer, o.slots, k, v);
    return packedAttention(q, k, v, batch, scale, o.attention ?? 'auto');
  });
  return logitsOf(m, hidden.indexSelect(0, o.lastIndex));
}

/** 'paged': our kernel reading the paged cache in place (CUDA, bf16; torch.pagedDecodeAttention). */
export type DecodeAttention = AttentionBackend | 'paged';
/** What a decode-attention choice comes to on a given cache. */
export type ResolvedDecodeAttention = Exclude<DecodeAttention, 'auto'>;

/** The decode step's static input buffers (see the contract at the top of this file). */
export interface DecodeInputs {
  /** int64 [B]: the token each sequence feeds. */
  ids: Tensor;
  /** int64 [B]: its position (the number of tokens the cache holds for the sequence). */
  positions: Tensor;
  /** int64 [B]: the slot its key and value go to: blockTable[position / blockSize] * blockSize + position % blockSize. */
  slots: Tensor;
  /** int64 [B, W]: each sequence's blocks in order, padded with any valid block id; W * blockSize > every position. */
  blockTables: Tensor;
  /** 'sdpa': SDPA over the gathered blocks with a per-row length mask (every device; the reference).
   *  'flash': flash-attention varlen (CUDA, 16-bit floats): reading the blocks in place through the block
   *  tables when the block size is a multiple of FLASH_PAGED_BLOCK, else over the gathered blocks.
   *  'auto' picks flash where it runs. */
  attention?: DecodeAttention;
  /** With 'paged' attention: run the fused trunk (fused-decode.ts), which the caller checked runs here
   *  (`fusedDecodeUnsupported`). Default false: the models' trunk. */
  fusedKernels?: boolean;
  /** Logits in the model's dtype, the lm_head's output uncast, for a sampler that reads them as they
   *  are (sampleTokens; on CUDA its one kernel reads bf16, which a float32 copy would double). Default
   *  false: float32. */
  modelDtypeLogits?: boolean;
}

/** Flash attention reads a paged cache in place (its block_table) only for blocks of a multiple of this many tokens (flash-attention 2's paged KV). */
export const FLASH_PAGED_BLOCK = 256;

let flashBlockTable: boolean | undefined;
/** Whether this libtorch's flash attention takes a block table (PyTorch 2.13 does, 2.11 does not). */
export function flashTakesBlockTable(): boolean {
  flashBlockTable ??= torch.atenSchema('_flash_attention_forward').includes('block_table');
  return flashBlockTable;
}

/**
 * The decode attention a choice runs as: 'auto' is our paged kernel where it runs (a CUDA build,
 * bf16, head dim 64/128/256, at most 8 query heads per KV head), else flash where it runs, else SDPA.
 */
export function resolveDecodeAttention(
  attention: DecodeAttention,
  o: { device: torch.Device; dtype: torch.DType; headDim: number; numHeads: number; numKvHeads: number },
): ResolvedDecodeAttention {
  if (attention !== 'auto') return attention;
  const group = o.numHeads / o.numKvHeads;
  if (
    o.device !== 'cpu' &&
    o.dtype === 'bfloat16' &&
    [64, 128, 256].includes(o.headDim) &&
    Number.isInteger(group) &&
    group <= 8 &&
    torch.hasPagedDecodeAttention()
  )
    return 'paged';
  return usesFlashAttention('auto', o.device, o.dtype, o.headDim) ? 'flash' : 'sdpa';
}

/** Whether decode attention with this choice runs as flash attention on this cache. */
export function decodeUsesFlash(cache: KVCache, attention: DecodeAttention, headDim: number): boolean {
  if (attention === 'paged') return false;
  return usesFlashAttention(attention, cache.device, cache.dtype, headDim);
}

/**
 * One decode step of B sequences of different lengths: each feeds one token at its own position,
 * writes its key and value at its slot, and attends over its cached tokens [0, position].
 * Returns float32 logits [B, vocab] (with `modelDtypeLogits`, the lm_head's output uncast).
 */
export function decodeStep(m: GenerationModel, cache: KVCache, o: DecodeInputs): Tensor {
  const { spec } = m;
  const scale = 1 / Math.sqrt(spec.headDim);
  const [B, W] = o.blockTables.shape;
  const bs = cache.blockSize;
  const L = W * bs;
  const device = cache.device;
  const rawLogits = o.modelDtypeLogits ?? false;
  const attention = resolveDecodeAttention(o.attention ?? 'auto', {
    device,
    dtype: cache.dtype,
    headDim: spec.headDim,
    numHeads: spec.numHeads,
    numKvHeads: spec.numKvHeads,
  });
  if (attention === 'paged') {
    const attend = (layer: number, q: Tensor) =>
      torch.pagedDecodeAttention(q, cache.k[layer], cache.v[layer], o.blockTables, o.positions, {
        blockSize: bs,
        scale,
      });
    if (o.fusedKernels) return logitsOf(m, fusedDecodeHidden(m, cache, o, attend), rawLogits);
    const hidden = hiddenOf(m, o.ids, o.positions, (layer, q, k, v) => {
      cache.write(layer, o.slots, k, v);
      return attend(layer, q.contiguous());
    });
    return logitsOf(m, hidden, rawLogits);
  }
  const lengths = o.positions.add(1); // [B]
  const flash = decodeUsesFlash(cache, attention, spec.headDim);
  const inPlace = flash && bs % FLASH_PAGED_BLOCK === 0 && flashTakesBlockTable();
  // [B, L]: the slots of every column each row may read, in position order (to gather them)
  const columns = inPlace
    ? null
    : o.blockTables
        .unsqueeze(-1)
        .mul(bs)
        .add(torch.arange(0, bs, 1, { device }))
        .view(B, L);
  const flashArgs = flash
    ? {
        cuQ: torch.arange(0, B + 1, 1, { dtype: 'int32', device }),
        // gathered: row b's keys start at b * L; in place: the lengths' running sum (the block tables place them)
        cuK: inPlace
          ? torch.cat([torch.zeros([1], { dtype: 'int32', device }), lengths.cumsum(0, 'int32')])
          : torch.arange(0, (B + 1) * L, L, { dtype: 'int32', device }),
        seqused: lengths.to('int32'),
        blockTable: inPlace ? o.blockTables.to('int32') : null,
      }
    : null;
  // [B, 1, 1, L]: column j is visible to row b when j <= positions[b]
  const mask = flash ? null : torch.arange(0, L, 1, { device }).unsqueeze(0).lt(lengths.unsqueeze(1)).view(B, 1, 1, L);
  const hidden = hiddenOf(m, o.ids, o.positions, (layer, q, k, v) => {
    cache.write(layer, o.slots, k, v);
    // [numBlocks, blockSize, Hkv, D] read in place, or [B, L, Hkv, D] gathered
    const c = columns ? cache.gather(layer, columns) : cache.blocks(layer);
    if (flashArgs) {
      return torch.flashAttentionVarlen(
        q,
        columns ? c.k.view(B * L, spec.numKvHeads, spec.headDim) : c.k,
        columns ? c.v.view(B * L, spec.numKvHeads, spec.headDim) : c.v,
        {
          cuQ: flashArgs.cuQ,
          cuK: flashArgs.cuK,
          maxQ: 1,
          maxK: L,
          scale,
          sequsedK: flashArgs.seqused,
          // only a libtorch whose flash takes a block table is given one (flashTakesBlockTable)
          blockTable: flashArgs.blockTable,
        },
      );
    }
    const out = torch.scaledDotProductAttention(q.unsqueeze(2), c.k.transpose(1, 2), c.v.transpose(1, 2), {
      attnMask: mask,
      scale,
      enableGqa: spec.numHeads !== spec.numKvHeads,
    }); // [B, Hq, 1, D]
    return out.squeeze(2);
  });
  return logitsOf(m, hidden, rawLogits);
}
