// The engine's paged KV cache on a tiny random Qwen3 (CPU, float32), against a reference that
// shares no engine code: greedy decoding by full recomputation (the training forward over the
// whole sequence at every step, argmax of the last position). A cache too small for the batch
// (requests wait, running ones are preempted and recomputed), the n samples of one prompt sharing
// its prefill, and blocks handed out out of order all give the reference's ids; sampled logprobs
// equal the model's own scoring; a request's seed gives it the same tokens whatever else is in the
// batch; the cache is sized from its budget, released for training and taken again.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { createCausalLM, packSequences, tinyConfig, type CausalLM } from '../../src/models/index.js';
import { Engine, blockBytes } from '../../src/engine/index.js';
import { UserError } from '../../src/errors.js';

const PROMPTS = [
  [5, 17, 99, 3, 250, 41, 8, 8, 200, 13, 77, 1],
  [9, 120, 33, 4, 61],
  [2, 240, 180, 7, 7, 90, 31, 150, 11],
  [42],
  [100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120],
];
const NEW = 12;
const greedy = { maxTokens: NEW, temperature: 0 };

/** Greedy continuation by full recomputation: the whole sequence through `model.forward` per token. */
function recomputedGreedy(model: CausalLM, prompt: number[], n: number): number[] {
  const seq = [...prompt];
  for (let i = 0; i < n; i++) {
    const next = torch.noGrad(() =>
      torch.scope(() => {
        using b = packSequences([seq]);
        return model
          .forward(b)
          .select(0, seq.length - 1)
          .argmax(-1)
          .item();
      }),
    );
    seq.push(next);
  }
  return seq.slice(prompt.length);
}

/** The model's own logprob of each response token at `temperature`. */
function scored(model: CausalLM, prompt: number[], response: number[], temperature = 1): number[] {
  return torch.noGrad(() =>
    torch.scope(() => {
      using b = packSequences([[...prompt, ...response]]);
      return model
        .logprobs(b, { temperature })
        .logprobs.toArray()
        .slice(prompt.length - 1, prompt.length - 1 + response.length);
    }),
  );
}

const maxDiff = (a: number[], b: number[]) => Math.max(...a.map((x, i) => Math.abs(x - b[i])));

describe('engine: paged KV cache', () => {
  let model: CausalLM;
  let want: number[][];
  /** Bytes of n blocks of 4 tokens of this model. */
  let blocksOf: (n: number) => number;

  before(() => {
    model = createCausalLM(tinyConfig('qwen3', { initializer_range: 0.1 }), { seed: 21 });
    want = PROMPTS.map((p) => recomputedGreedy(model, p, NEW));
    const s = model.spec;
    blocksOf = (n) =>
      n * blockBytes({ numLayers: s.numLayers, blockSize: 4, numKvHeads: s.numKvHeads, headDim: s.headDim }, 'float32');
  });
  after(() => model.dispose());

  it('greedy ids equal full recomputation, batched over blocks of 4 tokens', async () => {
    using engine = new Engine(model, { maxBatchSize: 8, maxLength: 48, blockSize: 4, eosTokenIds: [] });
    const outs = await Promise.all(PROMPTS.map((p) => engine.generate(p, greedy)));
    assert.deepEqual(
      outs.map((o) => o.tokenIds),
      want,
    );
    assert.equal(engine.stats.blocksUsed, 0, 'finished sequences gave their blocks back');
    // every prompt + response, in blocks of 4, held at once at the end
    const need = PROMPTS.reduce((n, p) => n + Math.ceil((p.length + NEW - 1) / 4), 0);
    assert.equal(engine.stats.peakBlocksUsed, need);
  });

  it('a cache too small for the batch: requests wait, running ones are preempted and recomputed, ids unchanged', async () => {
    // 14 blocks of 4 tokens: the five sequences need 33 at their longest, one alone at most 8
    using engine = new Engine(model, {
      maxBatchSize: 8,
      maxLength: 48,
      blockSize: 4,
      eosTokenIds: [],
      kvCacheBytes: blocksOf(14),
    });
    assert.equal(engine.cacheInfo.numBlocks, 14);
    const outs = await Promise.all(PROMPTS.map((p) => engine.generate(p, greedy)));
    assert.deepEqual(
      outs.map((o) => o.tokenIds),
      want,
    );
    outs.forEach((o, i) => {
      assert.equal(o.finishReason, 'length');
      const d = maxDiff(o.logprobs!, scored(model, PROMPTS[i], o.tokenIds));
      assert.ok(d < 1e-4, `prompt ${i}: logprobs max |diff| ${d}`);
    });
    assert.ok(engine.stats.preemptions > 0, `${engine.stats.preemptions} preemptions`);
    assert.ok(engine.stats.peakBlocksUsed <= 14);
    assert.equal(engine.stats.blocksUsed, 0);
  });

  it('the n samples of one prompt prefill it once and share its blocks; greedy and sampled rows stay right', async () => {
    using engine = new Engine(model, { maxBatchSize: 16, maxLength: 48, blockSize: 4, eosTokenIds: [] });
    // PROMPTS[0]: 12 tokens, three full blocks; PROMPTS[2]: 9 tokens, two full and a partial one (copied per sample)
    const groups = [PROMPTS[0], PROMPTS[2]];
    const n = 4;
    const outs = await Promise.all(groups.flatMap((p) => Array.from({ length: n }, () => engine.generate(p, greedy))));
    outs.forEach((o, i) => assert.deepEqual(o.tokenIds, i < n ? want[0] : want[2], `sample ${i}`));
    assert.equal(engine.stats.prefills, 1);
    assert.equal(engine.stats.prefillTokens, PROMPTS[0].length + PROMPTS[2].length, 'each prompt prefilled once');
    // PROMPTS[0]'s 3 blocks held by its 4 samples together, then 3 more each as it grows to 23 tokens;
    // PROMPTS[2]'s 2 full blocks together, its partial block once per sample, then 2 more each (20 tokens).
    // Unshared, the same would take n * 6 + n * 5 = 44.
    assert.equal(engine.stats.peakBlocksUsed, 3 + n * 3 + 2 + n * (1 + 2));

    const sampled = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        engine.generate(PROMPTS[2], { maxTokens: NEW, temperature: 1, seed: 100 + i }),
      ),
    );
    assert.ok(new Set(sampled.map((o) => o.tokenIds.join())).size > 1, 'the samples went apart');
    sampled.forEach((o, i) => {
      const d = maxDiff(o.logprobs!, scored(model, PROMPTS[2], o.tokenIds));
      assert.ok(d < 1e-4, `sample ${i}: logprobs max |diff| ${d}`);
    });
  });

  it('a seeded request gives the same tokens alone, in other batches, shared with its group, and after preemption', async () => {
    const mine = { maxTokens: NEW, temperature: 1, topP: 0.95, seed: 31337 };
    const run = async (withOthers: boolean) => {
      using engine = new Engine(model, { maxBatchSize: 8, maxLength: 48, blockSize: 4, eosTokenIds: [] });
      const others = withOthers
        ? PROMPTS.slice(2).map((p, i) => engine.generate(p, { maxTokens: NEW, temperature: 0.8, seed: i }))
        : [];
      const [r] = await Promise.all([engine.generate(PROMPTS[0], mine), ...others]);
      return r.tokenIds;
    };
    const alone = { tokens: await run(false) };
    assert.deepEqual(await run(true), alone.tokens);
    // the same request twice (a group) and others, in a cache small enough to preempt
    {
      using engine = new Engine(model, {
        maxBatchSize: 8,
        maxLength: 48,
        blockSize: 4,
        eosTokenIds: [],
        kvCacheBytes: blocksOf(12),
      });
      const outs = await Promise.all([
        ...PROMPTS.slice(1).map((p, i) => engine.generate(p, { maxTokens: NEW, temperature: 1, seed: 7 + i })),
        engine.generate(PROMPTS[0], mine),
        engine.generate(PROMPTS[0], mine),
      ]);
      assert.ok(engine.stats.preemptions > 0, 'something was preempted');
      assert.deepEqual(outs[outs.length - 1].tokenIds, alone.tokens);
      assert.deepEqual(outs[outs.length - 2].tokenIds, alone.tokens);
    }
    const otherSeed = await (async () => {
      using engine = new Engine(model, { maxBatchSize: 8, maxLength: 48, blockSize: 4, eosTokenIds: [] });
      return (await engine.generate(PROMPTS[0], { ...mine, seed: 31338 })).tokenIds;
    })();
    assert.notDeepEqual(otherSeed, alone.tokens);
  });

  it('sizes the cache from its budget (capped at what the batch can use), refuses one too small, and releases it for training', async () => {
    const s = model.spec;
    const perBlock16 = blockBytes(
      { numLayers: s.numLayers, blockSize: 16, numKvHeads: s.numKvHeads, headDim: s.headDim },
      'float32',
    );
    {
      // the default budget (half the host's memory) is far more than 4 x 64 tokens need: capped
      using engine = new Engine(model, { maxBatchSize: 4, maxLength: 64, eosTokenIds: [] });
      assert.equal(engine.cacheInfo.numBlocks, 4 * 4);
      assert.equal(engine.cacheInfo.bytes, 16 * perBlock16);
      assert.match(
        engine.describeCache(),
        /^engine KV cache: 16 blocks of 16 tokens \(256 tokens, 4\.0 sequences of 64\), .* GiB; budget from gpu_memory_utilization 0\.5 of the host's/,
      );
    }
    assert.throws(
      () => new Engine(model, { maxLength: 64, kvCacheBytes: 3 * perBlock16 }),
      (e: unknown) =>
        e instanceof UserError &&
        /holds 3 blocks of 16 tokens, fewer than the 4 one sequence of max length 64 needs/.test(e.message),
    );
    assert.throws(() => new Engine(model, { gpuMemoryUtilization: 1.5 }), /gpuMemoryUtilization must be in \(0, 1\]/);
    // on the CPU, 'auto' decode attention is SDPA and the CUDA kernel is refused by name
    {
      using cpuEngine = new Engine(model, { maxLength: 64 });
      assert.equal(cpuEngine.decodeAttention, 'sdpa');
      assert.equal(cpuEngine.fusedKernels, false, 'the fused decode kernels are CUDA-only');
    }
    assert.throws(
      () => new Engine(model, { maxLength: 64, fusedDecodeKernels: true }),
      (e: unknown) =>
        e instanceof UserError && /fusedDecodeKernels: the fused decode kernels run on CUDA/.test(e.message),
    );
    assert.throws(
      () => new Engine(model, { maxLength: 64, decodeAttention: 'paged' }),
      (e: unknown) => e instanceof UserError && /'paged' runs on CUDA in bf16/.test(e.message),
    );
    assert.throws(() => new Engine(model, { gpuMemoryUtilization: 1e-12 }), /raise gpu_memory_utilization/);

    using engine = new Engine(model, { maxBatchSize: 4, maxLength: 48, blockSize: 4, eosTokenIds: [] });
    const first = await engine.generate(PROMPTS[1], greedy);
    const live = torch.liveTensors();
    engine.releaseCache();
    assert.equal(engine.cacheAllocated, false);
    assert.equal(torch.liveTensors(), live - 2 * s.numLayers, "the cache's K and V tensors are freed");
    const again = await engine.generate(PROMPTS[1], greedy);
    assert.equal(engine.cacheAllocated, true);
    assert.deepEqual(again.tokenIds, first.tokenIds);
    assert.deepEqual(first.tokenIds, want[1]);
  });
});
