// The trainer with the in-process Engine as its generator: the engine reads the policy's own
// parameter tensors, so each rollout samples from the newest weights without a copy; its
// log-probs are the ones the policy recomputes; GRPO learns the toy task through it; and each
// step's metrics carry the engine's share of the rollout (rollout/engine/...).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../../src/engine/index.js';
import { firstTokenSamples } from '../../src/testing/index.js';
import { Trainer } from '../../src/trainer/index.js';
import { tinyPolicy, tokenizer } from './helpers.js';

const PROMPTS = [
  [5, 6, 7],
  [8, 9],
  [10, 11, 12, 13],
  [6, 14],
];

describe('Trainer with the in-process Engine', () => {
  it('GRPO learns through the engine; rollout log-probs track the updated policy', async () => {
    const policy = tinyPolicy({ seed: 1 });
    const engine = new Engine(policy, { maxBatchSize: 32, maxLength: 64 });
    const metrics: Record<string, number>[] = [];
    const trainer = new Trainer(
      {
        policy,
        generator: engine,
        tokenizer,
        trainData: firstTokenSamples(64, { target: 7, prompts: PROMPTS }),
        onMetrics: (_, m) => metrics.push(m),
      },
      {
        data: { trainBatchSize: 4, seed: 1 },
        rollout: { n: 8, sampling: { maxTokens: 2, temperature: 1 } },
        actor: { optim: { lr: 3e-3, weightDecay: 0 }, ppoMiniBatchSize: 2 },
        trainer: { totalTrainingSteps: 30, console: false },
      },
    );
    try {
      await trainer.fit();
      const rewards = metrics.map((m) => m['reward/trajectory_mean']);
      assert.ok(
        rewards.slice(-4).reduce((a, b) => a + b, 0) / 4 > 0.6,
        `rewards ${rewards.map((r) => r.toFixed(2)).join(' ')}`,
      );
      // every step's rollout log-probs are the current policy's (the engine saw each update)
      for (const m of metrics)
        assert.ok(
          m['training/rollout_probs_diff_mean'] < 1e-4,
          `rollout vs recomputed: ${m['training/rollout_probs_diff_mean']}`,
        );
    } finally {
      trainer.dispose();
      engine.dispose();
      policy.dispose();
    }
  });

  it("an engine over its own copy gets the policy in each step's update_weights phase, never during a generation", async () => {
    const policy = tinyPolicy({ seed: 1 });
    const copy = tinyPolicy({ seed: 2 });
    const engine = new Engine(copy, { maxBatchSize: 32, maxLength: 64 });
    const metrics: Record<string, number>[] = [];
    const trainer = new Trainer(
      {
        policy,
        generator: engine,
        tokenizer,
        trainData: firstTokenSamples(8, { target: 7, prompts: PROMPTS }),
        onMetrics: (_, m) => metrics.push(m),
      },
      {
        data: { trainBatchSize: 4, seed: 1 },
        rollout: { n: 2, sampling: { maxTokens: 2, temperature: 1 } },
        actor: { optim: { lr: 3e-3, weightDecay: 0 }, ppoMiniBatchSize: 2 },
        trainer: { totalTrainingSteps: 2, console: false },
      },
    );
    try {
      await trainer.fit();
      assert.equal(metrics.length, 2);
      for (const m of metrics) assert.ok(m['timing_s/update_weights'] >= 0, 'update_weights is timed');
      // the engine's share of each rollout: its 8 requests prefilled together give every first token,
      // then each decode step one token of every request still running
      for (const m of metrics) {
        assert.equal(m['rollout/engine/decode_steps'], m['response_length/max'] - 1);
        assert.ok(m['rollout/engine/decode_steps'] >= 1);
        const decodedRows = m['rollout/num_trajectories'] * (m['response_length/mean'] - 1);
        assert.equal(m['rollout/engine/mean_batch'], decodedRows / m['rollout/engine/decode_steps']);
        const stepSeconds = m['rollout/engine/host_s'] + m['rollout/engine/device_wait_s'];
        assert.ok(m['rollout/engine/host_s'] > 0 && m['rollout/engine/device_wait_s'] >= 0);
        assert.ok(stepSeconds < m['timing_s/gen'], `${stepSeconds} s in steps of a ${m['timing_s/gen']} s rollout`);
        assert.equal(m['rollout/engine/graph_captures'], 0, 'no CUDA graphs on the CPU');
        assert.equal(m['rollout/engine/capture_s'], 0);
        assert.equal(m['rollout/engine/graphs_reused'], 0);
        // the scheduler runs inside the rollout, its prefills inside the scheduler's time
        const busy = m['rollout/engine/busy_s'];
        assert.ok(busy >= stepSeconds && busy < m['timing_s/gen'], `busy ${busy} s, steps ${stepSeconds} s`);
        assert.ok(m['rollout/engine/prefill_s'] > 0 && m['rollout/engine/prefill_s'] < busy);
        assert.ok(m['rollout/engine/cache_s'] >= 0 && m['rollout/engine/cache_s'] < busy);
      }
      // step 1 sampled from the copy's own (seed 2) weights; step 2 from the policy's, handed over after step 1
      assert.ok(
        metrics[0]['training/rollout_probs_diff_mean'] > 1e-2,
        `${metrics[0]['training/rollout_probs_diff_mean']}`,
      );
      assert.ok(
        metrics[1]['training/rollout_probs_diff_mean'] < 1e-4,
        `${metrics[1]['training/rollout_probs_diff_mean']}`,
      );
      const own = new Map(copy.namedParameters());
      for (const [name, t] of policy.namedParameters())
        assert.deepEqual(own.get(name)!.toArray(), t.toArray(), `${name} after the last update_weights`);

      const pending = engine.generate([5, 6, 7], { maxTokens: 2 });
      await assert.rejects(
        engine.updateWeights(policy),
        /requests are still generating; update weights between rollouts/,
      );
      await pending;
      await engine.updateWeights(policy);
    } finally {
      trainer.dispose();
      engine.dispose();
      copy.dispose();
      policy.dispose();
    }
  });
});
