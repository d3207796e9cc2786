// The paged decode attention kernel's own merge of its splits (the last split block of each
// sequence and KV head merges them, counting in per-pair counters that it leaves at zero) against
// float32 attention, and its fused variant (torch.qkNormRopePagedAttention: the q/k norms, RoPE and
// the cache write folded in) against qkNormRopeCache then pagedDecodeAttention, bit for bit, eager
// and in a replayed CUDA graph.
// Skipped where no GPU is visible (CI); run on the GPU machine.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import type { Tensor } from '../../src/torch/index.js';
import { ropeInvFreq } from '../../src/models/index.js';

const skip = !torch.cuda.isAvailable() && 'CUDA is not available on this machine';
const device = 'cuda:0' as const;

// [B, Hkv, G, D, BS]: groups 1, 2, 4, 7 and 8, head dims 64, 128 and 256, blocks of 6 (no multiple
// of the 4 tokens a half-warp takes a step), 16 and 32 tokens, batches 1, 3 and 70
const SHAPES: [number, number, number, number, number][] = [
  [1, 8, 4, 128, 16], // Qwen3-4B's batch 1: 8 (sequence, KV head) pairs, the kernel's own choice splits
  [1, 2, 7, 64, 6],
  [1, 4, 8, 256, 32], // 256 threads a block at most (GROUP * head dim over 512)
  [3, 4, 2, 64, 32],
  [3, 2, 8, 128, 6],
  [3, 8, 1, 256, 16],
  [3, 2, 4, 256, 6],
  [70, 8, 4, 128, 16], // 560 pairs: splits only when asked for
  [70, 1, 8, 64, 32],
  [70, 2, 1, 128, 6],
];

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/**
 * A cache of `need[b]` blocks per row taken from the pool in a scrambled order (and 3 more), random
 * keys and values, and block tables wider than any row needs (padded with the pool's last block).
 * No block is two rows' (nor twice one row's): the fused op writes each row's new token where it
 * reads, and only its own row may read there.
 */
function pagedCache(need: number[], Hkv: number, D: number, BS: number, seed: number) {
  const numBlocks = need.reduce((a, b) => a + b, 0) + 3;
  let mult = 7; // coprime to the pool's size: a permutation
  while (gcd(mult, numBlocks) !== 1) mult += 2;
  const order = Array.from({ length: numBlocks }, (_, i) => (i * mult + 3) % numBlocks);
  let next = 0;
  const tables = need.map((n) => {
    const t = order.slice(next, next + n);
    next += n;
    return t;
  });
  const W = Math.max(...need) + 2;
  torch.manualSeed(seed);
  const k = torch.randn([numBlocks * BS, Hkv, D], { device, dtype: 'bfloat16' });
  const v = torch.randn([numBlocks * BS, Hkv, D], { device, dtype: 'bfloat16' });
  const blockTables = torch.tensor(
    tables.map((t) => Array.from({ length: W }, (_, j) => t[j] ?? numBlocks - 1)),
    { device },
  );
  const slotOf = (b: number, p: number) => tables[b][Math.floor(p / BS)] * BS + (p % BS);
  return { k, v, tables, blockTables, slotOf, W };
}

/** Whether a and b hold the same bits (copied to the host: for small tensors). */
function sameBits(a: Tensor, b: Tensor): boolean {
  if (a.shape.join() !== b.shape.join() || a.dtype !== b.dtype) return false;
  const bytes = (t: Tensor) => {
    const x = t.toTypedArray();
    return Buffer.from(x.buffer, x.byteOffset, x.byteLength);
  };
  return bytes(a).equals(bytes(b));
}

/** Whether two equal-shaped tensors of one dtype are equal everywhere (on the device). */
const sameValues = (a: Tensor, b: Tensor) => torch.scope(() => a.eq(b).all().item() === 1);

describe('paged decode attention: splits merged in the kernel', { skip }, () => {
  it('equals float32 attention at 2, 3, 9 and 64 splits, called again and again (the counters start at zero each time), bit for bit the same each call', () => {
    for (const [B, Hkv, G, D, BS] of SHAPES) {
      torch.noGrad(() =>
        torch.scope(() => {
          // lengths from 1 token (most splits hold none) to 2000
          const lens = Array.from({ length: B }, (_, b) => [1, 5, 37, 300, 2000][b % 5] + b);
          const { k, v, tables, blockTables } = pagedCache(
            lens.map((l) => Math.ceil(l / BS)),
            Hkv,
            D,
            BS,
            B * 100 + G,
          );
          const q = torch.randn([B, Hkv * G, D], { device, dtype: 'bfloat16' });
          const positions = torch.tensor(
            lens.map((l) => l - 1),
            { device },
          );
          const scale = 1 / Math.sqrt(D);
          const what = `B ${B}, Hkv ${Hkv}, G ${G}, D ${D}, block ${BS}`;
          const outs = [2, 3, 9, 64].map((splits) => {
            const calls = [0, 1, 2].map(() =>
              torch.pagedDecodeAttention(q, k, v, blockTables, positions, { blockSize: BS, scale, splits }),
            );
            assert.deepEqual(calls[0].shape, [B, Hkv * G, D]);
            for (const c of calls.slice(1))
              assert.ok(sameBits(c, calls[0]), `${what}, splits ${splits}: a later call differs from the first`);
            return { splits, out: calls[0] };
          });
          for (let b = 0; b < B; b++) {
            torch.scope(() => {
              const slots = torch.tensor(
                Array.from({ length: lens[b] }, (_, p) => tables[b][Math.floor(p / BS)] * BS + (p % BS)),
                { device },
              );
              const kb = k.indexSelect(0, slots).float().transpose(0, 1).unsqueeze(0); // [1, Hkv, L, D]
              const vb = v.indexSelect(0, slots).float().transpose(0, 1).unsqueeze(0);
              const qb = q.narrow(0, b, 1).float().unsqueeze(2); // [1, Hq, 1, D]
              const ref = torch
                .scaledDotProductAttention(qb, kb, vb, { scale, enableGqa: G > 1 })
                .squeeze(2)
                .squeeze(0);
              for (const { splits, out } of outs) {
                const diff = out.narrow(0, b, 1).squeeze(0).float().sub(ref).abs().max().item();
                assert.ok(diff < 2e-2, `${what}, splits ${splits}, row ${b} (${lens[b]} tokens): max |diff| ${diff}`);
              }
            });
          }
        }),
      );
    }
  });
});

describe('qkNormRopePagedAttention', { skip }, () => {
  /**
   * A decode step's inputs for B rows whose new token lands at the start, the middle or the end of a
   * block, in its 1st, 2nd, 6th, 31st or 91st block (by row, rotated by `shift`), in a cache of random
   * keys and values; each row's table holds
   * `ahead` blocks more than it needs (for later steps).
   */
  function stepInputs(
    B: number,
    Hkv: number,
    G: number,
    D: number,
    BS: number,
    shift: number,
    seed: number,
    ahead = 0,
  ) {
    const Hq = Hkv * G;
    const offsets = [0, Math.floor(BS / 2), BS - 1];
    const positions = Array.from(
      { length: B },
      (_, b) => [0, 1, 5, 30, 90][(b + shift) % 5] * BS + offsets[(b + shift) % 3],
    );
    const cache = pagedCache(
      positions.map((p) => Math.floor(p / BS) + 1 + ahead),
      Hkv,
      D,
      BS,
      seed,
    );
    const qkv = torch
      .randn([B, (Hq + 2 * Hkv) * D], { device })
      .mul(2)
      .to('bfloat16');
    const norm = torch
      .randn([Hq + Hkv, D], { device })
      .mul(0.3)
      .add(1)
      .to('bfloat16');
    return {
      ...cache,
      Hq,
      qkv,
      norm,
      positions: torch.tensor(positions, { device }),
      slots: torch.tensor(
        positions.map((p, b) => cache.slotOf(b, p)),
        { device },
      ),
      invFreq: ropeInvFreq({ type: 'default', theta: 1000000 }, D).to({ device }),
    };
  }

  it('equals qkNormRopeCache then pagedDecodeAttention bit for bit (out, keys and values; with and without q/k norms; new tokens at the start, middle and end of a block; splits its choice, 1, 3 and 64)', () => {
    for (const [B, Hkv, G, D, BS] of SHAPES) {
      for (const shift of B <= 3 ? [0, 1, 2, 3, 4] : [0]) {
        torch.noGrad(() =>
          torch.scope(() => {
            const s = stepInputs(B, Hkv, G, D, BS, shift, B * 10 + G + shift);
            const scale = 1 / Math.sqrt(D);
            const eps = 1e-6;
            for (const withNorm of [true, false]) {
              for (const splits of [0, 1, 3, 64]) {
                torch.scope(() => {
                  const what = `B ${B}, Hkv ${Hkv}, G ${G}, D ${D}, block ${BS}, shift ${shift}${withNorm ? ', q/k norms' : ''}, splits ${splits}`;
                  const norm = withNorm ? s.norm : null;
                  // both from the same cache
                  const ref = { k: s.k.clone(), v: s.v.clone() };
                  const ours = { k: s.k.clone(), v: s.v.clone() };
                  const q = torch.qkNormRopeCache(s.qkv, {
                    norm,
                    positions: s.positions,
                    invFreq: s.invFreq,
                    slots: s.slots,
                    kCache: ref.k,
                    vCache: ref.v,
                    numHeads: s.Hq,
                    numKvHeads: Hkv,
                    headDim: D,
                    eps,
                  });
                  const want = torch.pagedDecodeAttention(q, ref.k, ref.v, s.blockTables, s.positions, {
                    blockSize: BS,
                    scale,
                    splits,
                  });
                  const got = torch.qkNormRopePagedAttention(s.qkv, {
                    norm,
                    positions: s.positions,
                    invFreq: s.invFreq,
                    slots: s.slots,
                    kCache: ours.k,
                    vCache: ours.v,
                    blockTables: s.blockTables,
                    blockSize: BS,
                    scale,
                    eps,
                    numHeads: s.Hq,
                    numKvHeads: Hkv,
                    splits,
                  });
                  assert.deepEqual(got.shape, [B, s.Hq, D]);
                  assert.ok(sameBits(got, want), `${what}: out`);
                  // the new tokens' keys and values bit for bit, and every other slot as it was
                  for (const kv of ['k', 'v'] as const) {
                    assert.ok(
                      sameBits(ours[kv].indexSelect(0, s.slots), ref[kv].indexSelect(0, s.slots)),
                      `${what}: the new tokens' ${kv}`,
                    );
                    assert.ok(sameValues(ours[kv], ref[kv]), `${what}: the ${kv} cache`);
                  }
                });
              }
            }
          }),
        );
      }
    }
  });

  it('captured in a CUDA graph and replayed on new inputs, equals the eager op (split at batch 1 by its own choice, and 64 splits at batch 3)', () => {
    for (const [B, Hkv, G, D, BS, splits] of [
      [1, 8, 4, 128, 16, 0],
      [3, 2, 7, 64, 6, 64],
    ]) {
      torch.noGrad(() =>
        torch.scope(() => {
          const s = stepInputs(B, Hkv, G, D, BS, 0, 7 + B, 2);
          const scale = 1 / Math.sqrt(D);
          const eps = 1e-6;
          // the kernel loaded and the split counters allocated: a capture can do neither
          torch.preparePagedDecodeAttention(device, D, G, BS, { fusedQkv: true });
          // the graph's caches and the eager op's, the same before every step
          const graphed = { k: s.k.clone(), v: s.v.clone() };
          const eager = { k: s.k.clone(), v: s.v.clone() };
          const call = (c: { k: Tensor; v: Tensor }) =>
            torch.qkNormRopePagedAttention(s.qkv, {
              norm: s.norm,
              positions: s.positions,
              invFreq: s.invFreq,
              slots: s.slots,
              kCache: c.k,
              vCache: c.v,
              blockTables: s.blockTables,
              blockSize: BS,
              scale,
              eps,
              numHeads: s.Hq,
              numKvHeads: Hkv,
              splits,
            });
          const graph = new torch.CUDAGraph();
          const out = graph.capture(() => call(graphed), { device });
          // steps of new inputs: each row half a block further on each time (into the next blocks, within
          // its table), new q/k/v
          const start = s.positions.toArray();
          for (let step = 0; step < 4; step++) {
            const positions = start.map((p) => p + step * Math.ceil(BS / 2));
            torch.scope(() => {
              s.positions.copy_(torch.tensor(positions, { device }));
              s.slots.copy_(
                torch.tensor(
                  positions.map((p, b) => s.slotOf(b, p)),
                  { device },
                ),
              );
              s.qkv.copy_(torch.randn(s.qkv.shape, { device }).mul(2).to('bfloat16'));
            });
            graph.replay();
            const want = call(eager);
            const what = `B ${B}, G ${G}, D ${D}, block ${BS}, splits ${splits}, step ${step}`;
            assert.ok(sameBits(out, want), `${what}: out`);
            for (const kv of ['k', 'v'] as const) assert.ok(sameValues(graphed[kv], eager[kv]), `${what}: ${kv} cache`);
          }
          graph.dispose();
        }),
      );
    }
  });
});
