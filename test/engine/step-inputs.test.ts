// The engine's static step inputs (step-inputs.ts), on the CPU: what a CUDA graph captures is
// StepInputs.decode over them, so here it runs eagerly against an independent composition of the
// same math over fresh tensors (int64 tensors made from BigInts, sampling settings built by hand):
// each row's temperature, top-k, top-p and greedy flag, its uniform number from a 32-bit seed key
// (some above 2^31) at the position it draws (its position + 1), and a bucket padded past the batch
// (rows repeating row 0) leaving the live rows' tokens and logprobs as they are.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import type { Tensor } from '../../src/torch/index.js';
import { createCausalLM, packSequences, tinyConfig } from '../../src/models/index.js';
import {
  KVCache,
  StepInputs,
  decodeStep,
  generationModel,
  prefill,
  counterUniform,
  rowSettings,
  sampleTokens,
  seedKey,
  type RowSampling,
  type SamplingTensors,
} from '../../src/engine/index.js';

const int64 = (values: number[]) => torch.tensor(BigInt64Array.from(values, BigInt));

/** The settings of `rows` drawing at `positions` as tensors built directly from their values (no packing). */
function handBuilt(rows: RowSampling[], V: number, positions: number[]): SamplingTensors {
  const greedy = rows.map((r) => r.temperature === 0);
  return {
    temperature: torch.tensor(
      Float32Array.from(rows, (r, i) => (greedy[i] ? 1 : (r.temperature ?? 1))),
      { shape: [rows.length, 1] },
    ),
    greedy: torch.tensor(greedy),
    allGreedy: false,
    topK: torch.tensor(
      BigInt64Array.from(rows, (r) => BigInt(r.topK && r.topK > 0 ? Math.min(r.topK, V) : V)),
      { shape: [rows.length, 1] },
    ),
    topP: torch.tensor(
      Float32Array.from(rows, (r) => r.topP ?? 1),
      { shape: [rows.length, 1] },
    ),
    uniforms: torch.tensor(Float32Array.from(rows, (r, i) => counterUniform(seedKey(r.seed ?? 0), positions[i]))),
  };
}

// a greedy row, then sampled rows with each feature; the seeds' keys include some above 2^31
const ROWS: RowSampling[] = [
  { temperature: 0 },
  { temperature: 0.7, seed: 2 ** 40 + 5 },
  { temperature: 1, topK: 3, seed: 17 },
  { temperature: 1.3, topP: 0.6, seed: 123456789 },
  { temperature: 1, seed: 4 },
  { temperature: 0.9, topK: 40, topP: 0.9, seed: 99 },
];

describe('StepInputs', () => {
  it("sample: every row's settings and 32-bit key, drawing at position + 1, as tensors built by hand give them", () => {
    assert.ok(
      ROWS.some((r) => seedKey(r.seed ?? 0) >= 2 ** 31),
      'a key above 2^31 (negative as a signed 32-bit word)',
    );
    const V = 50;
    using inputs = new StepInputs({ maxBatch: 8, maxWidth: 4, vocabSize: V, device: 'cpu' });
    torch.scope(() => {
      torch.manualSeed(3);
      const logits = torch.randn([ROWS.length, V]).mul(2);
      const last = [3, 10, 100, 7, 4095, 31];
      const features = inputs.fillSampling(
        ROWS.map((r) => rowSettings(r, V)),
        last,
      );
      assert.deepEqual(features, { allGreedy: false, mixed: true, topK: true, topP: true });
      const got = inputs.sample(logits, features);
      const want = sampleTokens(
        logits,
        handBuilt(
          ROWS,
          V,
          last.map((p) => p + 1),
        ),
      );
      assert.deepEqual(got.tokens.toArray(), want.tokens.toArray());
      assert.deepEqual(got.logprobs.toArray(), want.logprobs.toArray());
      assert.equal(got.tokens.toArray()[0], logits.select(0, 0).argmax(-1).item(), 'the greedy row takes the argmax');
      // the counter matters: drawing at the positions themselves gives other tokens
      const shifted = sampleTokens(logits, handBuilt(ROWS, V, last));
      assert.notDeepEqual(shifted.tokens.toArray(), want.tokens.toArray());
    });
  });

  it('decode over a bucket padded past the batch gives the live rows what decodeStep and sampleTokens over fresh tensors give', () => {
    const model = createCausalLM(tinyConfig('qwen3', { initializer_range: 0.1 }), { seed: 8 });
    const m = generationModel(model);
    const V = model.spec.vocabSize;
    const BS = 4;
    const prompts = [
      [5, 17, 99, 3, 250, 41, 8],
      [9, 120, 33],
      [2, 240, 180, 7, 7, 90, 31, 150, 11, 4, 4],
    ];
    const rows = ROWS.slice(1, 4);
    // each prompt's blocks (room for one more token), out of order
    const tables = [[6, 1], [3], [0, 7, 4]];
    const slot = (i: number, p: number) => tables[i][Math.floor(p / BS)] * BS + (p % BS);
    const positions = prompts.map((p) => p.length);
    const W = 4; // wider than any row needs, as a graph's width bucket
    torch.noGrad(() =>
      torch.scope(() => {
        using cache = new KVCache(
          {
            numLayers: model.spec.numLayers,
            numBlocks: 8,
            blockSize: BS,
            numKvHeads: model.spec.numKvHeads,
            headDim: model.spec.headDim,
          },
          { dtype: 'float32', device: 'cpu' },
        );
        using batch = packSequences(prompts);
        prefill(m, cache, {
          batch,
          slots: int64(prompts.flatMap((p, i) => p.map((_, j) => slot(i, j)))),
          lastIndex: int64(batch.cuSeqlens.slice(1).map((x) => x - 1)),
        });
        const ids = [7, 8, 9];
        const logits = decodeStep(m, cache, {
          ids: int64(ids),
          positions: int64(positions),
          slots: int64(positions.map((p, i) => slot(i, p))),
          blockTables: torch.tensor(
            BigInt64Array.from(tables.flatMap((t) => Array.from({ length: W }, (_, j) => BigInt(t[j] ?? 0)))),
            { shape: [3, W] },
          ),
        });
        const want = sampleTokens(
          logits,
          handBuilt(
            rows,
            V,
            positions.map((p) => p + 1),
          ),
        );
        using inputs = new StepInputs({ maxBatch: 8, maxWidth: 6, vocabSize: V, device: 'cpu' });
        const decodeRows = {
          ids,
          positions,
          slots: positions.map((p, i) => slot(i, p)),
          blocks: tables,
          width: W,
          sampling: rows.map((r) => rowSettings(r, V)),
        };
        for (const bucket of [3, 8]) {
          const features = inputs.fillDecode(decodeRows, bucket);
          assert.deepEqual(features, { allGreedy: false, mixed: false, topK: true, topP: true });
          const got = inputs.decode(m, cache, { bucket, width: W, features, attention: 'sdpa' });
          assert.equal(got.tokens.size(0), bucket);
          const live = (t: Tensor) => t.narrow(0, 0, 3).toArray();
          assert.deepEqual(live(got.tokens), want.tokens.toArray(), `bucket ${bucket}: tokens`);
          const d = Math.max(...live(got.logprobs).map((x, i) => Math.abs(x - want.logprobs.toArray()[i])));
          assert.ok(d < 1e-6, `bucket ${bucket}: logprobs max |diff| ${d}`);
          if (bucket > 3) {
            // padding rows repeat row 0
            for (let r = 3; r < bucket; r++) assert.equal(got.tokens.toArray()[r], got.tokens.toArray()[0]);
          }
        }
        assert.throws(() => inputs.fillDecode(decodeRows, 9), /at most 8 rows/);
      }),
    );
    m.invFreq.dispose();
    model.dispose();
  });

  it("runAhead: rows fed from the previous step's tokens on the device decode as with those ids given; a warm-up run leaves them be", () => {
    const model = createCausalLM(tinyConfig('qwen3', { initializer_range: 0.1 }), { seed: 8 });
    const m = generationModel(model);
    const V = model.spec.vocabSize;
    const greedy = rowSettings({ temperature: 0 }, V);
    torch.noGrad(() =>
      torch.scope(() => {
        const shape = { numLayers: model.spec.numLayers, numBlocks: 4, blockSize: 4 };
        const heads = { numKvHeads: model.spec.numKvHeads, headDim: model.spec.headDim };
        using cache = new KVCache({ ...shape, ...heads }, { dtype: 'float32', device: 'cpu' });
        using ahead = new StepInputs({ maxBatch: 4, maxWidth: 2, vocabSize: V, device: 'cpu', runAhead: true });
        using plain = new StepInputs({ maxBatch: 4, maxWidth: 2, vocabSize: V, device: 'cpu' });
        // three rows at position 0 of their own block, then each at position 1
        const step = (inputs: StepInputs, ids: number[], position: number, from?: number[]) => {
          const rows = {
            ids,
            ...(from ? { from } : {}),
            positions: ids.map(() => position),
            slots: ids.map((_, i) => i * 4 + position),
            blocks: ids.map((_, i) => [i]),
            width: 2,
            sampling: ids.map(() => greedy),
          };
          const features = inputs.fillDecode(rows, ids.length);
          const out = inputs.decode(m, cache, { bucket: ids.length, width: 2, features, attention: 'sdpa' });
          return { tokens: out.tokens.toArray(), logprobs: out.logprobs.toArray() };
        };
        const first = step(ahead, [11, 22, 33], 0);
        // a warm-up step over other ids (as before a graph capture): its tokens are not kept
        let warm: number[] = [];
        ahead.keepingLastTokens(() => {
          warm = step(ahead, [44, 55, 66], 0).tokens;
        });
        assert.notDeepEqual(warm, first.tokens, 'the warm-up drew other tokens');
        step(ahead, [11, 22, 33], 0); // the cache as the first step left it
        ahead.keepingLastTokens(() => step(ahead, [44, 55, 66], 0));
        step(plain, [11, 22, 33], 0);
        // rows 0 and 2 feed from the last step (its rows 0 and 2), row 1 takes its id from the host
        const fed = step(ahead, [0, 7, 0], 1, [0, -1, 2]);
        step(plain, [11, 22, 33], 0);
        const given = step(plain, [first.tokens[0], 7, first.tokens[2]], 1);
        assert.deepEqual(fed.tokens, given.tokens);
        assert.deepEqual(fed.logprobs, given.logprobs);
        // and it matters: the host's zeros give other logprobs
        const zeros = step(plain, [0, 7, 0], 1);
        assert.notDeepEqual(zeros.logprobs, given.logprobs);
      }),
    );
    m.invFreq.dispose();
    model.dispose();
  });

  it('AGENT_R1_STEP_COPIES: a value other than kernel or copy-engine is refused when StepInputs is built, on the CPU too', () => {
    const before = process.env.AGENT_R1_STEP_COPIES;
    try {
      process.env.AGENT_R1_STEP_COPIES = 'dma';
      assert.throws(
        () => new StepInputs({ maxBatch: 2, maxWidth: 2, vocabSize: 8, device: 'cpu', runAhead: true }),
        /AGENT_R1_STEP_COPIES must be 'kernel' \(the default\) or 'copy-engine', got 'dma'/,
      );
      for (const ok of ['kernel', 'copy-engine', '']) {
        process.env.AGENT_R1_STEP_COPIES = ok;
        using inputs = new StepInputs({ maxBatch: 2, maxWidth: 2, vocabSize: 8, device: 'cpu', runAhead: true });
        assert.ok(inputs, ok);
      }
    } finally {
      if (before === undefined) delete process.env.AGENT_R1_STEP_COPIES;
      else process.env.AGENT_R1_STEP_COPIES = before;
    }
  });
});
