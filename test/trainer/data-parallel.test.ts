// Data-parallel training over c10d (Gloo): two processes, each on half of the prompts, end a GRPO
// step with the same parameters as one process on the whole batch (float64: to 1e-9), for each
// loss aggregation, and for the estimators that whiten over the batch (REINFORCE++, GAE with its
// critic); the two ranks hold identical weights.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as torch from '../../src/torch/index.js';
import {
  maxSafetensorsDiff,
  runRanks,
  runWorker,
  startNode,
  tinyToolTask,
  twoRankTrainArgs,
} from '../helpers/ranks.js';

const worker = fileURLToPath(new URL('../helpers/dp-trainer-worker.ts', import.meta.url));
let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'agent-r1-dp-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const run = (env: Record<string, string>) => runWorker(worker, env);
const maxDiff = maxSafetensorsDiff;

/** The single process's and both ranks' parameters after one step (written under `dir`), and what each printed. */
async function singleAndRanks(name: string, env: Record<string, string>) {
  const single = join(dir, `single-${name}.safetensors`);
  const singleOut = JSON.parse(await run({ ...env, OUT: single }));
  const ranks = [0, 1].map((r) => join(dir, `rank${r}-${name}.safetensors`));
  const rankOuts = (await runRanks(worker, 2, (r) => ({ ...env, OUT: ranks[r] }))).map((o) => JSON.parse(o));
  return { single, singleOut, ranks, rankOuts };
}

/** The tiny policy's parameters before any update, for "the step moved the weights". */
async function initialParams(): Promise<string> {
  const init = join(dir, 'init.safetensors');
  const { tinyPolicy } = await import('./helpers.js');
  const p = tinyPolicy({ seed: 1, dtype: 'float64' });
  torch.writeSafetensors(init, new Map(p.namedParameters()));
  p.dispose();
  return init;
}

describe('data-parallel training (2 Gloo ranks)', () => {
  for (const [agg, mini] of [
    ['token-mean', '4'],
    ['seq-mean-token-mean', '4'],
    ['seq-mean-token-sum-norm', '4'],
  ] as const) {
    it(`equals one process on the whole batch (${agg}, ppo_mini_batch_size ${mini})`, async () => {
      const { single, singleOut, ranks, rankOuts } = await singleAndRanks(agg, { AGG: agg, MINI: mini });
      assert.equal(maxDiff(ranks[0], ranks[1]), 0, 'both ranks hold the same weights');
      const d = maxDiff(single, ranks[0]);
      assert.ok(d < 1e-9, `2 ranks vs 1 process: max |diff| ${d}`);
      // and the step moved the weights (the comparison is not of two untouched models)
      assert.ok(maxDiff(await initialParams(), single, { subset: true }) > 1e-4, 'the update changed the weights');
      // GRPO's groups are per prompt: each rank rolls out whole prompts (n samples each), its
      // consecutive share of the batch, so no group spans ranks and group statistics stay local
      assert.deepEqual(rankOuts[0].batch.concat(rankOuts[1].batch), singleOut.batch);
      assert.equal(rankOuts[0].batch.length, singleOut.batch.length / 2);
    });
  }

  // Batch whitening (REINFORCE++ over action tokens; step-level GAE over rows, with the critic)
  // takes the mean and std of every rank's rows: per-rank statistics would differ from the batch's.
  for (const adv of ['reinforce_plus_plus', 'gae'] as const) {
    it(`whitens advantages over the global batch (${adv}): 2 ranks equal one process, actor and critic`, async () => {
      const { single, ranks } = await singleAndRanks(adv, { ADV: adv });
      assert.equal(maxDiff(ranks[0], ranks[1]), 0, 'both ranks hold the same weights');
      const d = maxDiff(single, ranks[0]);
      assert.ok(d < 1e-9, `2 ranks vs 1 process: max |diff| ${d}`);
      assert.ok(maxDiff(await initialParams(), single, { subset: true }) > 1e-4, 'the update changed the weights');
    });
  }
});

describe('data-parallel rollout randomness', () => {
  it('each rank samples with seeds of its own: the same prompt and weights on both ranks give different responses', async () => {
    const rollouts = [0, 1].map((r) => join(dir, `rollouts-rank${r}`));
    await runRanks(worker, 2, (r) => ({
      ENGINE: '1',
      ROLLOUTS: rollouts[r],
      OUT: join(dir, `engine-rank${r}.safetensors`),
    }));
    const responses = rollouts.map((d) =>
      readFileSync(join(d, '1.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .sort((a, b) => a.sample_index - b.sample_index || a.rollout_index - b.rollout_index)
        .map((t) => t.steps[0].response_ids.join(' ')),
    );
    assert.equal(responses[0].length, 8, 'rank 0 rolled out its 2 prompts x n=4');
    assert.equal(new Set(responses[0]).size > 1, true, 'the samples of a group differ');
    assert.notDeepEqual(
      responses[0],
      responses[1],
      "rank 1 repeated rank 0's responses, request for request (the same seeds)",
    );
  });
});

describe('agent-r1 train trainer.n_gpus_per_node=2 (CPU, Gloo)', () => {
  it('starts two ranks that train together; rank 0 alone writes metrics and the checkpoint', async () => {
    const ckpt = join(dir, 'dp-run');
    const args = twoRankTrainArgs(tinyToolTask(dir, { hidden: 32, rows: 4 }), [
      'data.train_batch_size=4',
      'actor_rollout_ref.actor.ppo_mini_batch_size=2',
      'actor_rollout_ref.rollout.n=2',
      'actor_rollout_ref.rollout.response_length=6',
      'trainer.total_training_steps=2',
      'trainer.save_freq=2',
      'trainer.resume_mode=disable',
      `trainer.default_local_dir=${ckpt}`,
    ]);
    const { code, out } = await startNode(args).exited;
    assert.equal(code, 0, out);
    assert.match(out, /data parallel: rank 0 of 2 \(gloo, cpu; collectives time out after 600 s\)/);
    // rank 0 holds half of the actor's AdamW state (ZeRO-1): about half the bytes
    const [, local, unsharded] =
      /actor ZeRO-1: optimizer state on rank 0 (\d+) bytes .* of (\d+) bytes .* unsharded \(2 ranks\)/.exec(out) ?? [];
    assert.ok(local !== undefined, out);
    assert.ok(Math.abs(Number(local) / Number(unsharded) - 0.5) < 0.01, `${local} of ${unsharded} bytes`);
    const lines = readFileSync(join(ckpt, 'metrics.jsonl'), 'utf8').trim().split('\n');
    assert.equal(lines.length, 2, 'one metrics line per step, from rank 0 only');
    assert.ok(existsSync(join(ckpt, 'global_step_2', 'actor', 'config.json')));
  });
});
