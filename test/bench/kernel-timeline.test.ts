// bench/kernel-timeline.ts on hand-built kernel events: steps split at sample_rows, layer places,
// idle time, overlaps, and the time between steps, against numbers worked out by hand.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatTimeline, kernelTimeline, layerLabels, shortKernelName } from '../../bench/kernel-timeline.js';
import type { ProfileEvent } from '../../src/torch/index.js';

const us = 1000;

/** Steps of: embed, 3 layers of [gemv 10 us, attention 4 us starting 1 us before gemv ends, gemv 6 us starting 2 us after], `sampler`. */
function steps(count: number, sampler = 'sample_rows'): ProfileEvent[] {
  const out: ProfileEvent[] = [
    { name: 'Memcpy HtoD (Pageable -> Device)', device: 'cuda', startNs: 0, durationNs: 5 * us },
  ];
  let t = 10 * us;
  const k = (name: string, start: number, dur: number) =>
    out.push({ name, device: 'cuda', startNs: start, durationNs: dur });
  for (let s = 0; s < count; s++) {
    k('embed_kernel<float>(int)', t, 1 * us);
    t += 1 * us;
    for (let l = 0; l < 3; l++) {
      k('gemv_rows', t, 10 * us);
      k('paged_decode_attention', t + 9 * us, 4 * us);
      k('gemv_rows', t + 15 * us, 6 * us);
      t += 21 * us;
    }
    k(sampler, t + 3 * us, 2 * us);
    out.push({ name: 'aten::mm', device: 'cpu', startNs: t, durationNs: 50 * us });
    t += 5 * us + 100 * us; // 100 us before the next step
  }
  return out;
}

describe('kernelTimeline', () => {
  it('splits steps at sample_rows (or sample_rows_bf16) and sums their spans, durations and idle time', () => {
    assert.equal(kernelTimeline(steps(4, 'sample_rows_bf16'), { steps: 3 }).steps.length, 3);
    const t = kernelTimeline(steps(4), { steps: 2 });
    assert.equal(t.steps.length, 2);
    for (const s of t.steps) {
      assert.equal(s.kernels, 11);
      // 1 + 3 * 21 + 3 (gap) + 2
      assert.equal(s.spanUs, 69);
      // 1 + 3 * (10 + 4 + 6) + 2
      assert.equal(s.busyUs, 63);
      // per layer: 2 us between the attention's end (13) and the second gemv (15); before sampling 3 us
      assert.equal(s.idleUs, 3 * 2 + 3);
      assert.equal(s.sincePreviousStepUs, 100);
    }
  });

  it("labels a layer's kernels by their place, and averages each one's start against the previous end", () => {
    const t = kernelTimeline(steps(3));
    const row = (k: string) => t.rows.find((r) => r.kernel === k);
    // places in the layer of 3 kernels, from its first: gemv, attention, gemv
    assert.deepEqual(
      t.rows.map((r) => r.kernel),
      [' 0 gemv_rows', ' 1 paged_decode_attention', ' 2 gemv_rows', 'embed_kernel', 'sample_rows'],
    );
    assert.equal(row(' 1 paged_decode_attention')?.meanStartAfterPreviousEndUs, -1);
    assert.equal(row(' 1 paged_decode_attention')?.launchesPerStep, 3);
    assert.equal(row(' 2 gemv_rows')?.meanDurationUs, 6);
    assert.equal(row(' 2 gemv_rows')?.meanStartAfterPreviousEndUs, 2);
    // the first layer's gemv follows the embedding at once, the others the previous layer's second gemv
    assert.equal(row(' 0 gemv_rows')?.meanDurationUs, 10);
    assert.equal(row(' 0 gemv_rows')?.meanStartAfterPreviousEndUs, 0);
    assert.equal(row('embed_kernel')?.meanStartAfterPreviousEndUs, null);
    assert.equal(row('sample_rows')?.meanStartAfterPreviousEndUs, 3);
    // added to the span: the attention ends 3 us after the first gemv, the second gemv 8 us after the
    // attention, sampling 5 us after the last gemv; the step's first kernel adds its duration
    assert.equal(row(' 1 paged_decode_attention')?.meanAddedUs, 3);
    assert.equal(row(' 2 gemv_rows')?.meanAddedUs, 8);
    assert.equal(row(' 0 gemv_rows')?.meanAddedUs, 10);
    assert.equal(row('embed_kernel')?.meanAddedUs, 1);
    assert.equal(row('sample_rows')?.meanAddedUs, 5);
    const added = t.rows.reduce((sum, r) => sum + r.meanAddedUs * r.launchesPerStep, 0);
    assert.equal(added, t.steps[0].spanUs, 'what the kernels add sums to the span');
    const text = formatTimeline(t);
    assert.match(
      text,
      /^step: 11 kernels, span 69.00 us, kernels' durations summed 63.00 us, idle between kernels 9.00 us/m,
    );
    assert.match(text, /\| {2}2 gemv_rows \| 3 \| 6.00 \| 2.00 \| 8.00 \| 24.00 \|/);
  });

  it('refuses a profile without two complete steps, saying what it needs', () => {
    assert.throws(
      () => kernelTimeline(steps(1)),
      /1 steps ending in a 'sample_rows' or 'sample_rows_bf16' kernel among 11 CUDA kernels; need 2 or more/,
    );
    assert.throws(() => kernelTimeline(steps(3), { stepEnd: 'argmax' }), /0 steps ending in a 'argmax' kernel/);
  });

  it('names kernels without template arguments or parameters, and leaves a sequence with no period as it is', () => {
    assert.equal(
      shortKernelName('void at::native::vectorized_elementwise_kernel<4, float>(int)'),
      'void at::native::vectorized_elementwise_kernel',
    );
    assert.equal(shortKernelName('gemv_rows'), 'gemv_rows');
    assert.deepEqual(layerLabels(['a', 'b', 'c', 'd']), ['a', 'b', 'c', 'd']);
  });

  it("numbers a layer's places from its first kernel, past names before it that repeat by chance", () => {
    // 4 names before the layers (so the step's index is not a layer's place), the 'a' among them one
    // layer before the first layer's 'a' by chance
    const names = ['x', 'a', 'y', 'z', ...Array.from({ length: 4 }, () => ['a', 'b', 'c']).flat(), 's'];
    assert.deepEqual(layerLabels(names), [
      'x',
      ' 0 a',
      'y',
      'z',
      ...Array.from({ length: 4 }, () => [' 0 a', ' 1 b', ' 2 c']).flat(),
      's',
    ]);
  });
});
