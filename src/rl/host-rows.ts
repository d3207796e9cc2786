// Host rows, the advantage estimators' view of a batch of training rows: masks and rewards as float64 arrays, and the
// trajectory/group structure from the per-row ids. Advantage estimators are sequential
// recurrences and group statistics over a few thousand rows; they run here, in float64, once per
// batch, and hand back tensors.
import * as torch from '../torch/index.js';
import type { Tensor, DType, Device } from '../torch/index.js';
import { UserError } from '../errors.js';
import type { AdvantageInput, SumAcrossRanks } from './types.js';
import { maskedWhitenWithInfo } from './masked.js';

/** One trajectory: its active rows (mask not empty) ordered by step index. */
export interface Trajectory {
  uid: string;
  group: string;
  rows: number[];
  /** S = the sum of its rows' step rewards (sum over rows of sum_j r * m), computed once in `hostRows`. */
  total: number;
}

export interface HostRows {
  B: number;
  L: number;
  /** (B*L) row-major. */
  mask: Float64Array;
  rewards: Float64Array;
  /** A row takes part in the estimate when its mask has at least one 1. */
  active: boolean[];
  /** (B) R_i = sum_j r[i,j] * m[i,j]. */
  stepReward: Float64Array;
  /** Trajectories with at least one active row, in order of first appearance. */
  trajectories: Trajectory[];
  /** Row -> its trajectory (undefined for inactive rows). */
  trajectoryOf: (Trajectory | undefined)[];
  /** Group uid -> its trajectories (only those with active rows), in order of first appearance. */
  groups: Map<string, Trajectory[]>;
  inactiveRows: number;
  /** What output tensors are made as. */
  dtype: DType;
  device: Device;
}

/** A tensor's values as a float64 host array (row-major). */
export function toHost(t: Tensor): Float64Array {
  return torch.scope(() => t.detach().to({ dtype: 'float64', device: 'cpu' }).toTypedArray() as Float64Array);
}

/** A float64 CPU tensor over a copy of host values (one native copy, no per-element JS work). */
function float64Tensor(data: Float64Array, shape: number[]): Tensor {
  return torch.fromBytes(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), 'float64', shape);
}

/** A (B, L) tensor from host values, in the batch's dtype and on its device. */
export function fromHost(rows: HostRows, data: Float64Array): Tensor {
  return torch.scope(() => float64Tensor(data, [rows.B, rows.L]).to({ dtype: rows.dtype, device: rows.device }));
}

function shapeOf(t: Tensor, name: string): number[] {
  const s = t.shape;
  if (s.length !== 2) throw new UserError(`${name} must be (B, L); got shape [${s.join(', ')}]`);
  return s;
}

/** Checks the input's shapes and ids and copies what every estimator needs to the host. */
export function hostRows(input: AdvantageInput): HostRows {
  const [B, L] = shapeOf(input.responseMask, 'responseMask');
  const [rb, rl] = shapeOf(input.tokenLevelRewards, 'tokenLevelRewards');
  if (rb !== B || rl !== L) {
    throw new UserError(`tokenLevelRewards [${rb}, ${rl}] and responseMask [${B}, ${L}] must have the same shape`);
  }
  for (const [name, arr] of [
    ['trajectoryUid', input.trajectoryUid],
    ['stepIndex', input.stepIndex],
    ['groupUid', input.groupUid],
  ] as const) {
    if (!arr || arr.length !== B)
      throw new UserError(`${name} needs one entry per row (${B}); got ${arr ? arr.length : 'none'}`);
  }
  // The caller's host copy when it has one (the trainer placed the rewards on the host): no copy back.
  const host = input.host;
  if (host && (host.responseMask.length !== B * L || host.tokenLevelRewards.length !== B * L)) {
    throw new UserError(`host.responseMask and host.tokenLevelRewards must hold B*L = ${B * L} values`);
  }
  const mask = host?.responseMask ?? toHost(input.responseMask);
  const rewards = host?.tokenLevelRewards ?? toHost(input.tokenLevelRewards);
  const active: boolean[] = new Array(B);
  const stepReward = new Float64Array(B);
  let inactiveRows = 0;
  for (let i = 0; i < B; i++) {
    let n = 0;
    let r = 0;
    for (let j = 0; j < L; j++) {
      const m = mask[i * L + j];
      n += m;
      r += rewards[i * L + j] * m;
    }
    active[i] = n > 0;
    stepReward[i] = r;
    if (!active[i]) inactiveRows++;
  }

  const byUid = new Map<string, Trajectory>();
  const trajectoryOf: (Trajectory | undefined)[] = new Array(B);
  for (let i = 0; i < B; i++) {
    const k = input.stepIndex[i];
    if (!Number.isInteger(k) || k < 0) throw new UserError(`stepIndex[${i}] must be a non-negative integer; got ${k}`);
    if (!active[i]) continue;
    const uid = input.trajectoryUid[i];
    let traj = byUid.get(uid);
    if (!traj) {
      traj = { uid, group: input.groupUid[i], rows: [], total: 0 };
      byUid.set(uid, traj);
    } else if (traj.group !== input.groupUid[i]) {
      throw new UserError(`trajectory '${uid}' has rows in two groups ('${traj.group}' and '${input.groupUid[i]}')`);
    }
    traj.rows.push(i);
    trajectoryOf[i] = traj;
  }
  const groups = new Map<string, Trajectory[]>();
  for (const traj of byUid.values()) {
    traj.rows.sort((a, b) => input.stepIndex[a] - input.stepIndex[b]);
    for (const i of traj.rows) traj.total += stepReward[i];
    for (let t = 1; t < traj.rows.length; t++) {
      if (input.stepIndex[traj.rows[t]] === input.stepIndex[traj.rows[t - 1]]) {
        throw new UserError(
          `trajectory '${traj.uid}' has two rows with step index ${input.stepIndex[traj.rows[t]]} (rows ${traj.rows[t - 1]} and ${traj.rows[t]})`,
        );
      }
    }
    const g = groups.get(traj.group);
    if (g) g.push(traj);
    else groups.set(traj.group, [traj]);
  }
  const dt = input.tokenLevelRewards.dtype;
  return {
    B,
    L,
    mask,
    rewards,
    active,
    stepReward,
    trajectories: [...byUid.values()],
    trajectoryOf,
    groups,
    inactiveRows,
    dtype: torch.isFloating(dt) ? dt : 'float32',
    device: input.responseMask.device,
  };
}

/** Row values of a (B, L) host tensor's column j. */
export function column(rows: HostRows, data: Float64Array, j: number): Float64Array {
  const out = new Float64Array(rows.B);
  for (let i = 0; i < rows.B; i++) out[i] = data[i * rows.L + j];
  return out;
}

/** (B, L) host array: a per-row scalar times the mask. */
export function broadcastRows(rows: HostRows, perRow: Float64Array): Float64Array {
  const out = new Float64Array(rows.B * rows.L);
  for (let i = 0; i < rows.B; i++) {
    if (!rows.active[i]) continue;
    const v = perRow[i];
    for (let j = 0; j < rows.L; j++) out[i * rows.L + j] = v * rows.mask[i * rows.L + j];
  }
  return out;
}

/**
 * Mean and unbiased (N-1) standard deviation of a list; std is NaN for fewer than 2 values. With
 * `sumAcrossRanks`, of the lists of every rank together (N = `count`, the global number of values).
 */
export function meanStd(
  xs: readonly number[],
  sumAcrossRanks?: SumAcrossRanks,
): { mean: number; std: number; count: number } {
  let s = 0;
  for (const x of xs) s += x;
  const [n, total] = sumAcrossRanks ? sumAcrossRanks([xs.length, s]) : [xs.length, s];
  const mean = n > 0 ? total / n : 0;
  let ss = 0;
  for (const x of xs) ss += (x - mean) * (x - mean);
  const [squares] = sumAcrossRanks ? sumAcrossRanks([ss]) : [ss];
  return { mean, std: n > 1 ? Math.sqrt(squares / (n - 1)) : Number.NaN, count: n };
}

/**
 * `maskedWhiten` (masked.ts, the one implementation) over a (B, L) host array with the batch's
 * mask, computed in float64 on the CPU (over every rank's rows with `sumAcrossRanks`). Returns the
 * whitened values and whether N <= 1.
 */
export function whitenHost(
  rows: HostRows,
  data: Float64Array,
  sumAcrossRanks?: SumAcrossRanks,
): { whitened: Float64Array; degenerate: boolean } {
  return torch.scope(() => {
    const x = float64Tensor(data, [rows.B, rows.L]);
    const m = float64Tensor(rows.mask, [rows.B, rows.L]);
    const { whitened, degenerate } = maskedWhitenWithInfo(x, m, sumAcrossRanks);
    return { whitened: whitened.toTypedArray() as Float64Array, degenerate };
  });
}
