// Sampling functions on fixed logits: frequencies follow the softmax (a generous statistical bound),
// top-k and top-p keep exactly the tokens they should and renormalise, greedy rows take the argmax,
// logprobs are under logits / temperature before truncation, and seeds repeat. Each row draws with
// its own seed (counter-based random numbers: the hash of seed and position, equal to a scalar
// re-derivation here).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { counterUniform, sampleTokens, samplingTensors, seedKey, type RowSampling } from '../../src/engine/index.js';

const LOGITS = [2.0, 1.0, 0.5, 0.0, -1.0, 3.0, -0.5, 1.5];
const V = LOGITS.length;
const N = 40_000;

function softmax(xs: number[], t = 1): number[] {
  const m = Math.max(...xs.map((x) => x / t));
  const e = xs.map((x) => Math.exp(x / t - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

/** Position of every row's draw (any value: rows differ by seed). */
const POSITION = 12;

/**
 * Samples N rows of LOGITS with one setting, row i with seed `firstSeed + i`; returns token
 * frequencies and the first row's logprob per token.
 */
function sampleMany(row: RowSampling, n = N, firstSeed = 0): { freq: number[]; tokens: number[]; logprobs: number[] } {
  return torch.scope(() => {
    const logits = torch.tensor(LOGITS, { dtype: 'float32' }).unsqueeze(0).expand(n, V).contiguous();
    const s = samplingTensors(
      Array.from({ length: n }, (_, i) => ({ ...row, seed: firstSeed + i })),
      V,
      'cpu',
      new Array(n).fill(POSITION),
    );
    const out = sampleTokens(logits, s);
    const tokens = out.tokens.toArray();
    const freq = new Array(V).fill(0);
    for (const t of tokens) freq[t] += 1 / n;
    return { freq, tokens, logprobs: out.logprobs.toArray() };
  });
}

/** |freq - p| within 6 standard deviations of a binomial proportion (and 1e-3). */
function assertFollows(freq: number[], p: number[], what: string): void {
  for (let i = 0; i < p.length; i++) {
    const bound = 6 * Math.sqrt(Math.max(p[i] * (1 - p[i]), 1e-9) / N) + 1e-3;
    assert.ok(
      Math.abs(freq[i] - p[i]) <= bound,
      `${what}: token ${i} freq ${freq[i].toFixed(4)} vs p ${p[i].toFixed(4)} (bound ${bound.toFixed(4)})`,
    );
  }
}

describe('sampling', () => {
  it('sampled-token frequencies follow softmax(logits / temperature)', () => {
    for (const temperature of [1, 0.7, 2]) {
      const { freq, tokens, logprobs } = sampleMany({ temperature }, N, 1_000_000 * temperature);
      assertFollows(freq, softmax(LOGITS, temperature), `temperature ${temperature}`);
      const want = softmax(LOGITS, temperature).map(Math.log);
      tokens.slice(0, 50).forEach((t, i) => assert.ok(Math.abs(logprobs[i] - want[t]) < 1e-5));
    }
  });

  it('top-k keeps the k most likely and renormalises; logprobs stay those of the untruncated distribution', () => {
    const { freq, tokens, logprobs } = sampleMany({ temperature: 1, topK: 3 }, N, 2 ** 40);
    const top3 = [5, 0, 7];
    const p = softmax(LOGITS);
    const z = top3.reduce((a, i) => a + p[i], 0);
    assertFollows(
      freq,
      p.map((x, i) => (top3.includes(i) ? x / z : 0)),
      'top-k 3',
    );
    tokens.slice(0, 50).forEach((t, i) => assert.ok(Math.abs(logprobs[i] - Math.log(p[t])) < 1e-5));
  });

  it('top-p keeps the smallest most-likely set reaching p', () => {
    const p = softmax(LOGITS);
    // sorted: 5 (0.45), 0 (0.17), 7 (0.10), ... -> p = 0.6 keeps {5, 0}: 0.45 < 0.6, then 0.62 >= 0.6 stops
    const order = [...p.keys()].sort((a, b) => p[b] - p[a]);
    let acc = 0;
    const kept: number[] = [];
    for (const i of order) {
      if (acc >= 0.6) break;
      kept.push(i);
      acc += p[i];
    }
    const { freq } = sampleMany({ temperature: 1, topP: 0.6 }, N, 7);
    assertFollows(
      freq,
      p.map((x, i) => (kept.includes(i) ? x / acc : 0)),
      'top-p 0.6',
    );
    const both = sampleMany({ temperature: 1, topP: 0.95, topK: 2 }, N, 3 * N);
    const z = p[5] + p[0];
    assertFollows(
      both.freq,
      p.map((x, i) => (i === 5 || i === 0 ? x / z : 0)),
      'top-k 2 with top-p 0.95',
    );
  });

  it('greedy rows take the argmax (logprob at temperature 1) beside sampled rows; top-k 1 is greedy', () => {
    torch.scope(() => {
      const logits = torch.tensor([LOGITS, LOGITS, LOGITS, LOGITS], { dtype: 'float32' });
      const rows: RowSampling[] = [
        { temperature: 0 },
        { temperature: 1.5 },
        { temperature: 0.9, topK: 1 },
        { temperature: 0 },
      ];
      const out = sampleTokens(logits, samplingTensors(rows, V, 'cpu', [3, 3, 3, 3]));
      const t = out.tokens.toArray();
      assert.equal(t[0], 5);
      assert.equal(t[2], 5);
      assert.equal(t[3], 5);
      const lp = out.logprobs.toArray();
      assert.ok(Math.abs(lp[0] - Math.log(softmax(LOGITS)[5])) < 1e-6);
      assert.ok(Math.abs(lp[2] - Math.log(softmax(LOGITS, 0.9)[5])) < 1e-6);
    });
  });

  it('the same seed gives the same samples, whatever the global generator', () => {
    torch.manualSeed(9);
    const a = sampleMany({ temperature: 1, topP: 0.9 }, 500, 9).tokens;
    torch.manualSeed(10);
    const b = sampleMany({ temperature: 1, topP: 0.9 }, 500, 9).tokens;
    assert.deepEqual(a, b);
    assert.notDeepEqual(sampleMany({ temperature: 1, topP: 0.9 }, 500, 10).tokens, a);
  });

  it('counter-based uniforms are the hash of (seed, position) as a scalar re-derivation computes it, and uniform', () => {
    // lowbias32 (Chris Wellons), written again here on unsigned 32-bit words
    const mix = (x: number) => {
      x = (x ^ (x >>> 16)) >>> 0;
      x = Math.imul(x, 0x7feb352d) >>> 0;
      x = (x ^ (x >>> 15)) >>> 0;
      x = Math.imul(x, 0x846ca68b) >>> 0;
      return (x ^ (x >>> 16)) >>> 0;
    };
    const seeds = [0, 1, 42, 2 ** 31 - 1, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER];
    const positions = [0, 1, 7, 4095, 1 << 20, 3];
    const want = seeds.map((seed, i) => {
      const k = seedKey(seed);
      const word = (Math.imul(positions[i], 0x9e3779b9) + k) >>> 0;
      return (mix(word) >>> 8) / 2 ** 24;
    });
    assert.deepEqual(
      seeds.map((seed, i) => counterUniform(seedKey(seed), positions[i])),
      want,
    );
    assert.equal(new Set(seeds.map(seedKey)).size, seeds.length, 'distinct keys');
    // one seed over 20k positions: mean 1/2, variance 1/12, and no bucket of ten far off 1/10
    const n = 20_000;
    const u = Array.from({ length: n }, (_, p) => counterUniform(seedKey(5), p));
    const mean = u.reduce((a, b) => a + b, 0) / n;
    const variance = u.reduce((a, b) => a + (b - mean) ** 2, 0) / n;
    assert.ok(Math.abs(mean - 0.5) < 0.01, `mean ${mean}`);
    assert.ok(Math.abs(variance - 1 / 12) < 0.005, `variance ${variance}`);
    const buckets = new Array(10).fill(0);
    for (const x of u) buckets[Math.floor(x * 10)]++;
    for (const b of buckets) assert.ok(Math.abs(b / n - 0.1) < 0.01, `bucket ${b / n}`);
  });
});
