// sampleRows (the sample_rows kernel of native/src/fused_decode.cc) against the sampling it replaces:
// at batches of 1, 2, 3, 7 and 300 rows (each row over the same number of blocks at every batch,
// so a row draws the same token and logprob, bit for bit, whatever else is in the batch), over
// vocabularies of odd sizes, with planted ties, masked tokens, u at 0 and
// right below 1, and two temperatures; then twice per CUDA-graph replay, over new logits each
// replay, as the kernel's per-row arrival counters must be back at 0 after every launch; bf16 logits
// read as they are draw what their float32 copy draws, bit for bit.
// A sampled token is checked against the exact inverse CDF (float64): the target u * total must
// lie in the token's share of the running sum, widened by 1e-5 of the total for the float32 sums'
// rounding, and the token must not be masked.
// Skipped where no GPU is visible (CI); run on the GPU machine.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { greedyTokens, sampleFromLogits, scaleLogits, tokenLogprobs } from '../../src/engine/index.js';

const skip = !torch.cuda.isAvailable() && 'CUDA is not available on this machine';
const dev = 'cuda:0' as const;
const VOCABS = [151936, 50257, 1000];
const U = [0, 0.99999994, 0.5, 1e-7, 0.3, 0.9999, 0.77];
const TEMPS = [0.7, 1.3];
// the share of the total by which a sampled token's share of the running sum may miss u * total
const CDF_TOLERANCE = 1e-5;
const KINDS = ['plain', 'ties', 'ten left', 'odd masked', 'peaked', 'last left'] as const;
type Kind = (typeof KINDS)[number];

/** The planted maxima of a 'ties' row (the first one wins): two in adjacent chunks, one later, the last token. */
const tiePositions = (V: number) => {
  const q = Math.floor(V / 3) + 5;
  return [q, q + 33, 2 * q, V - 1];
};
/** The first of the ten tokens a 'ten left' row keeps: every slice before theirs is masked whole. */
const tenLeft = (V: number) => V - 47;

/** Logits [B, V]: randn * 3, row r made kind KINDS[(r + offset) % 6]. */
function makeLogits(B: number, V: number, offset: number): { logits: torch.Tensor; kinds: Kind[] } {
  const logits = torch.randn([B, V], { device: dev }).mul(3);
  const odd = torch.tensor(
    Array.from({ length: V }, (_, i) => i % 2 === 1),
    { device: dev },
  );
  const kinds: Kind[] = [];
  for (let r = 0; r < B; r++) {
    const kind = KINDS[(r + offset) % KINDS.length];
    kinds.push(kind);
    const row = logits.select(0, r);
    if (kind === 'ties') for (const p of tiePositions(V)) row.narrow(0, p, 1).fill_(25);
    if (kind === 'ten left') {
      row.narrow(0, 0, tenLeft(V)).fill_(-Infinity);
      row.narrow(0, tenLeft(V) + 10, V - tenLeft(V) - 10).fill_(-Infinity);
    }
    if (kind === 'odd masked') row.copy_(row.maskedFill(odd, -Infinity));
    if (kind === 'peaked') row.narrow(0, Math.floor(V / 2) + 7, 1).fill_(60);
    if (kind === 'last left') {
      row.narrow(0, 0, V - 1).fill_(-Infinity);
      row.narrow(0, V - 1, 1).fill_(0);
    }
  }
  return { logits, kinds };
}

/** Sampled draws (u below 0.9999) and how many of them drew libtorch's token. */
const agreement = { draws: 0, same: 0 };

/**
 * Asserts sampleRows' tokens and logprobs for these logits: greedy rows (every row when u is null)
 * the first argmax of the scaled logits, sampled rows a token whose share of the exact running sum
 * holds u * total; logprobs those of the exact log softmax of the scaled logits.
 */
function checkRows(
  what: string,
  logits: torch.Tensor,
  kinds: Kind[],
  temps: number[],
  u: number[] | null,
  greedyRows: boolean[] | null,
): void {
  const [B, V] = logits.shape;
  const temperature = torch.tensor(temps, { dtype: 'float32', device: dev });
  const uniforms = u ? torch.tensor(u, { dtype: 'float32', device: dev }) : null;
  const ours = torch.sampleRows(
    logits,
    temperature,
    uniforms,
    greedyRows ? torch.tensor(greedyRows, { device: dev }) : null,
  );
  const tokens = ours.tokens.toArray() as number[];
  const logprobs = ours.logprobs.toArray() as number[];
  const scaled = scaleLogits(logits, temperature.unsqueeze(1));
  const argmax = greedyTokens(scaled).toArray() as number[];
  // the exact (float64) running sum of softmax(scaled) at each token's start and end, the exact log softmax
  const s64 = scaled.to('float64');
  const lse64 = s64.logsumexp(-1, true);
  const cdf = torch.cat([torch.zeros([B, 1], { dtype: 'float64', device: dev }), s64.sub(lse64).exp().cumsum(-1)], 1);
  const index = ours.tokens.unsqueeze(1);
  const start = cdf.gather(1, index).toArray() as number[];
  const end = cdf.gather(1, index.add(1)).toArray() as number[];
  const total = cdf.narrow(1, V, 1).toArray() as number[];
  const exact = s64.gather(1, index).sub(lse64).toArray() as number[];
  // libtorch's float32 inverse CDF (the engine's path without the kernel), for the share of draws that agree
  const reference = u ? (sampleFromLogits(scaled, uniforms!, scaled.logsumexp(-1, true)).toArray() as number[]) : null;
  for (let b = 0; b < B; b++) {
    const at = `${what}, row ${b} (${kinds[b]}, T ${temps[b]}${u ? `, u ${u[b]}` : ''})`;
    const g = tokens[b];
    assert.ok(Number.isInteger(g) && g >= 0 && g < V, `${at}: token ${g} out of range`);
    assert.ok(Number.isFinite(exact[b]), `${at}: token ${g} is masked`);
    if (!u || greedyRows?.[b]) {
      assert.equal(g, argmax[b], `${at}: greedy token ${g}, want the first argmax ${argmax[b]}`);
      if (kinds[b] === 'ties') assert.equal(g, tiePositions(V)[0], `${at}: the first of the tied maxima`);
      const d = Math.abs(logprobs[b] - exact[b]);
      assert.ok(d <= 1e-5 * Math.max(1, Math.abs(exact[b])), `${at}: logprob ${logprobs[b]}, want ${exact[b]}`);
      continue;
    }
    const target = u[b] * total[b];
    assert.ok(
      start[b] - CDF_TOLERANCE <= target && target <= end[b] + CDF_TOLERANCE,
      `${at}: token ${g} covers [${start[b]}, ${end[b]}) of the running sum, not the target ${target}`,
    );
    assert.ok(Math.abs(logprobs[b] - exact[b]) < 1e-4, `${at}: logprob ${logprobs[b]}, want ${exact[b]}`);
    if (kinds[b] === 'ten left') assert.ok(g >= tenLeft(V) && g < tenLeft(V) + 10, `${at}: token ${g} is masked`);
    if (kinds[b] === 'last left') assert.ok(g === V - 1 && Math.abs(logprobs[b]) < 1e-6, `${at}: ${g} ${logprobs[b]}`);
    if (reference && u[b] < 0.9999) {
      agreement.draws++;
      if (reference[b] === g) agreement.same++;
    }
  }
}

describe('sampleRows on CUDA', { skip }, () => {
  it('greedy, sampled and mixed rows at B 1, 2, 3, 7 and 300, vocabularies of odd sizes', () => {
    torch.manualSeed(11);
    torch.noGrad(() => {
      for (const V of VOCABS) {
        for (const B of [1, 2, 3, 7, 300]) {
          // every kind of row at every row index of a small batch
          const offsets = B < KINDS.length ? KINDS.map((_, i) => i) : [0, 1];
          for (const offset of offsets) {
            torch.scope(() => {
              const { logits, kinds } = makeLogits(B, V, offset);
              const temps = kinds.map((_, r) => TEMPS[(r + offset) % TEMPS.length]);
              const u = kinds.map((_, r) => U[(r + offset) % U.length]);
              const greedy = kinds.map((_, r) => (r + offset) % 3 === 2);
              const what = `V ${V}, B ${B}, offset ${offset}`;
              checkRows(`${what}, sampled`, logits, kinds, temps, u, null);
              checkRows(`${what}, mixed`, logits, kinds, temps, u, greedy);
              checkRows(`${what}, greedy`, logits, kinds, temps, null, null);
            });
          }
        }
      }
    });
    // sums added in another order draw another token only where u * total is within their rounding
    // of a boundary (u right below 1 puts it among the last tokens' tiny shares, so those draws are left out)
    assert.ok(agreement.draws > 2000, `${agreement.draws} draws`);
    assert.ok(
      agreement.same >= 0.95 * agreement.draws,
      `${agreement.same} of ${agreement.draws} draws as libtorch's inverse CDF`,
    );
  });

  it('reads bf16 logits as they are: the tokens and logprobs of their float32 copy, bit for bit', () => {
    torch.manualSeed(12);
    torch.noGrad(() => {
      for (const V of VOCABS) {
        for (const B of [1, 3, 300]) {
          torch.scope(() => {
            const { logits, kinds } = makeLogits(B, V, 1);
            const half = logits.to('bfloat16');
            const temps = torch.tensor(
              kinds.map((_, r) => TEMPS[r % TEMPS.length]),
              { dtype: 'float32', device: dev },
            );
            const u = torch.tensor(
              kinds.map((_, r) => U[r % U.length]),
              { dtype: 'float32', device: dev },
            );
            const greedy = torch.tensor(
              kinds.map((_, r) => r % 3 === 2),
              { device: dev },
            );
            for (const [mode, uniforms, mask] of [
              ['sampled', u, null],
              ['mixed', u, greedy],
              ['greedy', null, null],
            ] as const) {
              const got = torch.sampleRows(half, temps, uniforms, mask);
              const want = torch.sampleRows(half.to('float32'), temps, uniforms, mask);
              const at = `V ${V}, B ${B}, ${mode}`;
              assert.deepEqual(got.tokens.toArray(), want.tokens.toArray(), `${at}: tokens`);
              assert.deepEqual(got.logprobs.toArray(), want.logprobs.toArray(), `${at}: logprobs`);
            }
          });
        }
      }
    });
  });

  it('gives the same tokens and logprobs call after call, and twice per CUDA-graph replay over new logits', () => {
    torch.manualSeed(12);
    torch.prepareSampleRows(dev);
    torch.noGrad(() => {
      for (const [B, V] of [
        [1, 151936],
        [3, 50257],
        [300, 1000],
      ]) {
        torch.scope(() => {
          const temps = Array.from({ length: B }, (_, r) => TEMPS[r % 2]);
          const temperature = torch.keep(torch.tensor(temps, { dtype: 'float32', device: dev }));
          const u = torch.keep(
            torch.tensor(
              Array.from({ length: B }, (_, r) => U[(r + 2) % U.length]),
              { dtype: 'float32', device: dev },
            ),
          );
          const greedy = torch.keep(
            torch.tensor(
              Array.from({ length: B }, (_, r) => r % 3 === 1),
              { device: dev },
            ),
          );
          const logits = torch.keep(torch.zeros([B, V], { device: dev }));
          const draw = () => torch.sampleRows(logits, temperature, u, greedy);
          const values = (r: { tokens: torch.Tensor; logprobs: torch.Tensor }) => ({
            tokens: r.tokens.toArray() as number[],
            logprobs: r.logprobs.toArray() as number[],
          });
          // eager: a second and third launch find the counters the first left
          logits.copy_(torch.randn([B, V], { device: dev }).mul(3));
          const first = values(draw());
          for (let i = 0; i < 2; i++) assert.deepEqual(values(draw()), first, `B ${B}, V ${V}: eager call ${i + 2}`);
          const graph = new torch.CUDAGraph();
          try {
            const out = graph.capture(() => [draw(), draw()] as const, { device: dev });
            for (let replay = 0; replay < 3; replay++) {
              const fresh = torch.randn([B, V], { device: dev }).mul(3);
              logits.copy_(fresh);
              const eager = values(draw());
              assert.notDeepEqual(eager.logprobs, first.logprobs, 'new logits, new logprobs');
              graph.replay();
              for (const [i, o] of out.entries()) {
                assert.deepEqual(values(o), eager, `B ${B}, V ${V}: replay ${replay}, launch ${i + 1} of the graph`);
              }
            }
          } finally {
            graph.dispose();
          }
          temperature.dispose();
          u.dispose();
          greedy.dispose();
          logits.dispose();
        });
      }
    });
  });

  it('draws and scores as tokenLogprobs over the scaled logits at temperatures 0.7 and 1.3 alike', () => {
    // the logprob is that of the scaled distribution, the same at B 1 as in a batch of 300
    torch.manualSeed(13);
    torch.noGrad(() =>
      torch.scope(() => {
        const V = 151936;
        const many = torch.randn([300, V], { device: dev }).mul(3);
        const one = many.narrow(0, 0, 1).contiguous();
        for (const t of TEMPS) {
          const batch = torch.sampleRows(many, torch.full([300], t, { dtype: 'float32', device: dev }), null, null);
          const single = torch.sampleRows(one, torch.full([1], t, { dtype: 'float32', device: dev }), null, null);
          assert.equal(single.tokens.item(), batch.tokens.select(0, 0).item(), `T ${t}: the same first argmax`);
          const scaled = scaleLogits(one, torch.full([1, 1], t, { dtype: 'float32', device: dev }));
          const want = tokenLogprobs(scaled, single.tokens).item();
          for (const [name, lp] of [
            ['B 1', single.logprobs.item()],
            ['B 300', batch.logprobs.select(0, 0).item()],
          ] as const) {
            assert.ok(
              Math.abs(lp - want) <= 1e-5 * Math.max(1, Math.abs(want)),
              `T ${t}, ${name}: ${lp}, want ${want}`,
            );
          }
        }
      }),
    );
  });
  it('a row draws the same token and logprob, bit for bit, alone and among 299 other rows (seeds honoured per request)', () => {
    torch.manualSeed(14);
    torch.noGrad(() =>
      torch.scope(() => {
        const V = 151936;
        const B = 300;
        const logits = torch.randn([B, V], { device: dev }).mul(3);
        const temps = Array.from({ length: B }, (_, r) => TEMPS[r % 2]);
        const u = Array.from({ length: B }, (_, r) => (r * 0.6180339887) % 1);
        const greedy = Array.from({ length: B }, (_, r) => r % 5 === 4);
        const f32 = (v: number[]) => torch.tensor(v, { dtype: 'float32', device: dev });
        const batch = torch.sampleRows(logits, f32(temps), f32(u), torch.tensor(greedy, { device: dev }));
        const tokens = batch.tokens.toArray() as number[];
        const logprobs = batch.logprobs.toArray() as number[];
        for (const r of [0, 1, 4, 137, 299]) {
          const alone = torch.sampleRows(
            logits.narrow(0, r, 1).contiguous(),
            f32([temps[r]]),
            f32([u[r]]),
            torch.tensor([greedy[r]], { device: dev }),
          );
          assert.equal(alone.tokens.item(), tokens[r], `row ${r}: token alone and in the batch`);
          assert.equal(alone.logprobs.item(), logprobs[r], `row ${r}: logprob alone and in the batch`);
        }
      }),
    );
  });
});
