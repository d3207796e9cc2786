// bench/trunk-trace.ts against hand-worked numbers: a decode-trunk trace of 2 blocks x 3 layers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatTrunkTrace, trunkTraceSummary } from '../../bench/trunk-trace.js';

/** One block's events of one layer (ns): each step `step` ns after the one before, from `start`. */
function layer(start: number, step: number, o: { attention: boolean; producerWaited: number }): number[] {
  const e = Array.from({ length: 21 }, () => 0);
  let t = start;
  for (let i = 0; i <= 15; i++) {
    if ((i === 4 || i === 5 || i === 6) && !o.attention) continue;
    e[i] = t;
    t += step;
  }
  e[16] = o.producerWaited;
  e[17] = start;
  e[18] = start + 5000;
  e[19] = o.producerWaited / 2;
  e[20] = step / 2;
  return e;
}

describe('decode trunk trace summary', () => {
  it('gives each step of a layer as the mean over blocks and the largest block, over layers after the first', () => {
    // block 0 takes 1 us a step and holds an attention item; block 1 takes 3 us a step and none.
    // Layer 0 is left out (its steps are 1000 us, which would show if it were counted).
    const trace = [
      [
        layer(0, 1e6, { attention: true, producerWaited: 9e6 }),
        layer(1e7, 1000, { attention: true, producerWaited: 2000 }),
        layer(2e7, 1000, { attention: true, producerWaited: 4000 }),
      ],
      [
        layer(0, 1e6, { attention: false, producerWaited: 9e6 }),
        layer(1e7, 3000, { attention: false, producerWaited: 6000 }),
        layer(2e7, 3000, { attention: false, producerWaited: 8000 }),
      ],
    ];
    const rows = new Map(trunkTraceSummary(trace).map((r) => [r.step, r]));
    // q/k/v's start: event 1 - event 0, one step: mean (1 + 3) / 2 = 2 us, largest 3
    assert.deepEqual(rows.get('q/k/v: start'), {
      step: 'q/k/v: start',
      meanUs: 2,
      maxUs: 3,
    });
    // the attention's steps only from block 0 (block 1 has no item): 1 us
    assert.equal(rows.get('attention: wait for q/k/v, rope (blocks with an item)')?.meanUs, 1);
    assert.equal(rows.get('attention: wait for q/k/v, rope (blocks with an item)')?.maxUs, 1);
    // o's wait runs from q/k/v done (event 3) to o ready (event 7): 4 steps in block 0 (through the
    // attention's 3), 1 step in block 1 (which skips them): mean (4 + 3) / 2 = 3.5, largest 4
    assert.deepEqual(rows.get('o: wait for the heads (from q/k/v done; by head: for its attention)'), {
      step: 'o: wait for the heads (from q/k/v done; by head: for its attention)',
      meanUs: 3.5,
      maxUs: 4,
    });
    // a layer: event 15 - event 0: 15 steps in block 0, 12 in block 1 (3 us each): mean (15 + 36) / 2
    assert.deepEqual(rows.get('layer'), { step: 'layer', meanUs: 25.5, maxUs: 36 });
    // the producer's waits: layers 1 and 2: mean of (2 + 6) / 2 = 4 and (4 + 8) / 2 = 6 is 5 us; largest (6 + 8) / 2 = 7
    assert.deepEqual(rows.get('producer: waited for free stages'), {
      step: 'producer: waited for free stages',
      meanUs: 5,
      maxUs: 7,
    });
    // the consumers' waits for landed stages (half the producer's here): (1 + 3) / 2 = 2.5 mean, 3.5 largest
    assert.deepEqual(rows.get('consumers: waited for stages to land (mean over warps)'), {
      step: 'consumers: waited for stages to land (mean over warps)',
      meanUs: 2.5,
      maxUs: 3.5,
    });
    // counting done (a quarter step): block 0 0.25 us, block 1 0.75: mean 0.5, largest 0.75
    // the warps' idle time at the matmuls' ends: half a step, 0.5 and 1.5 us: mean 1, largest 1.5
    assert.deepEqual(rows.get("consumers: idle at the matmuls' ends (mean over warps)"), {
      step: "consumers: idle at the matmuls' ends (mean over warps)",
      meanUs: 1,
      maxUs: 1.5,
    });
    assert.match(formatTrunkTrace([...rows.values()]), /\| layer \| 25.5 \| 36 \|/);
  });

  it('refuses a trace of one layer', () => {
    assert.throws(
      () => trunkTraceSummary([[layer(0, 1, { attention: false, producerWaited: 0 })]]),
      /at least 2 layers/,
    );
  });
});
