// Data-parallel training over c10d (Gloo): two processes, each on half of the prompts, end a GRPO
// step with the same parameters as one process on the whole batch (float64: to 1e-9), for each
// loss aggregation, and for the estimators that whiten over the batch (REINFORCE++, GAE with its
// critic); the two ranks hold identical weights.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as torch from '../../src/torch/index.js';
import { freePort } from '../../src/cli/launch.js';

const worker = fileURLToPath(new URL('../helpers/dp-trainer-worker.ts', import.meta.url));
let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'agent-r1-dp-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function run(env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', worker], {
    env: { ...process.env, OMP_NUM_THREADS: '1', ...env },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`worker exited ${code}: ${err}`)))),
  );
}

/** Max |a - b| over the tensors `a` holds (b may hold more: a critic's). */
function maxDiff(a: string, b: string): number {
  const x = torch.readSafetensors(a);
  const y = torch.readSafetensors(b);
  let d = 0;
  for (const [k, t] of x)
    d = Math.max(
      d,
      torch.scope(() => t.sub(y.get(k)!).abs().max().item()),
    );
  for (const t of [...x.values(), ...y.values()]) t.dispose();
  return d;
}

/** The single process's and both ranks' parameters after one step (written under `dir`), and what each printed. */
async function singleAndRanks(name: string, env: Record<string, string>) {
  const single = join(dir, `single-${name}.safetensors`);
  const singleOut = JSON.parse(await run({ ...env, OUT: single }));
  const port = String(await freePort());
  const ranks = [0, 1].map((r) => ({
    ...env,
    RANK: String(r),
    WORLD_SIZE: '2',
    MASTER_ADDR: '127.0.0.1',
    MASTER_PORT: port,
    OUT: join(dir, `rank${r}-${name}.safetensors`),
  }));
  const rankOuts = (await Promise.all(ranks.map(run))).map((o) => JSON.parse(o));
  return { single, singleOut, ranks: ranks.map((r) => r.OUT), rankOuts };
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
      assert.ok(maxDiff(await initialParams(), single) > 1e-4, 'the update changed the weights');
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
      assert.ok(maxDiff(await initialParams(), single) > 1e-4, 'the update changed the weights');
    });
  }
});

describe('data-parallel rollout randomness', () => {
  it('each rank samples with seeds of its own: the same prompt and weights on both ranks give different responses', async () => {
    const port = String(await freePort());
    const rollouts = [0, 1].map((r) => join(dir, `rollouts-rank${r}`));
    await Promise.all(
      [0, 1].map((r) =>
        run({
          ENGINE: '1',
          ROLLOUTS: rollouts[r],
          RANK: String(r),
          WORLD_SIZE: '2',
          MASTER_ADDR: '127.0.0.1',
          MASTER_PORT: port,
          OUT: join(dir, `engine-rank${r}.safetensors`),
        }),
      ),
    );
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
    const { writeTinyQwen3 } = await import('../helpers/tiny-qwen3.js');
    const { gsm8kRowsFromFile, writeRows } = await import('../../src/data/index.js');
    const { readFileSync, existsSync } = await import('node:fs');
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const model = writeTinyQwen3(join(dir, 'tiny'), { hidden: 32 });
    const rows = gsm8kRowsFromFile(fileURLToPath(new URL('../../../shared/data/gsm8k/test.jsonl', import.meta.url)), {
      split: 'test',
      tool: true,
    });
    const train = join(dir, 'train.jsonl');
    writeRows(train, rows.slice(0, 4), 'jsonl');
    const ckpt = join(dir, 'dp-run');
    const args = [
      '--import',
      'tsx',
      join(root, 'src', 'cli', 'main.ts'),
      'train',
      '--config',
      join(root, 'recipes', 'gsm8k_tool', 'config.yaml'),
      `data.train_files=${train}`,
      'data.val_files=[]',
      'data.train_batch_size=4',
      `actor_rollout_ref.model.path=${model}`,
      'actor_rollout_ref.actor.ppo_mini_batch_size=2',
      'actor_rollout_ref.rollout.n=2',
      'actor_rollout_ref.rollout.prompt_length=1024',
      'actor_rollout_ref.rollout.response_length=6',
      'trainer.total_training_steps=2',
      'trainer.test_freq=0',
      'trainer.save_freq=2',
      'trainer.val_before_train=false',
      'trainer.resume_mode=disable',
      `trainer.default_local_dir=${ckpt}`,
      'trainer.logger=[]',
      'trainer.device=cpu',
      'trainer.n_gpus_per_node=2',
    ];
    const child = spawn(process.execPath, args, { env: { ...process.env, OMP_NUM_THREADS: '1' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    assert.equal(code, 0, `${out}\n${err}`);
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
