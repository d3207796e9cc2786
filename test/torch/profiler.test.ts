// torch.profile / startProfiler / stopProfiler (libtorch's Kineto profiler) on the CPU: the ops it
// records, the Chrome trace it writes, and its refusals. The CUDA kernels' side runs in
// test/engine/cuda.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';

describe('profiler', () => {
  it("records this thread's ops with their times, and writes a Chrome trace of them", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-r1-profile-'));
    try {
      const tracePath = join(dir, 'trace.json');
      const a = torch.randn([256, 256]);
      const { result, events } = await torch.profile(() => torch.scope(() => a.matmul(a).sum().item()), { tracePath });
      assert.equal(typeof result, 'number');
      const mm = events.filter((e) => e.name === 'aten::mm' || e.name === 'aten::matmul');
      assert.ok(mm.length >= 1, `a matmul among ${events.map((e) => e.name).join(', ')}`);
      for (const e of mm) {
        assert.equal(e.device, 'cpu');
        assert.ok(e.durationNs > 0 && e.startNs >= 0, `${e.name}: start ${e.startNs}, duration ${e.durationNs}`);
      }
      const sum = events.find((e) => e.name === 'aten::sum');
      assert.ok(sum && sum.startNs >= mm[0].startNs, 'the sum after the matmul');
      const trace = JSON.parse(readFileSync(tracePath, 'utf8')) as { traceEvents: { name: string }[] };
      assert.ok(
        trace.traceEvents.some((e) => e.name === mm[0].name),
        'the trace holds the matmul',
      );
      a.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs one profile at a time, stops it when the profiled function throws, and refuses CUDA without a device', async () => {
    torch.startProfiler();
    assert.throws(() => torch.startProfiler(), /already running; stop it/);
    torch.stopProfiler();
    assert.throws(() => torch.stopProfiler(), /not running; start it/);
    await assert.rejects(
      torch.profile(() => {
        throw new Error('boom');
      }),
      /boom/,
    );
    // stopped: a new one starts
    torch.startProfiler();
    torch.stopProfiler();
    if (!torch.cuda.isAvailable())
      assert.throws(() => torch.startProfiler({ cuda: true }), /no CUDA device is visible/);
  });
});
