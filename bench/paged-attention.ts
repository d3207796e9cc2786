// Decode attention alone on the GPU: our paged kernel (torch.pagedDecodeAttention, reading 16-token
// blocks in a scrambled order through block tables) against flash-attention varlen over a dense
// per-row cache (what bench/decode_graph_reference.py's PyTorch step runs), at the shapes of the
// decode suite. Each call attends one query token per row over `ctx` cached tokens; `layers`
// separate caches are cycled so the L2 cache does not hold one layer's keys between calls. The
// calls of all layers are captured in one CUDA graph and replayed, as the engine's decode step is:
// timed eagerly, a call of a few microseconds measures its launch from JS instead.
// Prints per point the microseconds per call and the bytes of keys and values read per second, for
// the kernel's own choice of splits (each sequence's tokens cut into ranges, one thread block each)
// and for each fixed number of splits (1: one block per KV head and sequence, as before splits).
//
// GPU:   bash bench/device/run.sh build paged     (after bench/device/bundle.sh here)
import * as torch from '../src/torch/index.js';
import type { Tensor } from '../src/torch/index.js';
import { secondsPerCallInGraph } from './graph-time.js';

const dev = 'cuda:0' as const;
const BS = 16;
// name, query heads, KV heads, head dim, layers, batch, cached tokens (prompt + half the new tokens)
const POINTS: [string, number, number, number, number, number, number][] = [
  ['0.6b', 16, 8, 128, 28, 1, 256],
  // the gsm8k_tool e2e step's tail: a tool call's second turn decoding alone
  ['0.6b', 16, 8, 128, 28, 1, 850],
  ['0.6b', 16, 8, 128, 28, 8, 256],
  ['0.6b', 16, 8, 128, 28, 64, 256],
  ['0.6b', 16, 8, 128, 28, 256, 256],
  ['0.6b', 16, 8, 128, 28, 256, 440],
  ['4b', 32, 8, 128, 36, 1, 576],
  ['4b', 32, 8, 128, 36, 64, 576],
  // groups of 8 query heads per KV head (Qwen3-32B's 64 and 8, 16 of its 64 layers) and of 7 (Qwen2.5-7B's 28 and 4)
  ['32b', 64, 8, 128, 16, 1, 576],
  ['32b', 64, 8, 128, 16, 64, 576],
  ['qwen2.5-7b', 28, 4, 128, 28, 64, 576],
];
const REPEATS = 10;
const SPLITS = [1, 2, 4, 8, 16, 32, 64];

/** Seconds per call of `f(layer)`, the calls of all layers in one CUDA graph. */
const time = (layers: number, f: (layer: number) => Tensor): number =>
  secondsPerCallInGraph(layers, f, { device: dev, repeats: REPEATS });

if (!torch.cuda.isAvailable()) throw new Error('bench/paged-attention.ts runs on CUDA');
for (const [shape, Hq, Hkv, D, L, B, ctx] of POINTS) {
  torch.noGrad(() =>
    torch.scope(() => {
      torch.manualSeed(0);
      const perRow = Math.ceil(ctx / BS);
      const numBlocks = B * perRow;
      // row b's blocks: a scrambled permutation of the pool (a multiplier coprime to the pool size)
      let mult = 7919;
      while (numBlocks % mult === 0 || mult % numBlocks === 0) mult += 2;
      const tables = torch.tensor(
        Array.from({ length: B }, (_, b) =>
          Array.from({ length: perRow }, (_, j) => ((b * perRow + j) * mult) % numBlocks),
        ),
        { device: dev },
      );
      const positions = torch.full([B], ctx - 1, { dtype: 'int64', device: dev });
      const q = torch.randn([B, Hq, D], { device: dev }).to('bfloat16');
      const paged = Array.from({ length: L }, () => ({
        k: torch.randn([numBlocks * BS, Hkv, D], { device: dev }).to('bfloat16'),
        v: torch.randn([numBlocks * BS, Hkv, D], { device: dev }).to('bfloat16'),
      }));
      const scale = 1 / Math.sqrt(D);
      const run = (splits: number) =>
        time(L, (l) =>
          torch.pagedDecodeAttention(q, paged[l].k, paged[l].v, tables, positions, { blockSize: BS, scale, splits }),
        );
      const ours = run(0);
      const bySplits = Object.fromEntries(SPLITS.map((n) => [n, +(run(n) * 1e6).toFixed(1)]));
      // the reference's layout: each row's ctx tokens contiguous, read with seqused_k
      const dense = paged.map((c) => ({ k: c.k.narrow(0, 0, B * ctx), v: c.v.narrow(0, 0, B * ctx) }));
      const cuQ = torch.arange(0, B + 1, 1, { dtype: 'int32', device: dev });
      const cuK = torch.arange(0, (B + 1) * ctx, ctx, { dtype: 'int32', device: dev });
      const seqused = torch.full([B], ctx, { dtype: 'int32', device: dev });
      const ref = time(L, (l) =>
        torch.flashAttentionVarlen(q, dense[l].k, dense[l].v, {
          cuQ,
          cuK,
          maxQ: 1,
          maxK: ctx,
          scale,
          sequsedK: seqused,
        }),
      );
      const bytes = 2 * B * ctx * Hkv * D * 2;
      console.log(
        JSON.stringify({
          bench: 'paged-attention',
          shape,
          batch: B,
          ctx,
          q_heads: Hq,
          kv_heads: Hkv,
          head_dim: D,
          ours_us: +(ours * 1e6).toFixed(1),
          ours_us_by_splits: bySplits,
          flash_dense_us: +(ref * 1e6).toFixed(1),
          ratio_vs_flash: +(ref / ours).toFixed(3),
          ours_gb_per_s: Math.round(bytes / ours / 1e9),
          flash_gb_per_s: Math.round(bytes / ref / 1e9),
        }),
      );
    }),
  );
}
