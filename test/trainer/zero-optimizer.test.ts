// ZeRO-1 over c10d (Gloo, float64): two ranks, each keeping the AdamW state of half the parameters,
// end 2 PPO steps (GAE, actor and critic) with the same weights as one process on the whole batch;
// the checkpoint they write holds the whole state exactly as one process writes it, and resuming
// from it (on 2 ranks or on 1 process) ends where the uninterrupted run ends.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastJsonLine, maxSafetensorsDiff, runRanks, runWorker } from '../helpers/ranks.js';

const worker = fileURLToPath(new URL('../helpers/zero-trainer-worker.ts', import.meta.url));
const unitWorker = fileURLToPath(new URL('../helpers/zero-optimizer-worker.ts', import.meta.url));
let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'agent-r1-zero-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

interface Size {
  expAvg: number;
  expAvgSq: number;
  params: number;
  bytes?: { local: number; unsharded: number };
}
interface Report {
  rank: number;
  actor: Size;
  critic: Size;
}

const run = async <T = Report>(env: Record<string, string>, script = worker): Promise<T> =>
  lastJsonLine<T>(await runWorker(script, env));

async function twoRanks(name: string, env: Record<string, string>): Promise<Report[]> {
  const outs = await runRanks(worker, 2, (r) => ({ ...env, OUT: join(dir, `${name}-rank${r}.safetensors`) }));
  return outs.map((o) => lastJsonLine<Report>(o));
}

const maxDiff = maxSafetensorsDiff;

describe('ZeroAdamW (2 Gloo ranks)', () => {
  it('steps, clips, gathers and loads as AdamW on the summed gradients (3 buckets, parameters across slices)', async () => {
    type Unit = {
      rank: number;
      paramDiff: number;
      stateDiff: number | null;
      stateKeys: string[] | null;
      local: number[];
      norms: number[][];
      resumedDiff: number;
      bytes: { local: number; unsharded: number };
    };
    const [a, b] = (await runRanks(unitWorker, 2, () => ({}))).map((o) => lastJsonLine<Unit>(o));
    for (const x of [a, b]) {
      assert.ok(x.paramDiff < 1e-12, `rank ${x.rank}: parameters after 2 steps differ by ${x.paramDiff}`);
      assert.ok(x.resumedDiff < 1e-12, `rank ${x.rank}: a step after loading the state differs by ${x.resumedDiff}`);
      // buckets of 15, 7 and 4 elements: each rank's slices hold 8, 4 and 2
      assert.deepEqual(x.local, [8, 4, 2]);
      // exp_avg + exp_avg_sq in float64 plus a float32 step per bucket (sharded) or per parameter
      assert.deepEqual(x.bytes, { local: 2 * 14 * 8 + 3 * 4, unsharded: 2 * 26 * 8 + 3 * 4 });
      for (const [sharded, plain] of x.norms) assert.ok(Math.abs(sharded - plain) < 1e-12 && plain > 1.5, `${x.norms}`);
    }
    // rank 0 gathers the whole state under AdamW's own keys
    assert.ok(a.stateDiff! < 1e-12, `gathered state differs by ${a.stateDiff}`);
    assert.deepEqual(
      a.stateKeys,
      ['p0', 'p1', 'p2'].flatMap((p) => [`${p}.exp_avg`, `${p}.exp_avg_sq`, `${p}.step`]),
    );
    assert.equal(b.stateDiff, null);
  });
});

describe('ZeRO-1 optimizer-state sharding (2 Gloo ranks, PPO with a GAE critic)', () => {
  const single = () => join(dir, 'single.safetensors');
  const ranks = (name: string) => [0, 1].map((r) => join(dir, `${name}-rank${r}.safetensors`));
  let reports: Report[];

  it('2 ranks equal 1 process after 2 optimizer steps of the actor and the critic; each holds half the state', async () => {
    await run({ OUT: single(), CKPT: join(dir, 'ckpt-single') });
    reports = await twoRanks('zero', { CKPT: join(dir, 'ckpt-zero') });
    const [r0, r1] = ranks('zero');
    assert.equal(maxDiff(r0, r1), 0, 'both ranks hold the same weights');
    const d = maxDiff(single(), r0);
    assert.ok(d < 1e-9, `2 ranks vs 1 process: max |diff| ${d}`);
    // the steps moved both models (the comparison is not of untouched weights)
    const init = join(dir, 'init.safetensors');
    await run({ OUT: init, CKPT: join(dir, 'ckpt-init'), STEPS: '0' });
    assert.ok(maxDiff(init, single()) > 1e-3, 'the updates changed the weights');
    for (const part of ['actor', 'critic'] as const) {
      const total = reports[0][part].params;
      for (const r of reports) {
        const s = r[part];
        // one bucket: rank r owns elements [r * ceil(total / 2), ...) of it (the last slice zero-padded)
        assert.equal(s.expAvg, Math.ceil(total / 2), `${part} rank ${r.rank} exp_avg elements`);
        assert.equal(s.expAvgSq, Math.ceil(total / 2), `${part} rank ${r.rank} exp_avg_sq elements`);
        assert.ok(
          s.bytes!.local < 0.51 * s.bytes!.unsharded,
          `${part} rank ${r.rank} bytes ${JSON.stringify(s.bytes)}`,
        );
        assert.equal(s.bytes!.local, 2 * Math.ceil(total / 2) * 8 + 4);
      }
    }
    assert.ok(reports[0].actor.params > 10_000 && reports[0].critic.params > 9_000);
  });

  it('the checkpoint holds the whole state as 1 process writes it, and resuming from it ends where the run ends', async () => {
    for (const part of ['actor', 'critic']) {
      const file = (run: string) => join(dir, run, 'global_step_1', part, 'optimizer.safetensors');
      const d = maxDiff(file('ckpt-single'), file('ckpt-zero'));
      assert.ok(d < 1e-9, `${part} optimizer state, 2 ranks vs 1 process: max |diff| ${d}`);
    }
    const from = join(dir, 'ckpt-zero', 'global_step_1');
    await twoRanks('resumed', { CKPT: join(dir, 'ckpt-resumed'), RESUME: from });
    const [z0] = ranks('zero');
    const [q0, q1] = ranks('resumed');
    assert.equal(maxDiff(q0, q1), 0, 'both resumed ranks hold the same weights');
    assert.equal(maxDiff(z0, q0), 0, 'resumed on 2 ranks = uninterrupted 2 ranks');
    // the sharded checkpoint resumes on one process (plain AdamW) too
    const alone = join(dir, 'resumed-alone.safetensors');
    await run({ OUT: alone, CKPT: join(dir, 'ckpt-alone'), RESUME: from });
    const d = maxDiff(single(), alone);
    assert.ok(d < 1e-9, `resumed on 1 process vs uninterrupted: max |diff| ${d}`);
  });
});
