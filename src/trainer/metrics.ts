// Metrics out: JSON Lines (one object per step: {"step": N, ...}) and a progress line.
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export class MetricsLog {
  constructor(readonly o: { path?: string; console?: boolean; totalSteps?: number; print?: (line: string) => void }) {
    if (o.path) mkdirSync(dirname(o.path), { recursive: true });
  }

  /** Appends the step's metrics; `note` (e.g. why the batch was skipped) goes on the progress line. */
  write(step: number, metrics: Record<string, number>, note?: string): void {
    if (this.o.path) appendFileSync(this.o.path, JSON.stringify({ step, ...metrics }) + '\n');
    if (this.o.console) (this.o.print ?? console.log)(progressLine(step, metrics, this.o.totalSteps) + (note ? ` | ${note}` : ''));
  }

  /** Empties the file: a fresh run (no checkpoint resumed) starts a new series. */
  startFresh(): void {
    if (this.o.path) writeFileSync(this.o.path, '');
  }

  /**
   * Drops the lines past `step` (a run resumed from an older checkpoint redoes those steps, so
   * their old lines would make a second series), and a torn last line; returns how many went.
   */
  cutAfter(step: number): number {
    const path = this.o.path;
    if (!path || !existsSync(path)) return 0;
    const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '');
    const kept = lines.filter((line) => {
      try {
        const s = (JSON.parse(line) as { step?: unknown }).step;
        return typeof s === 'number' && s <= step;
      } catch {
        return false;
      }
    });
    if (kept.length === lines.length) return 0;
    const tmp = `${path}.tmp-${process.pid}`;
    writeFileSync(tmp, kept.map((l) => l + '\n').join(''));
    renameSync(tmp, path);
    return lines.length - kept.length;
  }
}

const SHOWN: [string, string][] = [
  ['reward/trajectory_mean', 'reward'], ['val/reward_mean', 'val'], ['response_length/mean', 'resp_len'],
  ['rollout/tool_calls_per_trajectory', 'tool_calls'], ['actor/pg_loss', 'pg_loss'], ['actor/ppo_kl', 'kl'],
  ['actor/entropy', 'entropy'], ['actor/grad_norm', 'grad'], ['critic/vf_loss', 'vf_loss'],
  // SFT (agent-r1 sft)
  ['train/loss', 'loss'], ['val/loss', 'val_loss'], ['train/grad_norm', 'grad'], ['train/lr', 'lr'],
  ['timing_s/gen', 'gen_s'], ['timing_s/step', 's'],
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
