// A data-parallel run whose rank fails stops whole, at once, naming the rank (agent-r1 train
// trainer.n_gpus_per_node=2, Gloo on CPU). The faults are real ones, brought by a user reward
// function (custom_reward_function) that misbehaves on rank 1 only: the process is killed (as the
// OOM killer would), or it hangs (and rank 0's collective times out after actor_rollout_ref.nccl_timeout).
// A launcher killed itself leaves no rank behind.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNode, tinyToolTask, twoRankTrainArgs } from '../helpers/ranks.js';

let dir: string;
let task: { model: string; train: string };
let faults: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'agent-r1-dp-fail-'));
  task = tinyToolTask(dir, { hidden: 16, rows: 4 });
  faults = join(dir, 'rank-faults.mjs');
  writeFileSync(
    faults,
    [
      "export function killed_on_rank_1() { if (process.env.RANK === '1') process.kill(process.pid, 'SIGKILL'); return 0; }",
      "export function hangs_on_rank_1() { if (process.env.RANK === '1') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600_000); return 0; }",
      'export function fine() { return 0; }',
      '',
    ].join('\n'),
  );
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** `agent-r1 train` with 2 ranks scored by `reward` (a function of rank-faults.mjs); resolves when it exits. */
function startTraining(reward: string, extra: string[] = []) {
  const args = twoRankTrainArgs(task, [
    'data.train_batch_size=2',
    'actor_rollout_ref.actor.ppo_mini_batch_size=2',
    'actor_rollout_ref.rollout.n=1',
    'actor_rollout_ref.rollout.response_length=4',
    `custom_reward_function.path=${faults}`,
    `custom_reward_function.name=${reward}`,
    'trainer.total_training_steps=2',
    'trainer.save_freq=-1',
    'trainer.resume_mode=disable',
    `trainer.default_local_dir=${join(dir, reward)}`,
    ...extra,
  ]);
  return startNode(args);
}

/** The pids of `pid`'s child processes (pgrep exits 1 when there is none). */
function children(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number);
  } catch {
    return [];
  }
}

/** Whether process `pid` still runs (a zombie no one reaps counts as gone). */
function alive(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return false;
  return !/^\d+ \(.*\) Z/.test(readFileSync(stat, 'utf8'));
}

describe('a failing data-parallel rank stops the run', () => {
  it('a rank killed by a signal: the launcher stops the other and names the rank and the signal', async () => {
    const { code, seconds, out } = await startTraining('killed_on_rank_1').exited;
    assert.notEqual(code, 0);
    assert.match(out, /rank 1 of 2 was killed by SIGKILL; the other ranks were stopped/);
    assert.ok(seconds < 30, `stopped after ${seconds.toFixed(1)} s`);
  });

  it("a rank that hangs: rank 0's collective times out after actor_rollout_ref.nccl_timeout and the run stops", async () => {
    const { code, seconds, out } = await startTraining('hangs_on_rank_1', ['actor_rollout_ref.nccl_timeout=4']).exited;
    assert.notEqual(code, 0);
    assert.match(out, /collectives time out after 4 s/);
    assert.match(out, /all_reduce \(rank 0 of 2\)/);
    // rank 0 saw the timeout; the hung rank is named as the one still running then
    assert.match(out, /rank 0 of 2 exited with code \d+; the other ranks were stopped \(still running then: rank 1\)/);
    assert.ok(seconds < 40, `stopped after ${seconds.toFixed(1)} s`);
  });

  it('the launcher killed (SIGKILL): its ranks stop by themselves', async () => {
    const run = startTraining('fine', ['trainer.total_training_steps=1000']);
    // as soon as both ranks are started (they notice the launcher is gone wherever they are)
    let ranks: number[] = [];
    while (ranks.length < 2) {
      await new Promise((r) => setTimeout(r, 50));
      ranks = children(run.child.pid!);
    }
    run.child.kill('SIGKILL');
    await run.exited;
    const killed = performance.now();
    while (ranks.some(alive) && performance.now() - killed < 15_000) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(ranks.filter(alive), [], 'no rank outlives its launcher');
  });
});
