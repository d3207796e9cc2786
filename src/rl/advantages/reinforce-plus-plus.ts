// `reinforce_plus_plus` and `reinforce_plus_plus_baseline` (ALGORITHMS.md 1.4).
import { broadcastRows, fromHost, hostRows, meanStd, whitenHost } from '../host-rows.js';
import type { AdvantageConfig, AdvantageInput, AdvantageOutput } from '../types.js';

/**
 * REINFORCE++, row-wise as in the references (not trajectory-aware): per row, columns from last
 * to first, run = r_t + gamma*run; ret_t = run; then run <- run*m_t (the return resets past the
 * response). advantages = masked_whiten(ret, m) * m over the batch's action tokens.
 *
 * Shapes: tokenLevelRewards, responseMask (B, L) -> advantages, returns = ret * m (B, L).
 */
export function reinforcePlusPlus(input: AdvantageInput, config: AdvantageConfig): AdvantageOutput {
  const rows = hostRows(input);
  const { B, L, mask, rewards } = rows;
  const ret = new Float64Array(B * L);
  for (let i = 0; i < B; i++) {
    if (!rows.active[i]) continue;
    let run = 0;
    for (let j = L - 1; j >= 0; j--) {
      run = rewards[i * L + j] + config.gamma * run;
      ret[i * L + j] = run;
      run *= mask[i * L + j];
    }
  }
  const { whitened, degenerate } = whitenHost(rows, ret, input.sumAcrossRanks);
  for (let k = 0; k < ret.length; k++) ret[k] *= mask[k];
  return {
    advantages: fromHost(rows, whitened),
    returns: fromHost(rows, ret),
    metrics: { inactive_rows: rows.inactiveRows, whiten_degenerate: degenerate ? 1 : 0 },
  };
}

/**
 * REINFORCE++ with a group baseline, over trajectories: A = S - mean(group) (mean 0 for a group
 * of one), broadcast to the trajectory's action tokens, then masked_whiten over the batch's
 * action tokens, times m.
 *
 * Shapes: tokenLevelRewards, responseMask (B, L) -> advantages = returns (B, L).
 */
export function reinforcePlusPlusBaseline(input: AdvantageInput, _config: AdvantageConfig): AdvantageOutput {
  const rows = hostRows(input);
  const perRow = new Float64Array(rows.B);
  let singletons = 0;
  for (const trajs of rows.groups.values()) {
    const mean = trajs.length > 1 ? meanStd(trajs.map((t) => t.total)).mean : 0;
    if (trajs.length === 1) singletons++;
    for (const traj of trajs) for (const i of traj.rows) perRow[i] = traj.total - mean;
  }
  const { whitened, degenerate } = whitenHost(rows, broadcastRows(rows, perRow), input.sumAcrossRanks);
  const advantages = fromHost(rows, whitened);
  return {
    advantages,
    returns: advantages.clone(),
    metrics: { inactive_rows: rows.inactiveRows, singleton_groups: singletons, whiten_degenerate: degenerate ? 1 : 0 },
  };
}
