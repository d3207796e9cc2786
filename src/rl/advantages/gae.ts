// `gae` at step level: the credit assignment of StepPO (ALGORITHMS.md 1.1).
import { UserError } from '../../errors.js';
import { broadcastRows, column, fromHost, hostRows, meanStd, toHost } from '../host-rows.js';
import type { AdvantageConfig, AdvantageInput, AdvantageOutput } from '../types.js';

/**
 * Step-level GAE. Per row i: step reward R_i = sum_j r*m, step value v_i = V[i, 0] (the critic
 * at the last prompt token). Per trajectory, steps from last to first: delta_t = R_t +
 * gamma*v_{t+1} - v_t (v_T = 0: the last step is terminal), A_t = delta_t + gamma*lam*A_{t+1};
 * G_t = A_t + v_t. A is whitened over the batch's active rows (every rank's: `sumAcrossRanks`), (A - mean)/(std + 1e-8) with the
 * unbiased std (one active row: A - mean, unscaled, metric `gae/whiten_degenerate`).
 *
 * Shapes: tokenLevelRewards, responseMask, values (B, L) -> advantages = A_i*m, returns = G_i*m (B, L).
 * Rows whose mask is empty take no part and get 0 (metric `inactive_rows`); the critic trains on
 * column 0 (`stepValueMask`).
 */
export function stepGae(input: AdvantageInput, config: AdvantageConfig): AdvantageOutput {
  if (!input.values) throw new UserError("adv_estimator 'gae' needs the critic's values (input.values, (B, L))");
  const rows = hostRows(input);
  const values = toHost(input.values);
  if (values.length !== rows.B * rows.L) throw new UserError(`values must be (B, L) = (${rows.B}, ${rows.L})`);
  const v = column(rows, values, 0);
  const { gamma, lam } = config;
  const adv = new Float64Array(rows.B);
  const ret = new Float64Array(rows.B);
  for (const traj of rows.trajectories) {
    let nextValue = 0;
    let nextAdv = 0;
    for (let t = traj.rows.length - 1; t >= 0; t--) {
      const i = traj.rows[t];
      const delta = rows.stepReward[i] + gamma * nextValue - v[i];
      nextAdv = delta + gamma * lam * nextAdv;
      adv[i] = nextAdv;
      ret[i] = nextAdv + v[i];
      nextValue = v[i];
    }
  }
  const activeAdv: number[] = [];
  for (let i = 0; i < rows.B; i++) if (rows.active[i]) activeAdv.push(adv[i]);
  // over the global batch's active rows under data parallelism
  const { mean, std, count } = meanStd(activeAdv, input.sumAcrossRanks);
  const degenerate = count <= 1;
  for (let i = 0; i < rows.B; i++) {
    if (rows.active[i]) adv[i] = degenerate ? adv[i] - mean : (adv[i] - mean) / (std + 1e-8);
  }
  return {
    advantages: fromHost(rows, broadcastRows(rows, adv)),
    returns: fromHost(rows, broadcastRows(rows, ret)),
    metrics: { inactive_rows: rows.inactiveRows, 'gae/whiten_degenerate': degenerate ? 1 : 0 },
  };
}
