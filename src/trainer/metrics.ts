// Metrics out: JSON Lines (one object per step: {"step": N, ...}) and a progress line.
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { EventFileWriter } from './tfevents.js';

/** Where a step's metrics go besides the console (trainer.logger `file`, `tensorboard`, and metrics.jsonl). */
export interface MetricsSink {
  write(step: number, metrics: Record<string, number>): void;
  /** A fresh run: earlier runs' records leave the series. */
  startFresh(): void;
  /** A run resumed at `step` redoes the later steps: the earlier run's records past it leave the series; returns how many went (when known). */
  cutAfter(step: number): number;
}

/**
 * JSON Lines, one object per step: `flat` is `{"step": N, ...metrics}` (metrics.jsonl), `verl` is
 * verl's file logger's `{"step": N, "data": {...}}`.
 */
export class JsonlSink implements MetricsSink {
  constructor(
    readonly path: string,
    readonly format: 'flat' | 'verl' = 'flat',
  ) {
    mkdirSync(dirname(path), { recursive: true });
  }

  write(step: number, metrics: Record<string, number>): void {
    appendFileSync(
      this.path,
      JSON.stringify(this.format === 'flat' ? { step, ...metrics } : { step, data: metrics }) + '\n',
    );
  }

  startFresh(): void {
    writeFileSync(this.path, '');
  }

  /** Drops the lines past `step` and a torn last line. */
  cutAfter(step: number): number {
    if (!existsSync(this.path)) return 0;
    const lines = readFileSync(this.path, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    const kept = lines.filter((line) => {
      try {
        const s = (JSON.parse(line) as { step?: unknown }).step;
        return typeof s === 'number' && s <= step;
      } catch {
        return false;
      }
    });
    if (kept.length === lines.length) return 0;
    const tmp = `${this.path}.tmp-${process.pid}`;
    writeFileSync(tmp, kept.map((l) => l + '\n').join(''));
    renameSync(tmp, this.path);
    return lines.length - kept.length;
  }
}

/**
 * Scalars in a TensorBoard event file under `dir` (a new file per run, as TensorBoard expects).
 * Older files are left as they are: a SessionLog START tells TensorBoard's reader to drop their
 * steps from the one this run starts at.
 */
export class TensorBoardSink implements MetricsSink {
  private writer?: EventFileWriter;

  constructor(readonly dir: string) {}

  private open(): EventFileWriter {
    this.writer ??= new EventFileWriter(this.dir);
    return this.writer;
  }

  write(step: number, metrics: Record<string, number>): void {
    this.open().scalars(step, metrics);
  }

  startFresh(): void {
    this.open().sessionStart(0);
  }

  cutAfter(step: number): number {
    this.open().sessionStart(step + 1);
    return 0;
  }

  /** The event file this run writes (undefined before anything was written). */
  get path(): string | undefined {
    return this.writer?.path;
  }
}

/** A step's metrics to every sink, and a progress line to the console. */
export class MetricsLog {
  readonly sinks: MetricsSink[];

  /** `path`: metrics.jsonl (flat JSON Lines); `sinks`: the trainer.logger destinations. */
  constructor(
    readonly options: {
      path?: string;
      console?: boolean;
      totalSteps?: number;
      print?: (line: string) => void;
      sinks?: MetricsSink[];
    },
  ) {
    this.sinks = [...(options.path ? [new JsonlSink(options.path)] : []), ...(options.sinks ?? [])];
  }

  /** Appends the step's metrics; `note` (e.g. why the batch was skipped) goes on the progress line. */
  write(step: number, metrics: Record<string, number>, note?: string): void {
    for (const sink of this.sinks) sink.write(step, metrics);
    if (this.options.console)
      (this.options.print ?? console.log)(
        progressLine(step, metrics, this.options.totalSteps) + (note ? ` | ${note}` : ''),
      );
  }

  /** A fresh run (no checkpoint resumed) starts a new series everywhere. */
  startFresh(): void {
    for (const sink of this.sinks) sink.startFresh();
  }

  /**
   * Drops the records past `step` (a run resumed from an older checkpoint redoes those steps, so
   * their old records would make a second series); returns how many lines went from a JSON Lines file (the most of any).
   */
  cutAfter(step: number): number {
    return Math.max(0, ...this.sinks.map((sink) => sink.cutAfter(step)));
  }
}

const SHOWN: [string, string][] = [
  ['reward/trajectory_mean', 'reward'],
  ['val/reward_mean', 'val'],
  ['response_length/mean', 'resp_len'],
  ['rollout/tool_calls_per_trajectory', 'tool_calls'],
  ['actor/pg_loss', 'pg_loss'],
  ['actor/ppo_kl', 'kl'],
  ['actor/entropy', 'entropy'],
  ['actor/grad_norm', 'grad'],
  ['critic/vf_loss', 'vf_loss'],
  // SFT (agent-r1 sft)
  ['train/loss', 'loss'],
  ['val/loss', 'val_loss'],
  ['train/grad_norm', 'grad'],
  ['train/lr', 'lr'],
  ['timing_s/gen', 'gen_s'],
  ['timing_s/step', 's'],
  ['perf/max_memory_allocated_gb', 'mem_gb'],
];

/** "step 3/40 | reward 0.412 | pg_loss -0.01 | ..." with whatever of the usual metrics is there. */
export function progressLine(step: number, m: Record<string, number>, total?: number): string {
  const parts = [`step ${step}${total ? `/${total}` : ''}`];
  for (const [key, label] of SHOWN) if (m[key] !== undefined) parts.push(`${label} ${fmt(m[key])}`);
  return parts.join(' | ');
}

function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  return Math.abs(x) >= 1e4 || (x !== 0 && Math.abs(x) < 1e-3) ? x.toExponential(2) : x.toFixed(3);
}
