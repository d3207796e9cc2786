// The paged key/value cache of a generation engine: per layer, K and V as a pool of fixed-size
// blocks of token slots. A sequence's tokens live in the blocks its block table lists (position p
// in block table[p / blockSize], at offset p % blockSize), so memory is taken as sequences grow
// and the n samples of one prompt can hold the prompt's blocks together. Which blocks are free is
// block-pool.ts; this file holds the tensors and the three ways they are touched: write new
// tokens' keys and values at their slots, gather a batch's blocks for attention, copy blocks.
import * as torch from '../torch/index.js';
import type { DType, Device, Tensor } from '../torch/index.js';

const indexPut_ = torch.aten('index_put_');
const indexCopy_ = torch.aten('index_copy_');

export interface KVCacheShape {
  numLayers: number;
  /** Blocks in the pool. */
  numBlocks: number;
  /** Token slots per block. */
  blockSize: number;
  numKvHeads: number;
  headDim: number;
}

/** Bytes per element of a cache dtype. */
function itemBytes(dtype: DType): number {
  return dtype === 'float32' ? 4 : dtype === 'float64' ? 8 : 2;
}

/** Bytes one block takes across all layers, K and V. */
export function blockBytes(shape: Omit<KVCacheShape, 'numBlocks'>, dtype: DType): number {
  return 2 * shape.numLayers * shape.blockSize * shape.numKvHeads * shape.headDim * itemBytes(dtype);
}

/**
 * K and V of every layer, each [numBlocks * blockSize, Hkv, D] in the model's dtype: slot
 * `block * blockSize + offset` holds one token. Kept out of scopes until `dispose()`.
 */
export class KVCache implements Disposable {
  readonly k: Tensor[] = [];
  readonly v: Tensor[] = [];

  constructor(
    readonly shape: KVCacheShape,
    opts: { dtype: DType; device: Device },
  ) {
    const dims = [shape.numBlocks * shape.blockSize, shape.numKvHeads, shape.headDim];
    for (let i = 0; i < shape.numLayers; i++) {
      this.k.push(torch.keep(torch.zeros(dims, opts)));
      this.v.push(torch.keep(torch.zeros(dims, opts)));
    }
  }

  get device(): Device {
    return this.k[0].device;
  }
  get dtype(): DType {
    return this.k[0].dtype;
  }
  get blockSize(): number {
    return this.shape.blockSize;
  }
  /** Bytes held by the cache. */
  get bytes(): number {
    return this.shape.numBlocks * blockBytes(this.shape, this.dtype);
  }

  /** Writes one layer's new keys and values k, v [N, Hkv, D] at `slots` (int64 [N]), in place. */
  write(layer: number, slots: Tensor, k: Tensor, v: Tensor): void {
    indexPut_(this.k[layer], [slots], k, false).dispose();
    indexPut_(this.v[layer], [slots], v, false).dispose();
  }

  /**
   * One layer's keys and values at `slots` (int64 [B, L]): k, v [B, L, Hkv, D] (a copy: attention
   * reads only the blocks the batch's block tables name).
   */
  gather(layer: number, slots: Tensor): { k: Tensor; v: Tensor } {
    const [B, L] = slots.shape;
    const { numKvHeads: H, headDim: D } = this.shape;
    const flat = slots.reshape(B * L);
    return {
      k: this.k[layer].indexSelect(0, flat).view(B, L, H, D),
      v: this.v[layer].indexSelect(0, flat).view(B, L, H, D),
    };
  }

  /** One layer's keys and values as blocks, k, v [numBlocks, blockSize, Hkv, D] (views of the cache, for a kernel that reads blocks in place). */
  blocks(layer: number): { k: Tensor; v: Tensor } {
    const { numBlocks, blockSize, numKvHeads, headDim } = this.shape;
    return {
      k: this.k[layer].view(numBlocks, blockSize, numKvHeads, headDim),
      v: this.v[layer].view(numBlocks, blockSize, numKvHeads, headDim),
    };
  }

  /** Copies whole blocks src[i] -> dst[i] (int64 [n] each) in every layer (a forked sequence's own copy of a shared block). */
  copyBlocks(src: Tensor, dst: Tensor): void {
    const { numBlocks, blockSize, numKvHeads, headDim } = this.shape;
    torch.scope(() => {
      for (const t of [...this.k, ...this.v]) {
        const blocks = t.view(numBlocks, blockSize, numKvHeads, headDim);
        indexCopy_(blocks, 0, dst, blocks.indexSelect(0, src)).dispose();
      }
    });
  }

  /** Where each layer's k, then v, lies in memory (a graph captured over this cache reads those addresses). */
  addresses(): number[] {
    return [...this.k, ...this.v].map((t) => t.dataPtr());
  }

  dispose(): void {
    for (const t of [...this.k, ...this.v]) t.dispose();
  }
  [Symbol.dispose](): void {
    this.dispose();
  }
}
