import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { agentFlows } from '../registries.js';
import { defaultAgentFlowConfig, type AgentFlowConfig, type FlowContext } from '../flows/flow.js';
import type { Generator, SamplingParams } from '../../engine/generator.js';
import type { ChatTokenizer } from '../tokenizer.js';
import { writeTrajectoryDump, type DumpedTrajectory, type StepOrigin } from './trajectory-dump.js';
import type { RewardFunction } from '../rewards/reward-function.js';
import { scoreTrajectory } from '../rewards/trajectory-reward.js';
import { mcpServers } from '../tools/mcp-tools.js';
import type { AgentFlowOutput, AgentFlowStep, AgentSample, TrajectoryEndReason } from '../types.js';

export interface RolloutOptions {
  generator: Generator;
  tokenizer: ChatTokenizer;
  sampling: SamplingParams;
  /** Flow settings; missing ones take `defaultAgentFlowConfig`. */
  config?: Partial<AgentFlowConfig>;
  /** `actor_rollout_ref.rollout.n`: rollouts per sample (one group). Default 1. */
  n?: number;
  /** `actor_rollout_ref.rollout.agent.default_agent_flow`: the flow for rows without `agent_name`. Default `single_step_agent`. */
  defaultAgentFlow?: string;
  /** Trajectories run at once. Default: all of them (the generator's own batch size bounds the work in flight). */
  concurrency?: number;
  /** When set, the rollout is written here as JSON Lines, one line per trajectory (see `writeTrajectoryDump`). */
  dumpPath?: string;
  /** The global step the dump records (`step`); default 0. */
  dumpStep?: number;
  /** Leave the dump to the caller: the batch's `writeDump()` writes it (the trainer times it apart from
   *  generation, as verl's dump_rollout_generations). A rollout whose every trajectory failed writes it at once. */
  deferDump?: boolean;
  /** `data.reward_fn_key`: the row column whose value picks the reward function. Default `data_source`. */
  rewardFnKey?: string;
  /** Scores every trajectory in place of the registered function of its data_source (verl's `custom_reward_function`). */
  rewardFunction?: RewardFunction;
  signal?: AbortSignal;
  /** The weights generating this rollout (the trainer passes its step); kept as each step's `extra.policyVersion`. */
  policyVersion?: string;
  /** Called as each trajectory ends (finished or failed): how many have ended of how many. */
  onTrajectoryEnd?: (ended: number, total: number) => void;
}

/** A step with its place in the batch; after the rollout every step has a reward (see `scoreTrajectory`). */
export interface RolloutStep extends AgentFlowStep {
  trajectoryUid: string;
  /** The same for the n rollouts of one sample. */
  groupUid: string;
  sampleIndex: number;
  rolloutIndex: number;
  rewardScore: number;
}

export interface TrajectorySummary extends StepOrigin {
  numSteps: number;
  endReason: TrajectoryEndReason;
  endDetail?: string;
  /** Set when the trajectory failed; its steps are then left out of the batch. */
  error?: string;
}

export interface RolloutBatch {
  /** Steps of all trajectories that finished, in sample, rollout, step order. */
  steps: RolloutStep[];
  trajectories: TrajectorySummary[];
  metrics: Record<string, number>;
  /** With `dumpPath` and `deferDump`: writes the dump. */
  writeDump?: () => void;
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}

/** Per-batch metrics: counts by end reason, failures, and the flows' own metrics summed and averaged. */
function batchMetrics(
  trajectories: TrajectorySummary[],
  outputs: AgentFlowOutput[],
  steps: RolloutStep[],
): Record<string, number> {
  const metrics: Record<string, number> = {
    'rollout/num_trajectories': trajectories.length,
    'rollout/num_failed': trajectories.filter((t) => t.error).length,
    'rollout/num_steps': steps.length,
    'rollout/steps_per_trajectory': outputs.length ? steps.length / outputs.length : 0,
    'rollout/response_length_mean': steps.length
      ? steps.reduce((s, x) => s + x.responseIds.length, 0) / steps.length
      : 0,
    // Over steps with a finite reward (the trainer drops and counts the others).
    'rollout/reward_mean': mean(steps.map((x) => x.rewardScore).filter(Number.isFinite)),
  };
  // Tool calls, as envs report them in a step's info (ToolEnv: `tool_calls`, `tool_errors`).
  let toolCalls = 0;
  let toolErrors = 0;
  for (const s of steps) {
    const info = s.extra.info as { tool_calls?: unknown; tool_errors?: unknown } | undefined;
    if (Array.isArray(info?.tool_calls)) toolCalls += info.tool_calls.length;
    if (Array.isArray(info?.tool_errors)) toolErrors += info.tool_errors.length;
  }
  metrics['rollout/tool_calls'] = toolCalls;
  metrics['rollout/tool_calls_per_trajectory'] = outputs.length ? toolCalls / outputs.length : 0;
  metrics['rollout/tool_errors'] = toolErrors;
  for (const t of trajectories)
    metrics[`rollout/end_reason/${t.endReason}`] = (metrics[`rollout/end_reason/${t.endReason}`] ?? 0) + 1;
  const sums: Record<string, number> = {};
  for (const out of outputs) for (const [k, v] of Object.entries(out.metrics)) sums[k] = (sums[k] ?? 0) + v;
  for (const [k, v] of Object.entries(sums)) {
    metrics[`flow/${k}/sum`] = v;
    metrics[`flow/${k}/mean`] = v / outputs.length;
  }
  return metrics;
}

/**
 * Runs every sample n times through its flow (picked by `agent_name`) against the generator,
 * with bounded concurrency. A trajectory that fails is recorded (summary, metrics, dump) and left
 * out; the rest of the batch goes on. Only when every trajectory fails does the first error throw,
 * since then the cause is almost surely the setup (an unknown env name, a bad config) rather than data.
 */
export async function runRollout(samples: readonly AgentSample[], opts: RolloutOptions): Promise<RolloutBatch> {
  const config: AgentFlowConfig = { ...defaultAgentFlowConfig, ...opts.config };
  const n = opts.n ?? 1;
  const defaultFlow = opts.defaultAgentFlow ?? 'single_step_agent';
  // Unknown flow names are a setup mistake: fail before any generation.
  const flowClasses = samples.map((s) => agentFlows.get(s.agent_name ?? defaultFlow));
  const ctx: FlowContext = {
    generator: opts.generator,
    tokenizer: opts.tokenizer,
    sampling: opts.sampling,
    config,
    signal: opts.signal,
    ...(opts.policyVersion !== undefined ? { policyVersion: opts.policyVersion } : {}),
  };
  const limit = pLimit(opts.concurrency ?? Number.POSITIVE_INFINITY);
  const total = samples.length * n;
  let ended = 0;
  const end = () => opts.onTrajectoryEnd?.(++ended, total);

  // MCP servers stay connected from one trajectory to the next for the whole batch
  const releaseMcp = mcpServers.hold();
  const jobs = samples.flatMap((sample, sampleIndex) => {
    const groupUid = randomUUID();
    return Array.from({ length: n }, (_, rolloutIndex) => {
      const origin: StepOrigin = {
        trajectoryUid: randomUUID(),
        groupUid,
        sampleIndex,
        rolloutIndex,
        dataSource: sample.data_source,
        agentName: sample.agent_name ?? defaultFlow,
      };
      return limit(async () => {
        let output: AgentFlowOutput | undefined;
        try {
          output = await new flowClasses[sampleIndex]().run(sample, { ...ctx, routeKey: origin.trajectoryUid });
          await scoreTrajectory(sample, output.steps, opts.tokenizer, opts.rewardFnKey, opts.rewardFunction);
          return { origin, sample, output };
        } catch (error) {
          return { origin, sample, error, partial: output };
        } finally {
          end();
        }
      });
    });
  });

  const results = await Promise.all(jobs).finally(releaseMcp);
  const dumpPath = opts.dumpPath;
  const writeDump = dumpPath
    ? () => {
        const dumped = results.map(
          (r): DumpedTrajectory =>
            'error' in r
              ? {
                  origin: r.origin,
                  sample: r.sample,
                  steps: r.partial?.steps ?? [],
                  endReason: 'error',
                  error: errorText(r.error),
                }
              : {
                  origin: r.origin,
                  sample: r.sample,
                  steps: r.output.steps,
                  endReason: r.output.endReason,
                  endDetail: r.output.endDetail,
                },
        );
        writeTrajectoryDump(dumpPath, dumped, { tokenizer: opts.tokenizer, globalStep: opts.dumpStep ?? 0 });
      }
    : undefined;
  const allFailed = results.length > 0 && results.every((r) => 'error' in r);
  if (writeDump && (!opts.deferDump || allFailed)) writeDump();
  if (allFailed) throw (results[0] as { error: unknown }).error;

  const steps: RolloutStep[] = [];
  const outputs: AgentFlowOutput[] = [];
  const trajectories: TrajectorySummary[] = results.map((r) => {
    if ('error' in r) return { ...r.origin, numSteps: 0, endReason: 'error', error: errorText(r.error) };
    const { origin, output } = r;
    outputs.push(output);
    for (const step of output.steps) {
      steps.push({
        ...step,
        rewardScore: step.rewardScore as number,
        trajectoryUid: origin.trajectoryUid,
        groupUid: origin.groupUid,
        sampleIndex: origin.sampleIndex,
        rolloutIndex: origin.rolloutIndex,
      });
    }
    return { ...origin, numSteps: output.steps.length, endReason: output.endReason, endDetail: output.endDetail };
  });
  return {
    steps,
    trajectories,
    metrics: batchMetrics(trajectories, outputs, steps),
    ...(writeDump && opts.deferDump ? { writeDump } : {}),
  };
}
