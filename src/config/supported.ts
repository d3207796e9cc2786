// What `agent-r1 train` cannot do, found before anything loads. Keys that tune machinery agent-r1
// does not have (several processes or GPUs, offloading, vLLM and FSDP knobs, Python code) pass only
// at the value that describes what agent-r1 does (their default here) and are refused at any other;
// values the config accepts but no code implements (an unregistered adv_estimator or loss_mode),
// and combinations that would silently do something else, are refused too. Each refusal is one line
// naming the key, saying why, and what to do instead. Every other key is read by the path
// `agent-r1 train` takes (test/config/key-coverage.test.ts checks both, key by key).
import { advantageEstimators, policyLosses } from '../rl/registries.js';
import { ConfigError } from './errors.js';
import { CRITIC_ESTIMATORS } from './options.js';
import type { AgentR1Config } from './schema.js';
import { DTYPE_NAMES } from './dtype-names.js';

/** What a check may know besides the config: the device the run resolved to. */
export interface CheckContext {
  device?: 'cuda' | 'cpu';
}

/** One thing agent-r1 train refuses: the keys it reads, the check, and overrides that trip it (for tests). */
export interface Limit {
  keys: readonly string[];
  /** The problem (one line, naming the key), or undefined when the config is fine. */
  check(cfg: AgentR1Config, ctx: CheckContext): string | undefined;
  /** Overrides that make `check` refuse (with `exampleContext`). */
  example: readonly string[];
  exampleContext?: CheckContext;
}

/** Reads a dotted key of the resolved config. */
export function configAt(cfg: unknown, key: string): unknown {
  let cur = cfg;
  for (const part of key.split('.'))
    cur = cur === null || typeof cur !== 'object' ? undefined : (cur as Record<string, unknown>)[part];
  return cur;
}

const show = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** `key` passes only at one of `allowed`; any other value is `key=value is not supported: why; fix`. */
function only(key: string, allowed: readonly unknown[], why: string, fix: string, example: unknown): Limit {
  return {
    keys: [key],
    check: (cfg) => {
      const v = configAt(cfg, key);
      return allowed.some((a) => same(a, v)) ? undefined : `${key}=${show(v)} is not supported: ${why}; ${fix}`;
    },
    example: [`${key}=${typeof example === 'string' ? example : JSON.stringify(example)}`],
  };
}

const REMOVE = 'remove the override';
const FP32 = ['fp32', 'float32'];
const DTYPE = DTYPE_NAMES;

/** The machinery keys of one model's fsdp_config (actor, critic). */
function fsdpLimits(prefix: string): Limit[] {
  const why = 'agent-r1 trains on one device in one process (nothing is sharded or offloaded)';
  return [
    only(`${prefix}.param_offload`, [false], why, REMOVE, true),
    only(`${prefix}.optimizer_offload`, [false], why, REMOVE, true),
    only(`${prefix}.offload_policy`, [false], why, REMOVE, true),
    only(`${prefix}.reshard_after_forward`, [true], why, REMOVE, false),
    only(
      `${prefix}.fsdp_size`,
      [-1],
      'with several ranks the optimizer state is sharded over all of them (ZeRO-1, as -1 means); smaller sharding groups (hybrid sharding) are not implemented',
      REMOVE,
      8,
    ),
    only(`${prefix}.forward_prefetch`, [false], why, REMOVE, true),
    only(`${prefix}.mixed_precision.reduce_dtype`, FP32, 'gradients are always reduced in fp32', REMOVE, 'bf16'),
    only(`${prefix}.mixed_precision.buffer_dtype`, FP32, 'buffers are always kept in fp32', REMOVE, 'bf16'),
    {
      keys: [`${prefix}.dtype`, `${prefix}.mixed_precision.param_dtype`],
      check: (cfg) => {
        const dtype = configAt(cfg, `${prefix}.dtype`) as string;
        const param = configAt(cfg, `${prefix}.mixed_precision.param_dtype`) as string | undefined;
        if (param === undefined || DTYPE[param] === DTYPE[dtype]) return undefined;
        return `${prefix}.dtype=${dtype} disagrees with ${prefix}.mixed_precision.param_dtype=${param}: both name the compute dtype; set them alike (or mixed_precision=null to use dtype)`;
      },
      example: [`${prefix}.dtype=fp16`],
    },
  ];
}

/** The machinery keys of one model section (actor_rollout_ref.model, critic.model). */
function modelLimits(prefix: string): Limit[] {
  return [
    only(
      `${prefix}.override_config`,
      [{}],
      'config.json overrides are not applied',
      "edit the model folder's config.json instead",
      { max_position_embeddings: 64 },
    ),
    only(
      `${prefix}.trust_remote_code`,
      [false],
      'no Python model code runs here (Qwen2/2.5, Qwen3 and Llama 3 are built in)',
      REMOVE,
      true,
    ),
    only(
      `${prefix}.external_lib`,
      [null],
      'no Python library is imported here',
      'register the model in code (src/models/registry.ts) instead',
      'my_lib',
    ),
    only(`${prefix}.use_remove_padding`, [true], 'rows are always packed without padding', REMOVE, false),
  ];
}

/** verl's deprecated global micro-batch spelling next to the per-GPU one: on one GPU they are the same number. */
function microBatchPair(globalKey: string, perGpuKey: string): Limit {
  return {
    keys: [globalKey, perGpuKey],
    check: (cfg) => {
      const global = configAt(cfg, globalKey);
      const perGpu = configAt(cfg, perGpuKey);
      if (global === null || perGpu === null || global === perGpu) return undefined;
      return `${globalKey}=${show(global)} and ${perGpuKey}=${show(perGpu)} are both set: on one GPU they are the same number (verl refuses both too); keep only ${perGpuKey}`;
    },
    example: [`${globalKey}=8`, `${perGpuKey}=4`],
  };
}

const CHECKPOINT_PARTS = ['model', 'optimizer', 'extra'];

function checkpointContents(prefix: string): Limit[] {
  return ['save_contents', 'load_contents'].map((leaf) => ({
    keys: [`${prefix}.${leaf}`],
    check: (cfg: AgentR1Config) => {
      const v = configAt(cfg, `${prefix}.${leaf}`) as string[];
      const extra = v.filter((x) => !CHECKPOINT_PARTS.includes(x) && x !== 'hf_model');
      const missing = CHECKPOINT_PARTS.filter((x) => !v.includes(x));
      if (!extra.length && !missing.length) return undefined;
      return (
        `${prefix}.${leaf}=${show(v)} is not supported: a checkpoint always holds the model (a Hugging Face folder), the optimizer and the trainer state together; ` +
        `set it to [model,optimizer,extra] or remove it`
      );
    },
    example: [`${prefix}.${leaf}=[model]`],
  }));
}

/** Everything agent-r1 train refuses. */
export const LIMITS: readonly Limit[] = [
  // ---- data ----
  only(
    'data.tokenizer',
    [null],
    "the tokenizer is the policy's",
    'set actor_rollout_ref.model.tokenizer_path instead',
    '/models/tokenizer',
  ),
  only(
    'data.return_raw_input_ids',
    [false],
    'rows carry no pre-tokenized prompt (each flow renders the chat itself)',
    REMOVE,
    true,
  ),
  only(
    'data.return_raw_chat',
    [true],
    'agent flows always render the raw chat messages themselves (Agent-R1 needs return_raw_chat=True)',
    REMOVE,
    false,
  ),
  only(
    'data.return_full_prompt',
    [false],
    'rows carry no rendered prompt (each flow renders the chat itself)',
    REMOVE,
    true,
  ),
  only('data.dataloader_num_workers', [0], 'rows are read in-process, with no loader workers', REMOVE, 8),
  only('data.filter_overlong_prompts_workers', [1], 'prompts are measured in-process', REMOVE, 4),
  only('data.trust_remote_code', [false], 'no Python code runs here', REMOVE, true),
  // ---- actor, reference, rollout ----
  only(
    'actor_rollout_ref.hybrid_engine',
    [true],
    "the in-process engine always generates with the actor's own weights",
    REMOVE,
    false,
  ),
  ...modelLimits('actor_rollout_ref.model'),
  only(
    'actor_rollout_ref.model.custom_chat_template',
    [null],
    'a chat template given in the config is not applied yet',
    "put the template in the model folder's chat_template.jinja",
    '{{ messages }}',
  ),
  only(
    'actor_rollout_ref.model.use_liger',
    [false],
    'Liger kernels are Python/Triton; the forward here is libtorch',
    REMOVE,
    true,
  ),
  only(
    'actor_rollout_ref.model.use_fused_kernels',
    [false],
    "verl's fused kernels are Python/Triton; the forward here is libtorch",
    REMOVE,
    true,
  ),
  only(
    'actor_rollout_ref.actor.ulysses_sequence_parallel_size',
    [1],
    'one process: no sequence parallelism',
    REMOVE,
    2,
  ),
  only('actor_rollout_ref.actor.use_torch_compile', [false], 'torch.compile is not available here', REMOVE, true),
  only(
    'actor_rollout_ref.actor.entropy_from_logits_with_chunking',
    [false],
    'not implemented (the entropy comes from the full logits of each packed micro-batch)',
    REMOVE,
    true,
  ),
  only(
    'actor_rollout_ref.actor.entropy_checkpointing',
    [false],
    'not implemented (activation checkpointing is model.enable_gradient_checkpointing)',
    REMOVE,
    true,
  ),
  only(
    'actor_rollout_ref.actor.optim.optimizer',
    ['AdamW'],
    "the optimizer is AdamW (libtorch's fused kernel)",
    'remove the override',
    'SGD',
  ),
  only(
    'critic.optim.optimizer',
    ['AdamW'],
    "the optimizer is AdamW (libtorch's fused kernel)",
    'remove the override',
    'SGD',
  ),
  only(
    'actor_rollout_ref.actor.optim.total_training_steps',
    [-1],
    'the trainer fills it in (as verl does)',
    'set trainer.total_training_steps instead',
    100,
  ),
  only(
    'critic.optim.total_training_steps',
    [-1],
    'the trainer fills it in (as verl does)',
    'set trainer.total_training_steps instead',
    100,
  ),
  microBatchPair(
    'actor_rollout_ref.actor.ppo_micro_batch_size',
    'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu',
  ),
  microBatchPair(
    'actor_rollout_ref.ref.log_prob_micro_batch_size',
    'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu',
  ),
  microBatchPair(
    'actor_rollout_ref.rollout.log_prob_micro_batch_size',
    'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu',
  ),
  microBatchPair('critic.ppo_micro_batch_size', 'critic.ppo_micro_batch_size_per_gpu'),
  ...fsdpLimits('actor_rollout_ref.actor.fsdp_config'),
  ...checkpointContents('actor_rollout_ref.actor.checkpoint'),
  only('actor_rollout_ref.actor.checkpoint.async_save', [false], 'checkpoints are written synchronously', REMOVE, true),
  only('actor_rollout_ref.ref.fsdp_config.param_offload', [false], 'one process, nothing offloaded', REMOVE, true),
  only(
    'actor_rollout_ref.ref.fsdp_config.reshard_after_forward',
    [true],
    'one process, nothing sharded',
    REMOVE,
    false,
  ),
  only('actor_rollout_ref.ref.fsdp_config.forward_prefetch', [false], 'one process, nothing sharded', REMOVE, true),
  {
    keys: ['actor_rollout_ref.rollout.name', 'actor_rollout_ref.rollout.server_urls'],
    check: (cfg) => {
      const name = configAt(cfg, 'actor_rollout_ref.rollout.name');
      const urls = (configAt(cfg, 'actor_rollout_ref.rollout.server_urls') ?? []) as unknown[];
      if (name !== null && name !== 'vllm' && name !== 'sglang')
        return `actor_rollout_ref.rollout.name=${show(name)} is not supported: use null (the in-process engine), vllm or sglang (servers at server_urls)`;
      if (name !== null && urls.length === 0)
        return `actor_rollout_ref.rollout.name=${name} needs the servers: set actor_rollout_ref.rollout.server_urls=[http://host:port,...]`;
      if (name === null && urls.length > 0)
        return 'actor_rollout_ref.rollout.server_urls is set but rollout.name is null (the in-process engine); set actor_rollout_ref.rollout.name=vllm or sglang (the API those servers speak) to roll out on them';
      return undefined;
    },
    example: ['actor_rollout_ref.rollout.name=vllm'],
  },
  {
    keys: ['actor_rollout_ref.rollout.async_scheduling', 'actor_rollout_ref.rollout.name'],
    check: (cfg) =>
      configAt(cfg, 'actor_rollout_ref.rollout.async_scheduling') === true &&
      configAt(cfg, 'actor_rollout_ref.rollout.name') !== null
        ? "actor_rollout_ref.rollout.async_scheduling is the in-process engine's; with rollout servers start them with it (vLLM's --async-scheduling) and leave it null or false here"
        : undefined,
    example: [
      'actor_rollout_ref.rollout.async_scheduling=true',
      'actor_rollout_ref.rollout.name=vllm',
      'actor_rollout_ref.rollout.server_urls=[http://localhost:8000]',
    ],
  },
  only('actor_rollout_ref.rollout.mode', ['async'], 'agent flows always run asynchronously', REMOVE, 'sync'),
  only(
    'actor_rollout_ref.rollout.tensor_model_parallel_size',
    [1],
    'one process: no tensor parallelism',
    'set it to 1',
    2,
  ),
  only('actor_rollout_ref.rollout.data_parallel_size', [1], 'one process: no data parallelism', 'set it to 1', 2),
  only(
    'actor_rollout_ref.rollout.enable_chunked_prefill',
    [false],
    'the engine prefills a prompt in one forward (max_num_batched_tokens bounds a batch of prompts)',
    REMOVE,
    true,
  ),
  only(
    'actor_rollout_ref.rollout.enable_prefix_caching',
    [false],
    'the engine keeps no prefix cache across requests (the n samples of one prompt always share its prefill)',
    REMOVE,
    true,
  ),
  only(
    'actor_rollout_ref.rollout.load_format',
    ['dummy'],
    "the engine loads no weights of its own (it shares the actor's)",
    REMOVE,
    'safetensors',
  ),
  only('actor_rollout_ref.rollout.disable_log_stats', [true], 'the engine logs no vLLM stats', REMOVE, false),
  only(
    'actor_rollout_ref.rollout.agent.num_workers',
    [1],
    'agent flows run in one process',
    'set actor_rollout_ref.rollout.agent.concurrency (trajectories at once) instead',
    8,
  ),
  only(
    'actor_rollout_ref.rollout.agent.default_agent_loop',
    [null],
    "verl's agent loops are not agent-r1's flows",
    'set actor_rollout_ref.rollout.agent.default_agent_flow instead',
    'tool_agent',
  ),
  only(
    'actor_rollout_ref.rollout.agent.agent_loop_config_path',
    [null],
    "verl's agent loops are not agent-r1's flows",
    'set actor_rollout_ref.rollout.agent.agent_flow_config_path instead',
    '/tmp/loops.yaml',
  ),
  {
    keys: ['actor_rollout_ref.rollout.dtype'],
    check: (cfg, ctx) => {
      if (ctx.device !== 'cuda') return undefined; // on CPU every model computes in its parameter dtype
      const mp = cfg.actor_rollout_ref.actor.fsdp_config.mixed_precision;
      const compute = DTYPE[mp?.param_dtype ?? cfg.actor_rollout_ref.actor.fsdp_config.dtype];
      const rollout = DTYPE[cfg.actor_rollout_ref.rollout.dtype];
      return rollout === compute
        ? undefined
        : `actor_rollout_ref.rollout.dtype=${cfg.actor_rollout_ref.rollout.dtype} is not supported: the in-process engine generates with the actor's weights in the actor's compute dtype (${compute}); set it to ${compute}`;
    },
    example: ['actor_rollout_ref.rollout.dtype=fp16'],
    exampleContext: { device: 'cuda' },
  },
  // ---- critic ----
  ...modelLimits('critic.model'),
  ...fsdpLimits('critic.model.fsdp_config'),
  ...checkpointContents('critic.checkpoint'),
  only('critic.checkpoint.async_save', [false], 'checkpoints are written synchronously', REMOVE, true),
  only('critic.ulysses_sequence_parallel_size', [1], 'one process: no sequence parallelism', REMOVE, 2),
  {
    keys: ['critic.model.tokenizer_path'],
    check: (cfg) => {
      const m = cfg.actor_rollout_ref.model;
      const actorTokenizer = m.tokenizer_path ?? m.path;
      const t = cfg.critic.model.tokenizer_path;
      if (t === null || t === actorTokenizer || t === m.path) return undefined;
      return `critic.model.tokenizer_path=${t} is not supported: the critic scores the actor's token ids, so its tokenizer is the actor's (${actorTokenizer}); remove it`;
    },
    example: ['critic.model.tokenizer_path=/models/other-tokenizer'],
  },
  {
    keys: ['critic.enable', 'algorithm.adv_estimator'],
    check: (cfg) => {
      const est = cfg.algorithm.adv_estimator;
      const usesValues = CRITIC_ESTIMATORS.includes(est);
      if (cfg.critic.enable === true && !usesValues) {
        return `critic.enable=true is not supported with algorithm.adv_estimator=${est}: ${est} uses no values, so the critic would load and never train; set critic.enable=null (or use gae / token_gae)`;
      }
      if (cfg.critic.enable === false && usesValues) {
        return `critic.enable=false is not supported with algorithm.adv_estimator=${est}: ${est} needs a critic's values (as in Agent-R1); remove critic.enable=false or use a critic-free estimator (grpo, rloo, ...)`;
      }
      return undefined;
    },
    example: ['algorithm.adv_estimator=grpo', 'critic.enable=true'],
  },
  {
    keys: ['trainer.max_critic_ckpt_to_keep'],
    check: (cfg) => {
      const critic = cfg.trainer.max_critic_ckpt_to_keep;
      const actor = cfg.trainer.max_actor_ckpt_to_keep;
      if (critic === null || critic === actor) return undefined;
      return `trainer.max_critic_ckpt_to_keep=${critic} differs from max_actor_ckpt_to_keep=${show(actor)}: the actor and critic of a step are kept together in one global_step folder; set both alike (or only max_actor_ckpt_to_keep)`;
    },
    example: ['trainer.max_critic_ckpt_to_keep=2'],
  },
  // ---- reward, algorithm, trainer ----
  only(
    'reward_model.reward_manager',
    ['naive'],
    "rewards come from envs and reward functions, scoring each trajectory as it finishes (verl's naive manager)",
    'register a reward function (rewardFunctions.register) instead',
    'dapo',
  ),
  only(
    'reward_model.launch_reward_fn_async',
    [false],
    'reward functions already run inside the rollout as trajectories finish',
    REMOVE,
    true,
  ),
  only(
    'reward_model.enable',
    [false],
    'reward models are not supported; rewards come from envs, tools and reward functions',
    REMOVE,
    true,
  ),
  {
    keys: ['algorithm.adv_estimator'],
    check: (cfg) =>
      advantageEstimators.has(cfg.algorithm.adv_estimator)
        ? undefined
        : `algorithm.adv_estimator=${cfg.algorithm.adv_estimator} is not implemented in agent-r1; use one of ${advantageEstimators.names().join(', ')} (or register one with registerAdvantageEstimator from agent-r1/rl)`,
    example: ['algorithm.adv_estimator=remax'],
  },
  {
    keys: ['actor_rollout_ref.actor.policy_loss.loss_mode'],
    check: (cfg) =>
      policyLosses.has(cfg.actor_rollout_ref.actor.policy_loss.loss_mode)
        ? undefined
        : `actor_rollout_ref.actor.policy_loss.loss_mode=${cfg.actor_rollout_ref.actor.policy_loss.loss_mode} is not implemented in agent-r1; use one of ${policyLosses.names().join(', ')} (or register one with registerPolicyLoss from agent-r1/rl)`,
    example: ['actor_rollout_ref.actor.policy_loss.loss_mode=sapo'],
  },
  {
    keys: ['trainer.val_only'],
    check: (cfg) =>
      cfg.trainer.val_only &&
      (cfg.data.val_files === null || (Array.isArray(cfg.data.val_files) && cfg.data.val_files.length === 0))
        ? 'trainer.val_only=true validates and stops, but data.val_files is empty: set data.val_files'
        : undefined,
    example: ['trainer.val_only=true', 'data.val_files=null'],
  },
];

/**
 * Keys that change nothing on one process, whatever their value, each with the reason. They are
 * neither read nor refused; the key-coverage test holds them to this list.
 */
export const NO_EFFECT_ON_ONE_PROCESS: Readonly<Record<string, string>> = {
  'actor_rollout_ref.actor.strategy': 'fsdp and fsdp2 shard over ranks; with one rank both are the plain model',
  'critic.strategy': 'fsdp and fsdp2 shard over ranks; with one rank both are the plain model',
  'trainer.balance_batch':
    "verl's balancing splits the batch into one partition per rank; with one rank that partition is the batch, in order",
};

/** Every problem of the config for `agent-r1 train`, one line each (empty when it can run). */
export function unsupportedSettings(cfg: AgentR1Config, ctx: CheckContext = {}): string[] {
  const out: string[] = [];
  for (const limit of LIMITS) {
    const problem = limit.check(cfg, ctx);
    if (problem) out.push(problem);
  }
  return out;
}

/** Throws a ConfigError listing every problem `unsupportedSettings` finds. */
export function checkTrainConfig(cfg: AgentR1Config, ctx: CheckContext = {}): void {
  const problems = unsupportedSettings(cfg, ctx);
  if (problems.length === 1) throw new ConfigError(problems[0]);
  if (problems.length)
    throw new ConfigError(`the config asks for what agent-r1 train does not do:\n  ${problems.join('\n  ')}`);
}
