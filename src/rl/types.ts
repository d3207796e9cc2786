// The shapes of what estimators and losses take and give. B = rows (one per agent step),
// L = padded response width.
import type { Tensor } from '../torch/index.js';

/** Named scalar metrics (verl's names, without the trainer's `actor/`, `critic/` prefixes). */
export type Metrics = Record<string, number>;

/** The step rows an advantage estimator reads. */
export interface AdvantageInput {
  /** (B, L) token-level rewards: each step's reward on its last action token (`placeStepRewards`), KL penalty applied. */
  tokenLevelRewards: Tensor;
  /** (B, L) 1 on tokens the LLM generated, 0 elsewhere. A row whose mask is all 0 (batch padding) gets advantage 0. */
  responseMask: Tensor;
  /** (B) the trajectory each row belongs to. */
  trajectoryUid: readonly string[];
  /** (B) the row's step index inside its trajectory (0, 1, ...). */
  stepIndex: readonly number[];
  /** (B) the prompt group (same for all n rollouts of a prompt and all their steps). */
  groupUid: readonly string[];
  /**
   * The same `tokenLevelRewards` and `responseMask` as float64 host arrays (row-major), when the
   * caller has them there (`placeStepRewards(...).host`, no KL penalty applied since): the estimators
   * read these instead of copying the tensors back from the device.
   */
  host?: { tokenLevelRewards: Float64Array; responseMask: Float64Array };
  /** (B, L) critic values; column j is the value before response token j (`gae`, `token_gae`). */
  values?: Tensor;
  /** (B) the env's anchor observation per step, compared by exact structural equality (`gigpo`). */
  anchors?: readonly unknown[];
  /**
   * Under data parallelism, sums numbers over every rank's batch (each rank holds its share of the
   * rows): the estimators' batch-wide statistics (whitening's mean and std) are then the global
   * batch's, so N ranks give what one process on the combined batch gives. Group statistics (GRPO,
   * RLOO, GiGPO) stay local: a prompt's group is rolled out on one rank. Omitted: this batch alone.
   */
  sumAcrossRanks?: SumAcrossRanks;
}

/** Sums each of a few numbers over the data-parallel ranks (every rank calls it, in the same order). */
export type SumAcrossRanks = (values: readonly number[]) => number[];

/** GiGPO's options (verl-agent's `algorithm.gigpo.*`). */
export interface GigpoConfig {
  /** `step_advantage_w`: weight of the step part (default 1.0). */
  stepAdvantageW: number;
  /** `mode`: `mean_std_norm` (default) or `mean_norm` (no division by the std). */
  mode: 'mean_std_norm' | 'mean_norm';
  /**
   * Where the episode part's group statistics come from: `trajectory` (ours, default: each
   * trajectory once) or `step` (verl-agent's original: every step row scored with its episode's
   * total, statistics over the group's step rows).
   */
  episodeStats: 'trajectory' | 'step';
}

/** `algorithm.*` options the estimators read (camelCase of verl's keys). */
export interface AdvantageConfig {
  /** `gamma` (verl default 1.0). */
  gamma: number;
  /** `lam` (verl default 1.0). */
  lam: number;
  /** `norm_adv_by_std_in_grpo` (default true; false is Dr.GRPO). */
  normAdvByStdInGrpo: boolean;
  /** epsilon of the group normalisations (1e-6). */
  epsilon: number;
  gigpo: GigpoConfig;
}

/** What every advantage estimator returns. */
export interface AdvantageOutput {
  /** (B, L) advantages, 0 where the mask is 0. Same dtype as the rewards, on the mask's device. */
  advantages: Tensor;
  /** (B, L) returns (the critic's targets for `gae`/`token_gae`; equal to the advantages for outcome estimators). */
  returns: Tensor;
  metrics: Metrics;
}

/** Options as a caller gives them: every field optional, `gigpo` partial too. */
export type AdvantageOptions = Partial<Omit<AdvantageConfig, 'gigpo'>> & { gigpo?: Partial<GigpoConfig> };

export type AdvantageEstimator = (input: AdvantageInput, config: AdvantageConfig) => AdvantageOutput;

/** verl's `loss_agg_mode` values. */
export type LossAggMode = 'token-mean' | 'seq-mean-token-sum' | 'seq-mean-token-mean' | 'seq-mean-token-sum-norm';

/**
 * Mini-batch-wide denominators for `aggLoss`. Pass the counts of the whole mini-batch when a
 * mini-batch is split into micro-batches: each micro-batch's loss is then its share of the
 * mini-batch loss and the summed gradients equal the mini-batch's. Omitted counts are taken from
 * the tensors given (one micro-batch = the mini-batch).
 */
export interface AggDenominators {
  /** N_tok: sum of the mask over the mini-batch (`token-mean`). */
  numTokens?: number;
  /** N_seq: rows with at least one action token in the mini-batch (`seq-mean-*` modes). */
  numSeqs?: number;
  /** `seq-mean-token-sum-norm`'s divisor (default: L, the mask's width). */
  lossScaleFactor?: number;
  /** Multiplier for data-parallel averaging when the counts above span all ranks (verl's dp_size; default 1). */
  dpSize?: number;
}

/** What a policy loss reads. All (B, L). */
export interface PolicyLossInput {
  /** log pi_theta of the response tokens; the tensor the gradient flows into. */
  logprobs: Tensor;
  /** log-probs under the policy that collected (or last updated on) the data; no gradient. */
  oldLogprobs: Tensor;
  advantages: Tensor;
  responseMask: Tensor;
  /** Optional per-token importance weights (verl's rollout_is_weights); multiply the per-token loss. */
  rolloutIsWeights?: Tensor;
}

/** `actor_rollout_ref.actor.*` options the policy losses read. */
export interface PolicyLossConfig {
  /** `clip_ratio` (0.2): the default for both sides. */
  clipRatio?: number;
  /** `clip_ratio_low` (defaults to clipRatio). */
  clipRatioLow?: number;
  /** `clip_ratio_high` (defaults to clipRatio). */
  clipRatioHigh?: number;
  /** `clip_ratio_c` (3.0): dual-clip bound for negative advantages; must be > 1. */
  clipRatioC?: number;
  /** `loss_agg_mode` (token-mean). */
  lossAggMode?: LossAggMode;
  /** Mini-batch-wide denominators (see `AggDenominators`). */
  denominators?: AggDenominators;
}

/** What every policy loss returns. */
export interface PolicyLossOutput {
  /** The aggregated loss (a scalar tensor, differentiable w.r.t. `logprobs`). */
  loss: Tensor;
  /** `pg_clipfrac`, `pg_clipfrac_lower`, `ppo_kl` (means over this call's action tokens). */
  metrics: Metrics;
}

export type PolicyLoss = (input: PolicyLossInput, config: PolicyLossConfig) => PolicyLossOutput;
