// The engine's stacked q/k/v and gate/up weights (the default on CUDA, asked for here on the CPU):
// the same greedy ids and logprobs as the model's own layout for Qwen3 (q/k norms) and Qwen2
// (biases), and an in-place update of the model reaches the stacks the next time the engine starts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { createCausalLM, tinyConfig } from '../../src/models/index.js';
import { Engine } from '../../src/engine/index.js';

const PROMPTS = [[5, 17, 99, 3, 250, 41, 8, 8, 200, 13], [9, 120, 33], [42]];
const sampling = { maxTokens: 12, temperature: 0 };

describe('Engine fuseWeights', () => {
  for (const family of ['qwen3', 'qwen2'] as const) {
    it(`${family}: stacked weights give the separate weights' greedy ids and logprobs`, async () => {
      const model = createCausalLM(tinyConfig(family, { initializer_range: 0.1 }), { seed: 9 });
      if (family === 'qwen2')
        // inside one scope, so the temporary is freed here and not by a later GC's finalizer (which
        // would move the live-tensor count this test checks)
        torch.noGrad(() =>
          torch.scope(() => {
            model.layer(0).qBias!.copy_(torch.randn([model.layer(0).qBias!.size(0)]).mul(0.5));
          }),
        );
      const before = torch.liveTensors();
      const plain = new Engine(model, { maxBatchSize: 4, maxLength: 64, eosTokenIds: [], fuseWeights: false });
      const fused = new Engine(model, { maxBatchSize: 4, maxLength: 64, eosTokenIds: [], fuseWeights: true });
      const a = await Promise.all(PROMPTS.map((p) => plain.generate(p, sampling)));
      const b = await Promise.all(PROMPTS.map((p) => fused.generate(p, sampling)));
      assert.deepEqual(
        b.map((o) => o.tokenIds),
        a.map((o) => o.tokenIds),
      );
      b.forEach((o, i) => assert.ok(Math.max(...o.logprobs!.map((x, j) => Math.abs(x - a[i].logprobs![j]))) < 1e-4));
      plain.dispose();
      fused.dispose();
      assert.equal(torch.liveTensors(), before);
      model.dispose();
    });
  }

  it('an in-place update of the model reaches the stacked copies when the engine next starts', async () => {
    const model = createCausalLM(tinyConfig('qwen3', { initializer_range: 0.1 }), { seed: 10 });
    const fused = new Engine(model, { maxBatchSize: 2, maxLength: 64, eosTokenIds: [], fuseWeights: true });
    const first = await fused.generate(PROMPTS[0], sampling);
    torch.noGrad(() => {
      for (let i = 0; i < model.spec.numLayers; i++) model.layer(i).up.mul_(3);
    });
    const fresh = new Engine(model, { maxBatchSize: 2, maxLength: 64, eosTokenIds: [], fuseWeights: false });
    const want = await fresh.generate(PROMPTS[0], sampling);
    const got = await fused.generate(PROMPTS[0], sampling);
    assert.notDeepEqual(want.tokenIds, first.tokenIds, 'the update changes the output');
    assert.deepEqual(got.tokenIds, want.tokenIds);
    fused.dispose();
    fresh.dispose();
    model.dispose();
  });
});
