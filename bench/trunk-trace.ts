// Where a decode-trunk step's time goes, from the kernel's trace (AGENT_R1_DECODE_TRUNK_TRACE=1,
// torch.decodeTrunkTrace: each block's clock at each step of each layer; native/src/decode_trunk.cc's
// TRACE_EVENTS). For every step of a layer, the mean over blocks and the largest block's time, both
// averaged over the layers after the first (which starts from the launch), in microseconds; and
// how long the producer warp waited for free ring stages and the consumers for stages to land, which
// say whether the consumers (the producer waits) or the memory (the consumers wait) set the pace
// through a matmul, and how long the warps waited for each other at a matmul's end. The phases hand
// their outputs on as tagged words the next phase polls (decode_trunk.cc): their 'start' rows are
// the barrier between two phases of a block, their staging rows include the wait for the others.
// bench/engine-decode.ts prints it after a traced point.

/** Trace events (decode_trunk.cc's TRACE_EVENTS), by name. */
const E = {
  layer: 0,
  qkvReady: 1,
  qkvStaged: 2,
  qkvDone: 3,
  attWait: 4,
  attReady: 5,
  attDone: 6,
  oReady: 7,
  oStaged: 8,
  oDone: 9,
  guReady: 10,
  guStaged: 11,
  guDone: 12,
  downReady: 13,
  downStaged: 14,
  downDone: 15,
  producerWaited: 16,
  producerFirst: 17,
  producerLast: 18,
  consumersLandedWait: 19,
  consumersTail: 20,
} as const;

/** Each step: its name and its span in one block's events of one layer (null: the block has none). */
const STEPS: [string, (e: number[]) => number | null][] = [
  ['q/k/v: start', (e) => e[E.qkvReady] - e[E.layer]],
  ["q/k/v: poll the layer before's output, stage the normed input", (e) => e[E.qkvStaged] - e[E.qkvReady]],
  ['q/k/v: rows', (e) => e[E.qkvDone] - e[E.qkvStaged]],
  [
    'attention: wait for q/k/v, rope (blocks with an item)',
    (e) => (e[E.attWait] ? e[E.attReady] - e[E.attWait] : null),
  ],
  [
    'attention: attend, merge (blocks that count a head)',
    (e) => (e[E.attDone] > e[E.attReady] ? e[E.attDone] - e[E.attReady] : null),
  ],
  // o by KV head (the trunk's default where the shape allows): ready once the block's own attention
  // items are done, staged at once, and its rows take the waits for each head as well; so with down
  // by columns: its staging is 0 and its rows take the waits for each chunk
  ['o: wait for the heads (from q/k/v done; by head: for its attention)', (e) => e[E.oReady] - e[E.qkvDone]],
  ['o: stage (by head: 0)', (e) => e[E.oStaged] - e[E.oReady]],
  ["o: rows (by head: with each head's wait)", (e) => e[E.oDone] - e[E.oStaged]],
  ['gate/up: start', (e) => e[E.guReady] - e[E.oDone]],
  ["gate/up: poll o's output, stage the normed input", (e) => e[E.guStaged] - e[E.guReady]],
  ['gate/up: rows', (e) => e[E.guDone] - e[E.guStaged]],
  ['down: start', (e) => e[E.downReady] - e[E.guDone]],
  ["down: poll silu(gate) * up (gate/up's output), stage it (by columns: 0)", (e) => e[E.downStaged] - e[E.downReady]],
  ["down: rows (by columns: with each chunk's wait)", (e) => e[E.downDone] - e[E.downStaged]],
  ['layer', (e) => e[E.downDone] - e[E.layer]],
  ['producer: waited for free stages', (e) => e[E.producerWaited]],
  ['producer: first to last copy of the layer', (e) => e[E.producerLast] - e[E.producerFirst]],
  ['consumers: waited for stages to land (mean over warps)', (e) => e[E.consumersLandedWait]],
  ["consumers: idle at the matmuls' ends (mean over warps)", (e) => e[E.consumersTail]],
];

export interface TrunkTraceRow {
  step: string;
  /** Mean over the blocks that have the step, us (averaged over layers 1..). */
  meanUs: number;
  /** The largest block's, us (averaged over layers 1..). */
  maxUs: number;
}

/** The summary of a trace [blocks][layers][events] (ns). */
export function trunkTraceSummary(trace: number[][][]): TrunkTraceRow[] {
  const layers = trace[0]?.length ?? 0;
  if (layers < 2) throw new Error('a trunk trace needs at least 2 layers (the first starts from the launch)');
  return STEPS.map(([step, span]) => {
    let meanSum = 0;
    let maxSum = 0;
    let counted = 0;
    for (let l = 1; l < layers; l++) {
      const spans = trace.map((block) => span(block[l])).filter((x): x is number => x !== null);
      if (spans.length === 0) continue;
      meanSum += spans.reduce((a, b) => a + b, 0) / spans.length;
      maxSum += Math.max(...spans);
      counted++;
    }
    return {
      step,
      meanUs: counted ? +(meanSum / counted / 1e3).toFixed(2) : Number.NaN,
      maxUs: counted ? +(maxSum / counted / 1e3).toFixed(2) : Number.NaN,
    };
  });
}

/** The summary as a markdown table. */
export function formatTrunkTrace(rows: TrunkTraceRow[]): string {
  return [
    '| decode trunk, a layer | mean over blocks, us | largest block, us |',
    '|---|---|---|',
    ...rows.map((r) => `| ${r.step} | ${r.meanUs} | ${r.maxUs} |`),
  ].join('\n');
}
