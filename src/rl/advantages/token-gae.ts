// `token_gae`: GAE along each trajectory's LLM tokens, across its steps (ALGORITHMS.md 1.2).
import { UserError } from '../../errors.js';
import { fromHost, hostRows, toHost, whitenHost } from '../host-rows.js';
import type { AdvantageConfig, AdvantageInput, AdvantageOutput } from '../types.js';

/**
 * Token-level GAE over each trajectory's action tokens, concatenated in step order. The state
 * (nv, g) starts at (0, 0); steps from last to first, inside a step columns L-1 down to 0:
 * delta = r*m + gamma*nv - V; g' = delta + gamma*lam*g; where m = 1: nv <- V, g <- g' (tokens
 * with m = 0 leave the state unchanged, so g carries across steps and nv becomes the later
 * step's first action-token value). adv_raw = g*m; returns = (adv_raw + V)*m (not whitened);
 * advantages = masked_whiten(adv_raw, m) over every action token of the batch.
 *
 * Shapes: tokenLevelRewards, responseMask, values (B, L) -> advantages, returns (B, L).
 * With one step per trajectory this is verl's token-level `gae` (compute_gae_advantage_return).
 */
export function tokenGae(input: AdvantageInput, config: AdvantageConfig): AdvantageOutput {
  if (!input.values) throw new UserError("adv_estimator 'token_gae' needs the critic's values (input.values, (B, L))");
  const rows = hostRows(input);
  const values = toHost(input.values);
  if (values.length !== rows.B * rows.L) throw new UserError(`values must be (B, L) = (${rows.B}, ${rows.L})`);
  const { gamma, lam } = config;
  const { L, mask, rewards } = rows;
  const raw = new Float64Array(rows.B * L);
  const ret = new Float64Array(rows.B * L);
  for (const traj of rows.trajectories) {
    let nv = 0;
    let g = 0;
    for (let t = traj.rows.length - 1; t >= 0; t--) {
      const base = traj.rows[t] * L;
      for (let j = L - 1; j >= 0; j--) {
        const m = mask[base + j];
        if (m === 0) continue;
        const V = values[base + j];
        const delta = rewards[base + j] * m + gamma * nv - V;
        g = delta + gamma * lam * g;
        nv = V;
        raw[base + j] = g * m;
        ret[base + j] = (g * m + V) * m;
      }
    }
  }
  const { whitened, degenerate } = whitenHost(rows, raw, input.sumAcrossRanks);
  return {
    advantages: fromHost(rows, whitened),
    returns: fromHost(rows, ret),
    metrics: { inactive_rows: rows.inactiveRows, 'gae/whiten_degenerate': degenerate ? 1 : 0 },
  };
}
