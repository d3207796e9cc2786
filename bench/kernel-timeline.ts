// Where a decode step's time goes between its kernels, from a CUDA profile (torch.profile with
// `cuda`): each kernel of a replayed CUDA graph is its own event, so the step's span, the kernels'
// summed durations, the time no kernel of the step runs, and each kernel's start against the end
// of the one before it (negative where programmatic dependent launches overlap them) can be read.
// Nsight Compute times kernels one at a time, with no overlap; this is the step as it runs.
import type { ProfileEvent } from '../src/torch/index.js';

export interface TimelineRow {
  /** The kernel's place in a layer and its name (within the step's repeating part), else its name. */
  kernel: string;
  launchesPerStep: number;
  meanDurationUs: number;
  /** Mean of start - the previous kernel's end, in us (negative: they overlap); null for a step's first kernel. */
  meanStartAfterPreviousEndUs: number | null;
  /**
   * Mean of what it adds to the step's span: its end less the latest end of the kernels before it (a
   * step's first kernel: its duration), in us. These add up to the span; with overlapping kernels
   * a duration does not say what a kernel costs the step, this does.
   */
  meanAddedUs: number;
}

export interface Timeline {
  steps: { kernels: number; spanUs: number; busyUs: number; idleUs: number; sincePreviousStepUs: number | null }[];
  rows: TimelineRow[];
}

/** A kernel's name without its template arguments or parameter list. */
export function shortKernelName(name: string): string {
  return name.split(/[<(]/, 1)[0].trim() || name;
}

/**
 * Each kernel's label: within the repeating part of the step (the layers), its place in the layer
 * and its name, so a layer's several launches of one kernel come apart; outside it (the embedding,
 * the final norm, lm_head, sampling), its name. The layer's length: the shortest shift under which
 * the names repeat nearly as often as under the best one (its multiples repeat as often), and at
 * least half the time. Places count from the first kernel from which a whole layer's names repeat
 * one layer on, so the layer's first kernel is place 0.
 */
export function layerLabels(names: string[]): string[] {
  const n = names.length;
  const repeatShare = (p: number) => {
    let same = 0;
    for (let i = 0; i + p < n; i++) if (names[i] === names[i + p]) same++;
    return same / (n - p);
  };
  const shares = new Map<number, number>();
  for (let p = 2; p < n / 2; p++) shares.set(p, repeatShare(p));
  const best = Math.max(0, ...shares.values());
  const period = best >= 0.5 ? [...shares.entries()].find(([, share]) => share >= 0.95 * best)![0] : 0;
  if (!period) return [...names];
  const wholeLayerRepeats = (i: number) => {
    for (let k = 0; k < period; k++) if (names[i + k] !== names[i + k + period]) return false;
    return true;
  };
  let first = 0;
  while (first + 2 * period <= n && !wholeLayerRepeats(first)) first++;
  if (first + 2 * period > n) first = 0;
  return names.map((name, i) => {
    const periodic = (i + period < n && names[i + period] === name) || (i >= period && names[i - period] === name);
    const place = (((i - first) % period) + period) % period;
    return periodic ? `${String(place).padStart(2)} ${name}` : name;
  });
}

/** The kernels a decode step ends with: sampleRows over float32 logits, or over the lm_head's bf16 ones. */
const SAMPLING_KERNELS = ['sample_rows', 'sample_rows_bf16'];

/**
 * The decode steps of `events` (their CUDA kernels; a step ends with a kernel named `stepEnd`, by
 * default one of SAMPLING_KERNELS), the last `steps` of the most common kernel count (the decode
 * graph's), summarized.
 */
export function kernelTimeline(events: ProfileEvent[], o: { stepEnd?: string; steps?: number } = {}): Timeline {
  const stepEnds = o.stepEnd ? [o.stepEnd] : SAMPLING_KERNELS;
  const stepEnd = stepEnds.join("' or '");
  const kernels = events
    .filter((e) => e.device === 'cuda' && !e.name.startsWith('[') && !/^Memcpy|^Memset/.test(e.name))
    .map((e) => ({ start: e.startNs, end: e.startNs + e.durationNs, name: shortKernelName(e.name) }))
    .sort((a, b) => a.start - b.start);
  const all: (typeof kernels)[] = [];
  let current: typeof kernels = [];
  for (const k of kernels) {
    current.push(k);
    if (stepEnds.includes(k.name)) {
      all.push(current);
      current = [];
    }
  }
  if (all.length < 2)
    throw new Error(
      `kernelTimeline: ${all.length} steps ending in a '${stepEnd}' kernel among ${kernels.length} CUDA kernels; need 2 or more (profile with { cuda: true } over several decode steps)`,
    );
  const counts = new Map<number, number>();
  for (const s of all) counts.set(s.length, (counts.get(s.length) ?? 0) + 1);
  const common = [...counts.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0][0];
  const chosen = all.filter((s) => s.length === common).slice(-(o.steps ?? 3));
  const per = new Map<string, { launches: number; duration: number; gap: number; gaps: number; added: number }>();
  const steps: Timeline['steps'] = [];
  for (const step of chosen) {
    const before = all.indexOf(step) - 1;
    const labels = layerLabels(step.map((k) => k.name));
    let idle = 0;
    let busy = 0;
    let end = step[0].start;
    step.forEach((k, i) => {
      idle += Math.max(0, k.start - end);
      busy += k.end - k.start;
      const r = per.get(labels[i]) ?? { launches: 0, duration: 0, gap: 0, gaps: 0, added: 0 };
      r.launches++;
      r.duration += k.end - k.start;
      r.added += i === 0 ? k.end - k.start : Math.max(0, k.end - end);
      if (i > 0) {
        r.gap += k.start - step[i - 1].end;
        r.gaps++;
      }
      per.set(labels[i], r);
      end = Math.max(end, k.end);
    });
    steps.push({
      kernels: step.length,
      spanUs: (step[step.length - 1].end - step[0].start) / 1e3,
      busyUs: busy / 1e3,
      idleUs: idle / 1e3,
      sincePreviousStepUs: before >= 0 ? (step[0].start - all[before][all[before].length - 1].end) / 1e3 : null,
    });
  }
  const rows = [...per.entries()]
    .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    .map(([kernel, r]) => ({
      kernel,
      launchesPerStep: r.launches / chosen.length,
      meanDurationUs: r.duration / r.launches / 1e3,
      meanStartAfterPreviousEndUs: r.gaps ? r.gap / r.gaps / 1e3 : null,
      meanAddedUs: r.added / r.launches / 1e3,
    }));
  return { steps, rows };
}

/** The timeline as a markdown table, a line per step above it. */
export function formatTimeline(t: Timeline): string {
  const us = (v: number) => v.toFixed(2);
  return [
    ...t.steps.map(
      (s) =>
        `step: ${s.kernels} kernels, span ${us(s.spanUs)} us, kernels' durations summed ${us(s.busyUs)} us, idle between kernels ${us(s.idleUs)} us` +
        (s.sincePreviousStepUs === null ? '' : `, ${us(s.sincePreviousStepUs)} us after the step before`),
    ),
    '| kernel | launches a step | mean duration us | mean start after the previous kernel ends, us | mean added to the step, us | added a step, us |',
    '|---|---|---|---|---|---|',
    ...t.rows.map(
      (r) =>
        `| ${r.kernel} | ${r.launchesPerStep} | ${us(r.meanDurationUs)} | ${r.meanStartAfterPreviousEndUs === null ? '-' : us(r.meanStartAfterPreviousEndUs)} | ${us(r.meanAddedUs)} | ${us(r.meanAddedUs * r.launchesPerStep)} |`,
    ),
  ].join('\n');
}
