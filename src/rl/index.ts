// agent-r1's RL algorithms: advantage estimators, policy and value losses, KL, aggregation.
// Pure functions over tensors; every function documents its shapes (B rows = agent steps, L = response width).
export type {
  AdvantageConfig,
  AdvantageEstimator,
  AdvantageInput,
  AdvantageOptions,
  AdvantageOutput,
  AggDenominators,
  GigpoConfig,
  LossAggMode,
  Metrics,
  PolicyLoss,
  PolicyLossConfig,
  PolicyLossInput,
  PolicyLossOutput,
  SumAcrossRanks,
} from './types.js';
export { Registry } from '../registry.js';
export {
  advantageEstimators,
  policyLosses,
  registerAdvantageEstimator,
  registerPolicyLoss,
  computeAdvantage,
  computePolicyLoss,
  advantageConfig,
} from './registries.js';
export { builtinAdvantageEstimators, builtinPolicyLosses } from './builtins.js';
export { placeStepRewards } from './step-rewards.js';
export { maskedSum, maskedMean, maskedVar, maskedWhiten, maskedWhitenWithInfo } from './masked.js';
export { stepGae } from './advantages/gae.js';
export { tokenGae } from './advantages/token-gae.js';
export { grpo } from './advantages/grpo.js';
export { rloo } from './advantages/rloo.js';
export { reinforcePlusPlus, reinforcePlusPlusBaseline } from './advantages/reinforce-plus-plus.js';
export { gigpo } from './advantages/gigpo.js';
export { anchorKey } from './advantages/anchor-key.js';
export { aggLoss, aggDenominators, LOSS_AGG_MODES } from './agg-loss.js';
export { vanillaPolicyLoss } from './policy-losses/vanilla.js';
export { gspoPolicyLoss } from './policy-losses/gspo.js';
export { reinforcePolicyLoss, gpgPolicyLoss } from './policy-losses/reinforce.js';
export { cispoPolicyLoss } from './policy-losses/cispo.js';
export { klPenalty, KL_PENALTIES, type KlPenaltyName } from './kl.js';
export {
  FixedKlController,
  AdaptiveKlController,
  createKlController,
  applyKlPenalty,
  type KlController,
  type KlControllerConfig,
  type KlInRewardInput,
} from './kl-controller.js';
export { entropyFromLogits } from './entropy.js';
export { valueLoss, stepValueMask, type ValueLossInput, type ValueLossConfig } from './value-loss.js';
export { computeActorLoss, type ActorLossInput, type ActorLossConfig } from './actor-loss.js';
