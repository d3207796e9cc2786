// The generation engine on tiny random Qwen3 and Llama models that transformers makes during the
// test (one Python call): greedy ids equal transformers' generate(do_sample=False) token for token,
// logprobs equal our own model.logprobs scoring, the cached forward equals the training forward,
// batching and continuous arrival change nothing, seeded sampling repeats, stops/length/abort end
// one request while the others go on, bad requests fail alone, and no tensor leaks.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as torch from '../../src/torch/index.js';
import { loadCausalLM, packSequences, type CausalLM } from '../../src/models/index.js';
import { Engine, KVCache, decodeStep, generationModel, prefill, type GenerationModel } from '../../src/engine/index.js';
import { UserError } from '../../src/errors.js';
import type { GenerateResult } from '../../src/agent/index.js';
import { runPython } from '../helpers/python.js';

const REFERENCE = readFileSync(fileURLToPath(new URL('./engine_reference.py', import.meta.url)), 'utf8');

const PROMPTS = [
  [5, 17, 99, 3, 250, 41, 8, 8, 200, 13, 77, 1],
  [9, 120, 33, 4, 61],
  [2, 240, 180, 7, 7, 90, 31, 150, 11],
  [42],
  [100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120],
];
const MAX_NEW = 16;
const common = {
  hidden_size: 64,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  intermediate_size: 96,
  vocab_size: 256,
  max_position_embeddings: 512,
  rms_norm_eps: 1e-6,
  initializer_range: 0.1,
};
const CASES = [
  {
    name: 'qwen3',
    model_type: 'qwen3',
    seed: 11,
    config: { ...common, head_dim: 24, rope_theta: 1000000.0, eos_token_id: [147, 2] },
  },
  {
    name: 'llama',
    model_type: 'llama',
    seed: 12,
    config: {
      ...common,
      num_key_value_heads: 1,
      rope_theta: 500000.0,
      eos_token_id: [246, 2],
      rope_scaling: {
        rope_type: 'llama3',
        factor: 8.0,
        low_freq_factor: 1.0,
        high_freq_factor: 4.0,
        original_max_position_embeddings: 32,
      },
    },
  },
];
// Stop ids the Python side gets; the engine reads the same from the saved model's folder.
const EOS: Record<string, number[]> = { qwen3: [147, 2], llama: [246, 2] };

const greedy = { maxTokens: MAX_NEW, temperature: 0 };

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length, 'lengths differ');
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** Our own scoring of prompt + response: the logprob of each response token at temperature `temperature`. */
function scored(model: CausalLM, prompt: number[], response: number[], temperature = 1): number[] {
  return torch.scope(() => {
    using b = packSequences([[...prompt, ...response]]);
    return model
      .logprobs(b, { temperature })
      .logprobs.toArray()
      .slice(prompt.length - 1, prompt.length - 1 + response.length);
  });
}

async function oneAtATime(engine: Engine, prompts: number[][], sampling = greedy): Promise<GenerateResult[]> {
  const out: GenerateResult[] = [];
  for (const p of prompts) out.push(await engine.generate(p, sampling));
  return out;
}

describe('engine (CPU, float32)', () => {
  const root = mkdtempSync(join(tmpdir(), 'agent-r1-engine-'));
  let ref: Record<string, number[][]>;
  const models = new Map<string, CausalLM>();

  before(() => {
    ref = runPython<Record<string, number[][]>>(REFERENCE, {
      cases: CASES.map((c) => ({ ...c, dir: join(root, c.name) })),
      prompts: PROMPTS,
      max_new_tokens: MAX_NEW,
      eos_token_ids: EOS,
    });
    for (const c of CASES) models.set(c.name, loadCausalLM(join(root, c.name)));
  });
  after(() => {
    for (const m of models.values()) m.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  for (const c of CASES) {
    describe(c.name, () => {
      it('greedy ids equal transformers generate(do_sample=False), prompts batched together; logprobs equal model.logprobs', async () => {
        const model = models.get(c.name)!;
        using engine = new Engine(model, { maxBatchSize: 8, maxLength: 64 });
        assert.deepEqual(engine.eosTokenIds, EOS[c.name]);
        const outs = await Promise.all(PROMPTS.map((p) => engine.generate(p, greedy)));
        assert.ok(
          ref[c.name].some((ids) => ids.length < MAX_NEW),
          'some reference run stops on eos',
        );
        outs.forEach((o, i) => {
          assert.deepEqual(o.tokenIds, ref[c.name][i], `prompt ${i}`);
          const stopped = EOS[c.name].includes(o.tokenIds[o.tokenIds.length - 1]);
          assert.equal(o.finishReason, stopped ? 'stop' : 'length');
          const d = maxAbsDiff(o.logprobs!, scored(model, PROMPTS[i], o.tokenIds));
          assert.ok(d < 1e-4, `prompt ${i}: logprobs max |diff| ${d}`);
        });
        assert.ok(engine.stats.steps < (PROMPTS.length * MAX_NEW) / 2, `batched: ${engine.stats.steps} steps`);
        // one prefill gives every first token; each decode step one more token of each row still running
        const { stats } = engine;
        const lengths = outs.map((o) => o.tokenIds.length);
        assert.equal(stats.prefills, 1);
        assert.equal(stats.decodeSteps, Math.max(...lengths) - 1);
        assert.equal(stats.steps, stats.prefills + stats.decodeSteps);
        assert.equal(
          stats.decodedRows,
          lengths.reduce((a, n) => a + n - 1, 0),
        );
        assert.ok(stats.hostSeconds > 0 && stats.deviceWaitSeconds >= 0, 'steps are timed');
        assert.equal(stats.graphCaptures, 0, 'no CUDA graphs on the CPU');
      });

      it("the cached forward gives the training forward's logits (prefill, then decode steps of rows of different lengths, blocks out of order)", () => {
        const model = models.get(c.name)!;
        const seqs = [
          [...PROMPTS[0], 3, 9, 27],
          [...PROMPTS[1], 5, 6, 7, 8, 9, 10],
          [...PROMPTS[3], 200, 201, 202],
        ];
        const promptLens = [PROMPTS[0].length, PROMPTS[1].length, PROMPTS[3].length];
        const steps = 3;
        torch.noGrad(() =>
          torch.scope(() => {
            const want = seqs.map((s) => {
              using b = packSequences([s]);
              return model.forward(b).to('float32');
            });
            const m: GenerationModel = generationModel(model);
            const BS = 4;
            using cache = new KVCache(
              {
                numLayers: model.spec.numLayers,
                numBlocks: 16,
                blockSize: BS,
                numKvHeads: model.spec.numKvHeads,
                headDim: model.spec.headDim,
              },
              { dtype: 'float32', device: 'cpu' },
            );
            // each sequence's blocks, not in order: the cache is gathered through the block tables
            const tables = [
              [9, 2, 14, 5],
              [3, 11, 7],
              [12, 1],
            ];
            const slot = (i: number, p: number) => tables[i][Math.floor(p / BS)] * BS + (p % BS);
            using batch = packSequences(seqs.map((s, i) => s.slice(0, promptLens[i])));
            const slots = torch.tensor(seqs.flatMap((s, i) => s.slice(0, promptLens[i]).map((_, p) => slot(i, p))));
            const lastIndex = torch.tensor(batch.cuSeqlens.slice(1).map((x) => x - 1));
            const first = prefill(m, cache, { batch, slots, lastIndex });
            seqs.forEach((_, i) => {
              const d = maxAbsDiff(first.select(0, i).toArray(), want[i].select(0, promptLens[i] - 1).toArray());
              assert.ok(d < 1e-4, `prefill row ${i}: ${d}`);
            });
            for (let t = 0; t < steps; t++) {
              const positions = promptLens.map((p) => p + t);
              const W = Math.max(...positions.map((p) => Math.floor(p / BS) + 1));
              const logits = decodeStep(m, cache, {
                ids: torch.tensor(seqs.map((s, i) => s[positions[i]])),
                positions: torch.tensor(positions),
                slots: torch.tensor(positions.map((p, i) => slot(i, p))),
                blockTables: torch.tensor(tables.map((b) => Array.from({ length: W }, (_, j) => b[j] ?? 0))),
              });
              seqs.forEach((_, i) => {
                const d = maxAbsDiff(logits.select(0, i).toArray(), want[i].select(0, positions[i]).toArray());
                assert.ok(d < 1e-4, `decode step ${t} row ${i}: ${d}`);
              });
            }
            m.invFreq.dispose();
          }),
        );
      });
    });
  }

  it('batched, continuous (requests arriving mid-run) and one-at-a-time greedy give the same ids', async () => {
    const model = models.get('qwen3')!;
    // a small prefill budget: admitted prompts are split over several prefills, the longest goes alone
    using engine = new Engine(model, { maxBatchSize: 3, maxLength: 64, maxPrefillTokens: 10 });
    const alone = await oneAtATime(engine, PROMPTS);
    const first = PROMPTS.slice(0, 2).map((p) => engine.generate(p, greedy));
    // wait until the first two are decoding, then add the rest (more than the free slots: they queue)
    while (engine.stats.steps < 3) await new Promise((r) => setImmediate(r));
    const late = PROMPTS.slice(2).map((p) => engine.generate(p, greedy));
    const outs = await Promise.all([...first, ...late]);
    assert.deepEqual(
      outs.map((o) => o.tokenIds),
      alone.map((o) => o.tokenIds),
    );
    assert.ok(outs.every((o, i) => maxAbsDiff(o.logprobs!, alone[i].logprobs!) < 1e-5));
    assert.ok(engine.stats.prefills >= 2 * PROMPTS.length - 1, `${engine.stats.prefills} prefills`);
  });

  it("top-k 1 equals greedy; sampled logprobs are model.logprobs at the request's temperature", async () => {
    const model = models.get('llama')!;
    using engine = new Engine(model, { maxBatchSize: 8, maxLength: 64 });
    const g = await Promise.all(PROMPTS.map((p) => engine.generate(p, greedy)));
    const k1 = await Promise.all(
      PROMPTS.map((p) => engine.generate(p, { maxTokens: MAX_NEW, temperature: 0.7, topK: 1 })),
    );
    assert.deepEqual(
      k1.map((o) => o.tokenIds),
      g.map((o) => o.tokenIds),
    );
    const temps = [0.5, 1, 1.3, 0.8, 2];
    const s = await Promise.all(
      PROMPTS.map((p, i) => engine.generate(p, { maxTokens: 8, temperature: temps[i], topP: 0.9, topK: 50 })),
    );
    s.forEach((o, i) => {
      const d = maxAbsDiff(o.logprobs!, scored(model, PROMPTS[i], o.tokenIds, temps[i]));
      assert.ok(d < 1e-4, `row ${i} at temperature ${temps[i]}: ${d}`);
    });
  });

  it('seeded sampling is reproducible for a whole batch run', async () => {
    const model = models.get('qwen3')!;
    using engine = new Engine(model, { maxBatchSize: 8, maxLength: 64 });
    const run = async (seed: number) => {
      torch.manualSeed(seed);
      const outs = await Promise.all(PROMPTS.map((p) => engine.generate(p, { maxTokens: 12, temperature: 1 })));
      return outs.map((o) => o.tokenIds);
    };
    const a = await run(7);
    const b = await run(7);
    const c = await run(8);
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
  });

  it('stop ids, max tokens and abort each end their request while the others go on', async () => {
    const model = models.get('qwen3')!;
    using engine = new Engine(model, { maxBatchSize: 8, maxLength: 64 });
    const base = await engine.generate(PROMPTS[0], { maxTokens: 12, temperature: 0 });
    const other = await engine.generate(PROMPTS[2], { maxTokens: 12, temperature: 0 });
    const stopAt = base.tokenIds[4];
    const firstIndex = base.tokenIds.indexOf(stopAt);
    const [stopped, short, aborted, untouched] = await Promise.all([
      engine.generate(PROMPTS[0], { maxTokens: 12, temperature: 0, stopTokenIds: [stopAt] }),
      engine.generate(PROMPTS[0], { maxTokens: 3, temperature: 0 }),
      engine.generate(PROMPTS[1], { maxTokens: 40, temperature: 0 }, { signal: AbortSignal.abort() }),
      engine.generate(PROMPTS[2], { maxTokens: 12, temperature: 0 }),
    ]);
    assert.equal(stopped.finishReason, 'stop');
    assert.deepEqual(stopped.tokenIds, base.tokenIds.slice(0, firstIndex + 1));
    assert.equal(short.finishReason, 'length');
    assert.deepEqual(short.tokenIds, base.tokenIds.slice(0, 3));
    assert.equal(aborted.finishReason, 'abort'); // already aborted before it was sent
    assert.deepEqual(aborted.tokenIds, []);
    assert.deepEqual(untouched.tokenIds, other.tokenIds);

    // abort in the middle of a run: the request ends with what it had, the others finish
    const mid = new AbortController();
    const started = engine.stats.generatedTokens;
    const running = engine.generate(PROMPTS[1], { maxTokens: 40, temperature: 0 }, { signal: mid.signal });
    const neighbour = engine.generate(PROMPTS[2], { maxTokens: 12, temperature: 0 });
    while (engine.stats.generatedTokens - started < 8) await new Promise((r) => setImmediate(r));
    mid.abort();
    const [r1, r2] = await Promise.all([running, neighbour]);
    assert.equal(r1.finishReason, 'abort');
    assert.ok(r1.tokenIds.length > 0 && r1.tokenIds.length < 40, `${r1.tokenIds.length} tokens before the abort`);
    assert.equal(r1.logprobs!.length, r1.tokenIds.length);
    assert.deepEqual(r2.tokenIds, other.tokenIds);
  });

  it('the engine\'s max length ends a response with finish "length"; an overlong prompt is an error for that request only', async () => {
    const model = models.get('qwen3')!;
    using engine = new Engine(model, { maxBatchSize: 4, maxLength: 16 });
    const long = Array.from({ length: 16 }, (_, i) => i + 3);
    const results = await Promise.allSettled([
      engine.generate(PROMPTS[0], { maxTokens: 100, temperature: 0 }),
      engine.generate(long, greedy),
      engine.generate(PROMPTS[1], { maxTokens: 5, temperature: 0 }),
      engine.generate([], greedy),
      engine.generate([5, 300], greedy),
      engine.generate([5], { maxTokens: 4, topP: 0 }),
    ]);
    const [fits, overlong, ok, empty, outside, badTopP] = results;
    assert.equal(fits.status, 'fulfilled');
    assert.equal((fits as PromiseFulfilledResult<GenerateResult>).value.finishReason, 'length');
    assert.equal((fits as PromiseFulfilledResult<GenerateResult>).value.tokenIds.length, 16 - PROMPTS[0].length);
    assert.equal(overlong.status, 'rejected');
    const e = (overlong as PromiseRejectedResult).reason;
    assert.ok(e instanceof UserError);
    assert.match(e.message, /prompt of 16 tokens does not fit the engine's max length 16/);
    assert.equal(ok.status, 'fulfilled');
    assert.equal((ok as PromiseFulfilledResult<GenerateResult>).value.tokenIds.length, 5);
    assert.match((empty as PromiseRejectedResult).reason.message, /at least one token/);
    assert.match((outside as PromiseRejectedResult).reason.message, /300 is outside the vocabulary/);
    assert.match((badTopP as PromiseRejectedResult).reason.message, /topP must be in \(0, 1\]/);
    await assert.rejects(engine.generate([5], { maxTokens: 2, stop: ['x'] }), /stop strings need a tokenizer/);
  });

  it('keeps the event loop free while decoding, and leaks no tensor', async () => {
    const model = models.get('llama')!;
    const before = torch.liveTensors();
    const engine = new Engine(model, { maxBatchSize: 8, maxLength: 128 });
    const idle = torch.liveTensors();
    let ticks = 0;
    const timer = setInterval(() => {
      ticks++;
    }, 1);
    const started = performance.now();
    await Promise.all(
      PROMPTS.map((p) => engine.generate(p, { maxTokens: 60, temperature: 1, topP: 0.95, stopTokenIds: [] })),
    );
    const ms = performance.now() - started;
    clearInterval(timer);
    assert.ok(ticks >= Math.min(10, ms / 20), `a 1 ms timer fired ${ticks} times in ${ms.toFixed(0)} ms`);
    await engine.idle();
    assert.equal(torch.liveTensors(), idle, 'idle engine: only its cache');
    engine.dispose();
    assert.equal(torch.liveTensors(), before);
    await assert.rejects(engine.generate([1], greedy), /disposed/);
  });
});
