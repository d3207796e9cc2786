// The engine's asyncScheduling (each decode step queued before the previous one is read, fed the
// token that step left on the device) against the same engine scheduling step by step, on a tiny
// random Qwen3 (CPU, float32): the same token ids and logprobs for greedy and seeded sampled rows,
// requests that end on a stop token mid-batch (their extra token dropped), different lengths,
// requests arriving while others decode, a cache small enough to preempt, stop strings, aborts;
// the same number of tokens generated, and no tensor left behind.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { createCausalLM, tinyConfig, type CausalLM } from '../../src/models/index.js';
import {
  Engine,
  blockBytes,
  type EngineOptions,
  type GenerateResult,
  type SamplingParams,
} from '../../src/engine/index.js';

// prompts of 12, 5, 9, 1 and 21 tokens
const PROMPTS = [12, 5, 9, 1, 21].map((n, i) => Array.from({ length: n }, (_, j) => (37 * i + 11 * j + 5) % 256));

type Job = { prompt: number[]; sampling: SamplingParams; delaySteps?: number; abortAfterMs?: number };

/** Runs the jobs on a fresh engine; a job with delaySteps arrives after that many decode steps of the others. */
async function run(model: CausalLM, o: EngineOptions, jobs: Job[]) {
  const engine = new Engine(model, { maxBatchSize: 8, maxLength: 48, blockSize: 4, ...o });
  try {
    const outs = await Promise.all(
      jobs.map(async (j) => {
        if (j.delaySteps) {
          while (engine.stats.decodeSteps < j.delaySteps) await new Promise((r) => setImmediate(r));
        }
        const controller = new AbortController();
        if (j.abortAfterMs !== undefined) setTimeout(() => controller.abort(), j.abortAfterMs);
        return engine.generate(j.prompt, j.sampling, { signal: controller.signal });
      }),
    );
    return { outs, stats: engine.stats };
  } finally {
    engine.dispose();
  }
}

function assertSame(a: GenerateResult[], b: GenerateResult[]) {
  assert.deepEqual(
    b.map((o) => o.tokenIds),
    a.map((o) => o.tokenIds),
  );
  assert.deepEqual(
    b.map((o) => o.finishReason),
    a.map((o) => o.finishReason),
  );
  b.forEach((o, i) => {
    const d = Math.max(0, ...o.logprobs!.map((x, j) => Math.abs(x - a[i].logprobs![j])));
    assert.ok(d < 1e-5, `request ${i}: logprobs differ by ${d}`);
  });
}

describe('Engine asyncScheduling', () => {
  let model: CausalLM;
  before(() => {
    model = createCausalLM(tinyConfig('qwen3', { initializer_range: 0.1 }), { seed: 21 });
  });
  after(() => model.dispose());

  it('greedy and seeded sampled rows of different lengths: the same tokens and logprobs as step by step', async () => {
    const jobs: Job[] = PROMPTS.flatMap((p, i) => [
      { prompt: p, sampling: { maxTokens: 6 + 3 * i, temperature: 0 } },
      { prompt: p, sampling: { maxTokens: 14 - 2 * i, temperature: 1, topP: 0.9, seed: 7 + i } },
    ]);
    const live = torch.liveTensors();
    const sync = await run(model, { eosTokenIds: [] }, jobs);
    const ahead = await run(model, { eosTokenIds: [], asyncScheduling: true }, jobs);
    assertSame(sync.outs, ahead.outs);
    assert.equal(ahead.stats.generatedTokens, sync.stats.generatedTokens);
    assert.equal(ahead.stats.decodeSteps, sync.stats.decodeSteps, 'rows at their length are not decoded again');
    assert.equal(torch.liveTensors(), live);
  });

  it('requests that end on a stop token mid-batch keep exactly their tokens (the step queued after is dropped)', async () => {
    const greedy: SamplingParams = { maxTokens: 20, temperature: 0 };
    const plain = await run(
      model,
      { eosTokenIds: [] },
      PROMPTS.map((p) => ({ prompt: p, sampling: greedy })),
    );
    // stop tokens that end requests early: the 3rd token of request 0 and the 6th of request 2
    const eos = [plain.outs[0].tokenIds[2], plain.outs[2].tokenIds[5]];
    const jobs = PROMPTS.map((p) => ({ prompt: p, sampling: greedy }));
    const sync = await run(model, { eosTokenIds: eos }, jobs);
    const ahead = await run(model, { eosTokenIds: eos, asyncScheduling: true }, jobs);
    assert.ok(
      sync.outs.some((o) => o.finishReason === 'stop' && o.tokenIds.length < 20),
      'some request stopped early',
    );
    assertSame(sync.outs, ahead.outs);
    assert.equal(ahead.stats.generatedTokens, sync.stats.generatedTokens, 'the dropped tokens are not counted');
    assert.ok(ahead.stats.decodeSteps >= sync.stats.decodeSteps);
  });

  it('requests arriving while others decode, and a cache small enough to preempt: the same tokens', async () => {
    const s = model.spec;
    const perBlock = blockBytes(
      { numLayers: s.numLayers, blockSize: 4, numKvHeads: s.numKvHeads, headDim: s.headDim },
      'float32',
    );
    const jobs: Job[] = PROMPTS.map((p, i) => ({
      prompt: p,
      sampling: { maxTokens: 12, temperature: i % 2 ? 1 : 0, seed: 50 + i },
      delaySteps: i >= 3 ? 4 * (i - 2) : 0,
    }));
    for (const kvCacheBytes of [undefined, 14 * perBlock]) {
      const o = { eosTokenIds: [], ...(kvCacheBytes ? { kvCacheBytes } : {}) };
      const sync = await run(model, o, jobs);
      const ahead = await run(model, { ...o, asyncScheduling: true }, jobs);
      assertSame(sync.outs, ahead.outs);
      if (kvCacheBytes) assert.ok(ahead.stats.preemptions > 0, 'preempted with the small cache');
    }
  });

  it('stop strings end a request at the same token; an aborted request ends with what it had', async () => {
    // a tokenizer that writes each id as a word: the stop string is the text of one of the tokens
    const tokenizer = { decode: (ids: number[]) => ids.map((t) => ` t${t}`).join('') };
    const greedy: SamplingParams = { maxTokens: 16, temperature: 0 };
    const plain = await run(model, { eosTokenIds: [] }, [{ prompt: PROMPTS[1], sampling: greedy }]);
    const stop = ` t${plain.outs[0].tokenIds[4]} `;
    const jobs: Job[] = [
      { prompt: PROMPTS[1], sampling: { ...greedy, stop: [stop] } },
      { prompt: PROMPTS[0], sampling: greedy },
    ];
    const sync = await run(model, { eosTokenIds: [], tokenizer }, jobs);
    const ahead = await run(model, { eosTokenIds: [], tokenizer, asyncScheduling: true }, jobs);
    assert.equal(sync.outs[0].finishReason, 'stop');
    assertSame(sync.outs, ahead.outs);

    const aborted = await run(model, { eosTokenIds: [], asyncScheduling: true }, [
      { prompt: PROMPTS[0], sampling: { maxTokens: 40, temperature: 0 }, abortAfterMs: 0 },
      { prompt: PROMPTS[2], sampling: { maxTokens: 20, temperature: 0 } },
    ]);
    assert.equal(aborted.outs[0].finishReason, 'abort');
    assert.ok(aborted.outs[0].tokenIds.length < 40);
    assert.deepEqual(aborted.outs[0].tokenIds, sync.outs[1].tokenIds.slice(0, aborted.outs[0].tokenIds.length));
    assert.equal(aborted.outs[1].tokenIds.length, 20);
  });
});
