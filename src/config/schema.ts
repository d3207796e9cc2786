// The keys agent-r1 train carries, with their types (zod). Objects are loose: keys a user adds with
// Hydra's `+key=value` pass through untouched. Leaves come from leaves.ts.
import { z } from 'zod';
import {
  DTYPES,
  bool,
  files,
  filesOrNull,
  int,
  intOrNull,
  map,
  nonNeg,
  num,
  oneOf,
  pos,
  str,
  strList,
  strOrNull,
} from './leaves.js';

/** trainer.logger names agent-r1 writes: verl's console, file (JSON Lines) and tensorboard (event files). */
export const LOGGERS = ['console', 'file', 'tensorboard'] as const;
const AGG_MODES = ['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean', 'seq-mean-token-sum-norm'] as const;
const KL_NAMES = [
  'kl',
  'k1',
  'abs',
  'mse',
  'k2',
  'low_var_kl',
  'k3',
  'kl+',
  'k1+',
  'abs+',
  'mse+',
  'k2+',
  'low_var_kl+',
  'k3+',
] as const;

const optim = () =>
  z.looseObject({
    optimizer: oneOf(['AdamW']),
    lr: nonNeg(),
    lr_warmup_steps_ratio: z.number().min(0).max(1).describe('a number in [0, 1]'),
    total_training_steps: int(),
    weight_decay: nonNeg(),
    lr_warmup_steps: intOrNull(),
    betas: z.tuple([z.number(), z.number()]).describe('two numbers, e.g. [0.9,0.999]'),
    clip_grad: nonNeg(),
    min_lr_ratio: z.number().min(0).max(1).describe('a number in [0, 1]'),
    num_cycles: num(),
    lr_scheduler_type: oneOf(['constant', 'cosine']),
    warmup_style: oneOf(['constant', 'cosine']).nullable().describe('constant, cosine or null'),
  });

const fsdp = () =>
  z.looseObject({
    param_offload: bool(),
    optimizer_offload: bool(),
    offload_policy: bool(),
    reshard_after_forward: bool(),
    fsdp_size: int(),
    forward_prefetch: bool(),
    model_dtype: oneOf(DTYPES),
    dtype: oneOf(DTYPES),
    mixed_precision: z
      .looseObject({
        param_dtype: oneOf(DTYPES),
        reduce_dtype: oneOf(DTYPES),
        buffer_dtype: oneOf(DTYPES),
      })
      .nullable(),
  });

const strMap = () => z.record(z.string(), z.string());
const mcpServer = () =>
  z
    .union(
      [
        z.strictObject({
          command: z.string(),
          args: z.array(z.string()).optional(),
          env: strMap().optional(),
          cwd: z.string().optional(),
        }),
        z.strictObject({ url: z.string(), headers: strMap().optional() }),
      ],
      { error: '{command, args, env, cwd} (a stdio server) or {url, headers} (Streamable HTTP)' },
    )
    .describe('{command, args, env, cwd} (a stdio server) or {url, headers} (Streamable HTTP)');

const checkpoint = () =>
  z.looseObject({
    save_contents: strList(),
    load_contents: strList(),
    async_save: bool(),
  });

export const configSchema = z.looseObject({
  data: z.looseObject({
    tokenizer: strOrNull(),
    train_files: files(),
    val_files: filesOrNull(),
    train_max_samples: int(-1),
    val_max_samples: int(-1),
    prompt_key: str(),
    reward_fn_key: str(),
    max_prompt_length: int(1),
    max_response_length: int(1),
    train_batch_size: int(1),
    val_batch_size: intOrNull(1),
    return_raw_input_ids: bool(),
    return_raw_chat: bool(),
    return_full_prompt: bool(),
    shuffle: bool(),
    seed: intOrNull(),
    dataloader_num_workers: int(0),
    validation_shuffle: bool(),
    filter_overlong_prompts: bool(),
    filter_overlong_prompts_workers: int(1),
    truncation: oneOf(['error', 'left', 'right', 'middle']),
    trust_remote_code: bool(),
    apply_chat_template_kwargs: map(),
  }),
  actor_rollout_ref: z.looseObject({
    hybrid_engine: bool(),
    nccl_timeout: pos(),
    model: z.looseObject({
      path: str(),
      tokenizer_path: strOrNull(),
      custom_chat_template: strOrNull(),
      override_config: map(),
      enable_gradient_checkpointing: bool(),
      use_remove_padding: bool(),
      trust_remote_code: bool(),
      external_lib: strOrNull(),
      use_liger: bool(),
      use_fused_kernels: bool(),
    }),
    actor: z.looseObject({
      strategy: oneOf(['fsdp', 'fsdp2']),
      ppo_mini_batch_size: int(1),
      ppo_micro_batch_size: intOrNull(1),
      ppo_micro_batch_size_per_gpu: intOrNull(1),
      use_dynamic_bsz: bool(),
      ppo_max_token_len_per_gpu: int(1),
      clip_ratio: nonNeg(),
      clip_ratio_low: nonNeg().nullable().describe('a number >= 0 or null (null: clip_ratio)'),
      clip_ratio_high: nonNeg().nullable().describe('a number >= 0 or null (null: clip_ratio)'),
      clip_ratio_c: z.number().gt(1).describe('a number > 1'),
      policy_loss: z.looseObject({ loss_mode: str() }),
      loss_agg_mode: oneOf(AGG_MODES),
      loss_scale_factor: pos().nullable().describe('a number > 0 or null'),
      entropy_coeff: num(),
      calculate_entropy: bool(),
      use_kl_loss: bool(),
      kl_loss_coef: nonNeg(),
      kl_loss_type: oneOf(KL_NAMES),
      ppo_epochs: int(1),
      shuffle: bool(),
      data_loader_seed: int(),
      grad_clip: nonNeg(),
      use_torch_compile: bool(),
      ulysses_sequence_parallel_size: int(1),
      entropy_from_logits_with_chunking: bool(),
      entropy_checkpointing: bool(),
      optim: optim(),
      fsdp_config: fsdp(),
      checkpoint: checkpoint(),
    }),
    ref: z.looseObject({
      log_prob_micro_batch_size: intOrNull(1),
      log_prob_micro_batch_size_per_gpu: intOrNull(1),
      log_prob_use_dynamic_bsz: bool(),
      log_prob_max_token_len_per_gpu: int(1),
      fsdp_config: z.looseObject({
        param_offload: bool(),
        reshard_after_forward: bool(),
        forward_prefetch: bool(),
        model_dtype: oneOf(DTYPES),
      }),
    }),
    rollout: z.looseObject({
      name: strOrNull(),
      server_urls: z.array(z.string().url().describe('a URL such as http://10.0.0.5:30000')),
      mode: oneOf(['async', 'sync']),
      temperature: nonNeg(),
      top_k: int(-1),
      top_p: z.number().gt(0).max(1).describe('a number in (0, 1]'),
      do_sample: bool(),
      n: int(1),
      prompt_length: int(1),
      response_length: int(1),
      dtype: oneOf(DTYPES),
      gpu_memory_utilization: z.number().gt(0).max(1).describe('a number in (0, 1]'),
      ignore_eos: bool(),
      enforce_eager: bool(),
      async_scheduling: bool().nullable().describe('true, false or null (null: on for an engine on CUDA)'),
      free_cache_engine: bool(),
      tensor_model_parallel_size: int(1),
      data_parallel_size: int(1),
      max_num_batched_tokens: int(1),
      max_model_len: intOrNull(1),
      max_num_seqs: int(1),
      enable_chunked_prefill: bool(),
      enable_prefix_caching: bool(),
      load_format: str(),
      disable_log_stats: bool(),
      log_prob_micro_batch_size: intOrNull(1),
      log_prob_micro_batch_size_per_gpu: intOrNull(1),
      log_prob_use_dynamic_bsz: bool(),
      log_prob_max_token_len_per_gpu: int(1),
      calculate_log_probs: bool(),
      val_kwargs: z.looseObject({
        top_k: int(-1),
        top_p: z.number().gt(0).max(1).describe('a number in (0, 1]'),
        temperature: nonNeg(),
        n: int(1),
        do_sample: bool(),
      }),
      agent: z.looseObject({
        num_workers: int(1),
        default_agent_flow: str(),
        agent_flow_config_path: strOrNull(),
        max_steps: int(1),
        skip_special_tokens: bool(),
        env_kwargs: map(),
        mcp_servers: z
          .record(z.string(), mcpServer())
          .describe(
            'a mapping of server name to {command, args, env, cwd} (stdio) or {url, headers} (Streamable HTTP)',
          ),
        concurrency: intOrNull(1),
        default_agent_loop: strOrNull(),
        agent_loop_config_path: strOrNull(),
      }),
    }),
  }),
  critic: z.looseObject({
    enable: bool().nullable().describe('true, false or null (null: on for gae and token_gae)'),
    strategy: oneOf(['fsdp', 'fsdp2']),
    optim: optim(),
    model: z.looseObject({
      path: str(),
      tokenizer_path: strOrNull(),
      override_config: map(),
      external_lib: strOrNull(),
      trust_remote_code: bool(),
      enable_gradient_checkpointing: bool(),
      use_remove_padding: bool(),
      fsdp_config: fsdp(),
    }),
    ppo_mini_batch_size: int(1),
    ppo_micro_batch_size: intOrNull(1),
    ppo_micro_batch_size_per_gpu: intOrNull(1),
    use_dynamic_bsz: bool(),
    ppo_max_token_len_per_gpu: int(1),
    forward_max_token_len_per_gpu: int(1),
    forward_micro_batch_size_per_gpu: intOrNull(1),
    ppo_epochs: int(1),
    shuffle: bool(),
    data_loader_seed: int(),
    cliprange_value: nonNeg(),
    loss_agg_mode: oneOf(AGG_MODES),
    grad_clip: nonNeg(),
    ulysses_sequence_parallel_size: int(1),
    checkpoint: checkpoint(),
  }),
  custom_reward_function: z.looseObject({
    path: strOrNull(),
    name: str(),
  }),
  reward_model: z.looseObject({
    enable: z
      .literal(false)
      .describe('false (reward models are not supported; rewards come from envs, tools and reward functions)'),
    reward_manager: str(),
    launch_reward_fn_async: bool(),
  }),
  algorithm: z.looseObject({
    gamma: z.number().min(0).max(1).describe('a number in [0, 1]'),
    lam: z.number().min(0).max(1).describe('a number in [0, 1]'),
    adv_estimator: str(),
    norm_adv_by_std_in_grpo: bool(),
    use_kl_in_reward: bool(),
    kl_penalty: oneOf(KL_NAMES),
    kl_ctrl: z.looseObject({
      type: oneOf(['fixed', 'adaptive']),
      kl_coef: nonNeg(),
      horizon: pos(),
      target_kl: pos(),
    }),
    gigpo: z.looseObject({
      step_advantage_w: num(),
      mode: oneOf(['mean_std_norm', 'mean_norm']),
      episode_stats: oneOf(['trajectory', 'step']),
    }),
  }),
  trainer: z.looseObject({
    balance_batch: bool(),
    total_epochs: int(1),
    total_training_steps: intOrNull(1),
    project_name: str(),
    experiment_name: str(),
    logger: z
      .union([oneOf(LOGGERS), z.array(oneOf(LOGGERS))])
      .describe(
        `${LOGGERS.join(', ')} or a list of them, e.g. [console,tensorboard] (wandb, swanlab, mlflow, clearml, trackio and vemlp_wandb are not supported: use file or tensorboard)`,
      ),
    log_val_generations: int(0),
    rollout_data_dir: strOrNull(),
    validation_data_dir: strOrNull(),
    nnodes: int(1),
    n_gpus_per_node: int(1),
    save_freq: int(-1),
    resume_mode: oneOf(['auto', 'disable', 'resume_path']),
    resume_from_path: strOrNull(),
    val_before_train: bool(),
    val_only: bool(),
    test_freq: int(-1),
    critic_warmup: int(0),
    default_local_dir: str(),
    max_actor_ckpt_to_keep: intOrNull(1),
    max_critic_ckpt_to_keep: intOrNull(1),
    device: oneOf(['cuda', 'cpu']),
    seed: int(),
  }),
});

/** The resolved config, with verl's snake_case keys. Only `src/config/` reads it; other layers take the camelCase options `toTrainerOptionsInput` (and the loaders' `to*Options`) make. */
export type AgentR1Config = z.infer<typeof configSchema>;

type Shape = Record<string, z.ZodType>;

function unwrap(s: z.ZodType): z.ZodType {
  let cur: z.ZodType = s;
  while (cur instanceof z.ZodNullable || cur instanceof z.ZodOptional || cur instanceof z.ZodDefault)
    cur = (cur as z.ZodNullable<z.ZodType>).unwrap();
  return cur;
}

/** The schema at a dotted path (undefined past a leaf or for a key the schema lacks), in `root` (the RL config's by default). */
export function schemaAt(path: readonly string[], root: z.ZodType = configSchema): z.ZodType | undefined {
  let cur: z.ZodType = root;
  for (const key of path) {
    const obj = unwrap(cur);
    if (!(obj instanceof z.ZodObject)) return undefined;
    const next = (obj.shape as Shape)[key];
    if (!next) return undefined;
    cur = next;
  }
  return cur;
}

/** Whether the schema holds an object (a section) at this path. */
export function isSection(schema: z.ZodType | undefined): boolean {
  return schema !== undefined && unwrap(schema) instanceof z.ZodObject;
}

/** Whether the schema holds a free-form mapping at this path (any keys below it are fine). */
export function isOpenMap(schema: z.ZodType | undefined): boolean {
  return schema !== undefined && unwrap(schema) instanceof z.ZodRecord;
}

/** Every dotted key the schema `root` (the RL config's by default) knows (leaves and sections). */
export function knownKeys(root: z.ZodType = configSchema): string[] {
  const out: string[] = [];
  const walk = (s: z.ZodType, prefix: string) => {
    const obj = unwrap(s);
    if (!(obj instanceof z.ZodObject)) return;
    for (const [k, v] of Object.entries(obj.shape as Shape)) {
      const path = prefix ? `${prefix}.${k}` : k;
      out.push(path);
      walk(v, path);
    }
  };
  walk(root, '');
  return out;
}
