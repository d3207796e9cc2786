// A 2-rank run (agent-r1 train trainer.n_gpus_per_node=2, Gloo on CPU) that is killed (SIGKILL of
// the launcher and both ranks, mid-step) after a checkpoint and resumed with trainer.resume_mode=auto
// ends with exactly the parameters and optimizer state of an uninterrupted 2-rank run, and its
// metrics.jsonl holds the same lines (timings aside).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { maxSafetensorsDiff as maxDiff, startNode, tinyToolTask, twoRankTrainArgs } from '../helpers/ranks.js';

const STEPS = 3;
let dir: string;
let task: { model: string; train: string };
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'agent-r1-dp-resume-'));
  // 8 rows in batches of 4: step 3 is in the second epoch (a new shuffle)
  task = tinyToolTask(dir, { hidden: 16, rows: 8 });
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Starts `agent-r1 train` with 2 ranks into `ckpt`, in a process group of its own (so the test can kill it whole). */
function startTraining(ckpt: string) {
  const args = twoRankTrainArgs(task, [
    'data.train_batch_size=4',
    'data.seed=7',
    'actor_rollout_ref.actor.optim.lr=1e-3',
    'actor_rollout_ref.actor.ppo_mini_batch_size=2',
    // a gradient whatever the rewards (a random tiny model earns none): every step moves the weights
    'actor_rollout_ref.actor.entropy_coeff=0.01',
    // no reference model: less to load and run (the KL loss is not what this test is about)
    'actor_rollout_ref.actor.use_kl_loss=false',
    'actor_rollout_ref.rollout.n=2',
    'actor_rollout_ref.rollout.temperature=1.0',
    'actor_rollout_ref.rollout.response_length=4',
    `trainer.total_training_steps=${STEPS}`,
    'trainer.save_freq=1',
    'trainer.resume_mode=auto',
    `trainer.default_local_dir=${ckpt}`,
    'trainer.seed=3',
  ]);
  return startNode(args, { detached: true });
}

const latest = (ckpt: string): number | undefined => {
  const file = join(ckpt, 'latest_checkpointed_iteration.txt');
  return existsSync(file) ? Number(readFileSync(file, 'utf8')) : undefined;
};

/** metrics.jsonl's lines without the timings (timing_s/*, flow/*_s/*, rollout/engine/*_s: wall-clock seconds differ from run to run). */
function metricLines(ckpt: string): Record<string, number>[] {
  return readFileSync(join(ckpt, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .map(
      (m) =>
        Object.fromEntries(Object.entries(m).filter(([k]) => !/^timing_s\/|_s\/|_s$/.test(k))) as Record<
          string,
          number
        >,
    );
}

describe('agent-r1 train with 2 ranks, killed and resumed', () => {
  it('ends with the parameters, optimizer state and metrics of an uninterrupted run', async () => {
    const whole = join(dir, 'whole');
    const broken = join(dir, 'broken');
    // the uninterrupted run and the one to be killed run side by side
    const reference = startTraining(whole);
    const victim = startTraining(broken);
    // kill the whole job (launcher and ranks) as soon as its first checkpoint is complete: mid-way through the next step
    while (latest(broken) === undefined && victim.child.exitCode === null) await new Promise((r) => setTimeout(r, 10));
    process.kill(-victim.child.pid!, 'SIGKILL');
    const killed = await victim.exited;
    assert.equal(killed.signal, 'SIGKILL', `the run was killed, not finished:\n${killed.out}`);
    const at = latest(broken)!;
    assert.ok(at >= 1 && at < STEPS, `killed after the checkpoint of step ${at}, before the last`);
    const done = await reference.exited;
    assert.equal(done.code, 0, done.out);

    const kept = statSync(join(broken, `global_step_${at}`, 'trainer_state.json'));
    const resumed = await startTraining(broken).exited;
    assert.equal(resumed.code, 0, resumed.out);
    // it went on from the checkpoint (a fresh run would have written global_step_1.. again)
    const now = statSync(join(broken, `global_step_${at}`, 'trainer_state.json'));
    assert.deepEqual([now.ino, now.mtimeMs], [kept.ino, kept.mtimeMs], `global_step_${at} was not rewritten`);
    const last = (ckpt: string, file: string) => join(ckpt, `global_step_${STEPS}`, 'actor', file);
    assert.equal(maxDiff(last(whole, 'model.safetensors'), last(broken, 'model.safetensors')), 0, 'parameters');
    assert.equal(
      maxDiff(last(whole, 'optimizer.safetensors'), last(broken, 'optimizer.safetensors')),
      0,
      'AdamW state',
    );
    const lines = metricLines(broken);
    assert.deepEqual(
      lines.map((l) => l.step),
      [1, 2, 3],
    );
    assert.deepEqual(lines, metricLines(whole));
    // the run trained (the comparison is not of two runs that did nothing)
    assert.ok(lines.every((l) => l['training/skipped_batch'] === 0 && Number.isFinite(l['actor/pg_loss'])));
  });
});
