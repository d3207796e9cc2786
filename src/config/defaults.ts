// The default config: verl's ppo_trainer.yaml values (with Agent-R1's rollout.agent overrides) for
// the keys agent-r1 carries, plus a few of agent-r1's own (marked "ours"). Written as YAML so the
// interpolations read as verl writes them (`${oc.select:data.max_prompt_length,512}`).
// Keys marked "machinery" tune distributed, vLLM, FSDP or Python machinery agent-r1 does not have:
// each defaults to the value that describes what agent-r1 does (verl's single-process value), and
// any other value is refused by `agent-r1 train` with a line saying why and what to do instead
// (src/config/supported.ts).

export const DEFAULTS_YAML = `
data:
  # machinery: the tokenizer comes from actor_rollout_ref.model (tokenizer_path or path)
  tokenizer: null
  # a parquet or jsonl file, or a list of them
  train_files: ~/data/rlhf/gsm8k/train.parquet
  val_files: ~/data/rlhf/gsm8k/test.parquet
  # -1: every row
  train_max_samples: -1
  val_max_samples: -1
  # the column holding the chat messages
  prompt_key: prompt
  # the column that picks the reward function
  reward_fn_key: data_source
  max_prompt_length: 512
  max_response_length: 512
  # prompts per training step (each rolled out actor_rollout_ref.rollout.n times)
  train_batch_size: 1024
  # validation prompts rolled out at a time; null: the whole validation set in one batch
  val_batch_size: null
  return_raw_input_ids: false
  return_raw_chat: true
  return_full_prompt: false
  # reshuffle the training rows every epoch
  shuffle: true
  # the shuffling seed; null: trainer.seed
  seed: null
  # machinery: rows are read in-process
  dataloader_num_workers: 0
  # shuffle the validation rows (seeded) before validating
  validation_shuffle: false
  # drop rows whose rendered prompt is longer than max_prompt_length
  filter_overlong_prompts: false
  # machinery
  filter_overlong_prompts_workers: 1
  # a first prompt longer than max_prompt_length (filter_overlong_prompts off): error (at load, listing
  # the rows), or cut to max_prompt_length tokens keeping the left end, the right end, or both ends (middle)
  truncation: error
  # machinery: no Python code runs here
  trust_remote_code: false
  # extra chat template variables (e.g. enable_thinking)
  apply_chat_template_kwargs: {}

actor_rollout_ref:
  # machinery: rollout and training always share the weights
  hybrid_engine: true
  # seconds a data-parallel collective (and the ranks' rendezvous) may wait for the other ranks before
  # failing, so a rank that hangs stops the run instead of blocking it (verl's, as torch's timeout)
  nccl_timeout: 600
  model:
    # a local Hugging Face model folder
    path: ~/models/deepseek-llm-7b-chat
    # null: the model's folder
    tokenizer_path: null
    # a Jinja chat template that replaces the tokenizer's
    custom_chat_template: null
    # config.json keys to override
    override_config: {}
    enable_gradient_checkpointing: true
    # machinery: training always packs rows without padding
    use_remove_padding: true
    # machinery
    trust_remote_code: false
    external_lib: null
    use_liger: false
    use_fused_kernels: false
  actor:
    # fsdp or fsdp2: the same on one process
    strategy: fsdp
    # prompts per optimizer step: a mini-batch is ppo_mini_batch_size x rollout.n step rows (verl, Agent-R1)
    ppo_mini_batch_size: 256
    # verl's deprecated global micro batch size (rows): on one GPU it is the per-GPU size
    ppo_micro_batch_size: null
    ppo_micro_batch_size_per_gpu: null
    use_dynamic_bsz: false
    ppo_max_token_len_per_gpu: 16384
    clip_ratio: 0.2
    clip_ratio_low: 0.2
    clip_ratio_high: 0.2
    # dual-clip bound for negative advantages
    clip_ratio_c: 3.0
    policy_loss:
      # vanilla, gspo, reinforce, gpg, cispo, or a registered loss
      loss_mode: vanilla
    # token-mean, seq-mean-token-sum, seq-mean-token-mean or seq-mean-token-sum-norm
    loss_agg_mode: token-mean
    # seq-mean-token-sum-norm's divisor; null: the response length
    loss_scale_factor: null
    entropy_coeff: 0
    # compute the entropy (the actor/entropy metric) even when entropy_coeff is 0
    calculate_entropy: false
    use_kl_loss: false
    kl_loss_coef: 0.001
    # kl (k1), abs, mse (k2), low_var_kl (k3); a + suffix uses k2's gradient
    kl_loss_type: low_var_kl
    ppo_epochs: 1
    # permute the mini-batches' order each ppo epoch (seeded by data_loader_seed)
    shuffle: false
    data_loader_seed: 42
    # verl's legacy spelling of optim.clip_grad (which defaults to it)
    grad_clip: 1.0
    # machinery: no torch.compile here
    use_torch_compile: false
    ulysses_sequence_parallel_size: 1
    entropy_from_logits_with_chunking: false
    entropy_checkpointing: false
    optim:
      optimizer: AdamW
      lr: 1.0e-06
      # used when lr_warmup_steps is not positive
      lr_warmup_steps_ratio: 0.0
      # -1: filled in by the trainer
      total_training_steps: -1
      weight_decay: 0.01
      lr_warmup_steps: -1
      betas: [0.9, 0.999]
      # gradient-norm clipping
      clip_grad: \${oc.select:actor_rollout_ref.actor.grad_clip,1.0}
      min_lr_ratio: 0.0
      # cosine waves over the schedule (0.5: one half-cosine down)
      num_cycles: 0.5
      # constant or cosine
      lr_scheduler_type: constant
      # deprecated spelling of lr_scheduler_type
      warmup_style: null
    fsdp_config:
      # machinery: one process, nothing offloaded or sharded
      param_offload: false
      optimizer_offload: false
      offload_policy: false
      reshard_after_forward: true
      fsdp_size: -1
      forward_prefetch: false
      # the dtype the trained parameters are kept in (the fp32 masters the optimizer updates)
      model_dtype: fp32
      # verl's new-engine spelling of mixed_precision.param_dtype (used when mixed_precision is null; must agree otherwise)
      dtype: bfloat16
      mixed_precision:
        # the dtype forwards and backwards compute in (bf16 copies of the fp32 masters; gradients are
        # accumulated into the masters in fp32). Applied on CUDA only: on CPU compute stays in
        # model_dtype (bf16 matmuls are slow there). null means verl's default, bf16.
        param_dtype: bf16
        # machinery (gradients are reduced and buffers kept in fp32)
        reduce_dtype: fp32
        buffer_dtype: fp32
    checkpoint:
      save_contents: [model, optimizer, extra]
      load_contents: \${.save_contents}
      async_save: false
  ref:
    log_prob_micro_batch_size: null
    log_prob_micro_batch_size_per_gpu: null
    log_prob_use_dynamic_bsz: \${oc.select:actor_rollout_ref.actor.use_dynamic_bsz,false}
    log_prob_max_token_len_per_gpu: \${oc.select:actor_rollout_ref.actor.ppo_max_token_len_per_gpu,16384}
    fsdp_config:
      # machinery
      param_offload: false
      reshard_after_forward: true
      forward_prefetch: false
      model_dtype: fp32
  rollout:
    # null: the in-process engine. vllm / sglang: the servers at server_urls, spoken to through that API (agent-r1
    # serve speaks both); the trainer pushes its weights to them after every update (vLLM: /collective_rpc
    # reload_weights, which needs VLLM_SERVER_DEV_MODE=1; SGLang: update_weights_from_disk). verl: vllm, sglang, hf
    name: null
    # ours: the rollout servers' roots for name=vllm|sglang, e.g. [http://10.0.0.5:8000, http://10.0.0.6:8000];
    # requests are balanced across them, one trajectory's steps stay on one server (prefix cache); a server that
    # stays down is skipped (rollout/servers_down) and the run goes on with the others
    server_urls: []
    # machinery: agent flows always run asynchronously
    mode: async
    temperature: 1.0
    # -1: off
    top_k: -1
    top_p: 1
    # false: greedy
    do_sample: true
    # rollouts per prompt (the group size for grpo)
    n: 1
    prompt_length: \${oc.select:data.max_prompt_length,512}
    response_length: \${oc.select:data.max_response_length,512}
    # the dtype the engine generates in: on CUDA the actor's compute dtype (it shares the actor's weights)
    dtype: bfloat16
    # the fraction of the device's memory the engine may hold, weights included (vLLM's meaning): its
    # paged KV cache takes that share less what the process holds (on the CPU: of the host's memory)
    gpu_memory_utilization: 0.5
    # keep generating past the end-of-sequence token, up to response_length
    ignore_eos: false
    # true: every decode step runs op by op; false: on CUDA the engine replays one CUDA graph per batch-size bucket
    enforce_eager: false
    # the in-process engine queues each decode step before reading the previous one (vLLM's async_scheduling),
    # so the host's work of a step runs while the device computes; the same tokens either way.
    # null: on for an engine on CUDA (where it is measured faster), off on the CPU (nothing to overlap)
    async_scheduling: null
    # release the engine's KV cache during training; it is taken again for the next rollout
    free_cache_engine: true
    tensor_model_parallel_size: 1
    data_parallel_size: 1
    # prompt tokens prefilled in one forward
    max_num_batched_tokens: 8192
    # null: prompt_length + response_length
    max_model_len: null
    # sequences decoded at once
    max_num_seqs: 256
    # machinery: no chunked prefill, no prefix cache across requests (the n samples of a prompt share its
    # prefill); the engine's weights are the actor's (dummy load)
    enable_chunked_prefill: false
    enable_prefix_caching: false
    load_format: dummy
    disable_log_stats: true
    log_prob_micro_batch_size: null
    log_prob_micro_batch_size_per_gpu: null
    log_prob_use_dynamic_bsz: \${oc.select:actor_rollout_ref.actor.use_dynamic_bsz,false}
    log_prob_max_token_len_per_gpu: \${oc.select:actor_rollout_ref.actor.ppo_max_token_len_per_gpu,16384}
    # keep the engine's log-probs of the sampled tokens
    calculate_log_probs: false
    # sampling for validation
    val_kwargs:
      top_k: -1
      top_p: 1.0
      temperature: 0
      n: 1
      do_sample: false
    agent:
      # machinery: flows run in one process (actor_rollout_ref.rollout.agent.concurrency sets how many at once)
      num_workers: 1
      # the flow for rows without agent_name
      default_agent_flow: single_step_agent
      # a YAML list of {name, ...env_kwargs defaults}, as Agent-R1 reads it
      agent_flow_config_path: null
      max_steps: 10
      skip_special_tokens: true
      # ours: default env_kwargs for every row (a row's own env_kwargs win)
      env_kwargs: {}
      # ours: MCP servers by name, {name: {command, args, env, cwd} or {url, headers}}; env_kwargs.mcp_servers
      # (a row's or the defaults') lists names from here: a dataset row cannot give a command
      mcp_servers: {}
      # ours: trajectories rolled out at once; null: the whole batch (the engine's max_num_seqs bounds its batch)
      concurrency: null
      # machinery: verl's agent loop spellings; use default_agent_flow / agent_flow_config_path
      default_agent_loop: null
      agent_loop_config_path: null

critic:
  # null: on exactly when algorithm.adv_estimator needs values (gae, token_gae)
  enable: null
  # fsdp or fsdp2: the same on one process
  strategy: fsdp
  optim:
    optimizer: AdamW
    lr: 1.0e-05
    lr_warmup_steps_ratio: 0.0
    total_training_steps: -1
    weight_decay: 0.01
    lr_warmup_steps: -1
    betas: [0.9, 0.999]
    clip_grad: \${oc.select:critic.grad_clip,1.0}
    min_lr_ratio: 0.0
    num_cycles: 0.5
    lr_scheduler_type: constant
    warmup_style: null
  model:
    # the critic's Hugging Face folder (a value head is added when it has none); default: the actor's
    path: \${oc.select:actor_rollout_ref.model.path,"~/models/deepseek-llm-7b-chat"}
    tokenizer_path: \${oc.select:actor_rollout_ref.model.path,"~/models/deepseek-llm-7b-chat"}
    override_config: {}
    external_lib: \${oc.select:actor_rollout_ref.model.external_lib,null}
    trust_remote_code: \${oc.select:actor_rollout_ref.model.trust_remote_code,false}
    enable_gradient_checkpointing: true
    # machinery: rows are always packed without padding
    use_remove_padding: true
    fsdp_config:
      param_offload: false
      optimizer_offload: false
      offload_policy: false
      reshard_after_forward: true
      fsdp_size: -1
      forward_prefetch: false
      model_dtype: fp32
      dtype: bfloat16
      # as actor_rollout_ref.actor.fsdp_config.mixed_precision: param_dtype is the compute dtype (CUDA only)
      mixed_precision:
        param_dtype: bf16
        reduce_dtype: fp32
        buffer_dtype: fp32
  ppo_mini_batch_size: \${oc.select:actor_rollout_ref.actor.ppo_mini_batch_size,256}
  ppo_micro_batch_size: null
  ppo_micro_batch_size_per_gpu: \${oc.select:.ppo_micro_batch_size,null}
  use_dynamic_bsz: \${oc.select:actor_rollout_ref.actor.use_dynamic_bsz,false}
  ppo_max_token_len_per_gpu: 32768
  forward_max_token_len_per_gpu: \${.ppo_max_token_len_per_gpu}
  forward_micro_batch_size_per_gpu: \${oc.select:.ppo_micro_batch_size_per_gpu,null}
  ppo_epochs: \${oc.select:actor_rollout_ref.actor.ppo_epochs,1}
  shuffle: \${oc.select:actor_rollout_ref.actor.shuffle,false}
  data_loader_seed: 42
  cliprange_value: 0.5
  loss_agg_mode: \${oc.select:actor_rollout_ref.actor.loss_agg_mode,token-mean}
  grad_clip: 1.0
  ulysses_sequence_parallel_size: 1
  checkpoint:
    save_contents: [model, optimizer, extra]
    load_contents: \${.save_contents}
    async_save: false

custom_reward_function:
  # a .ts or .js module whose export 'name' scores every trajectory in place of the data_source's
  # reward function; it is called with one object: { dataSource, solutionStr, groundTruth, extraInfo, sample, steps }
  path: null
  name: compute_score

reward_model:
  # reward models are not supported: rewards come from envs, tools and reward functions
  enable: false
  # machinery: naive (reward functions score each trajectory as it finishes)
  reward_manager: naive
  launch_reward_fn_async: false

algorithm:
  gamma: 1.0
  lam: 1.0
  # gae, token_gae, grpo, rloo, reinforce_plus_plus, reinforce_plus_plus_baseline, gigpo, or a registered one
  adv_estimator: gae
  # false: Dr.GRPO (no division by the group's std)
  norm_adv_by_std_in_grpo: true
  use_kl_in_reward: false
  # the KL estimator in the reward: kl (k1), abs, mse (k2), low_var_kl (k3)
  kl_penalty: kl
  kl_ctrl:
    # fixed or adaptive
    type: fixed
    kl_coef: 0.001
    horizon: 10000
    target_kl: 0.1
  # verl-agent's GiGPO options
  gigpo:
    step_advantage_w: 1.0
    # mean_std_norm or mean_norm
    mode: mean_std_norm
    # ours: trajectory (each trajectory once) or step (verl-agent's: every step row)
    episode_stats: trajectory

trainer:
  # one process: verl's balancing leaves a single partition in batch order (no effect)
  balance_batch: true
  total_epochs: 30
  # null: total_epochs times the steps in one epoch
  total_training_steps: null
  project_name: verl_examples
  experiment_name: gsm8k
  # console, file (JSON Lines at $VERL_FILE_LOGGER_PATH or <project>/<experiment>.jsonl), tensorboard
  # (event files in $TENSORBOARD_DIR or tensorboard_log/<project>/<experiment>); verl's default adds wandb,
  # which agent-r1 does not have
  logger: [console]
  # print this many validation samples (input, output, score) after each validation
  log_val_generations: 0
  # each step's trajectories as JSON Lines (<dir>/<global_step>.jsonl; training steps also get
  # <step>.advantages.jsonl), kept by default under the run's folder for \`agent-r1 dashboard\`; null: none
  # (ours: verl's default is null, which writes none)
  rollout_data_dir: \${trainer.default_local_dir}/rollouts
  validation_data_dir: \${trainer.default_local_dir}/validation
  # data-parallel ranks: agent-r1 train starts n_gpus_per_node ranks on one machine (Gloo on CPU, NCCL on CUDA);
  # with nnodes > 1 a launcher (torchrun, Slurm) starts them and sets RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
  nnodes: 1
  n_gpus_per_node: 1
  # -1: never
  save_freq: -1
  # auto, disable or resume_path
  resume_mode: auto
  resume_from_path: null
  val_before_train: true
  val_only: false
  # -1: never
  test_freq: -1
  critic_warmup: 0
  default_local_dir: checkpoints/\${trainer.project_name}/\${trainer.experiment_name}
  max_actor_ckpt_to_keep: null
  max_critic_ckpt_to_keep: null
  # cuda or cpu: where the models, the engine and the updates run (cuda falls back to cpu, with a note, when no GPU is there)
  device: cuda
  # ours: seeds libtorch, sampling and (when data.seed is null) the data order
  seed: 42
`;
