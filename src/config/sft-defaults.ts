// The default SFT config: verl's sft_trainer.yaml values for the keys agent-r1 sft carries, plus a
// few of agent-r1's own (marked "ours"). Every key here is read by agent-r1 sft; keys of verl's that
// agent-r1 has no machinery for are not here, so setting one is an "unknown config key" error.
// Keys whose schema admits a single value (lora_rank: 0) say so when given another.

export const SFT_DEFAULTS_YAML = `
data:
  # SFT rows (a parquet or jsonl file, or a list of them); see agent-r1 sft --help for the row format
  train_files: ~/data/gsm8k/train.parquet
  val_files: ~/data/gsm8k/test.parquet
  # -1: every row
  train_max_samples: -1
  val_max_samples: -1
  # step rows (one per assistant turn) per optimizer step
  train_batch_size: 256
  # step rows per forward/backward (packed together when use_remove_padding); also the validation batch
  micro_batch_size_per_gpu: 4
  # verl's deprecated spelling: must stay null (set micro_batch_size_per_gpu)
  micro_batch_size: null
  # multi-turn rows only: the conversation is in messages_key; single-turn (prompt_key/response_key) is not supported
  multiturn:
    enable: true
    messages_key: messages
    # plain-chat rows (no agent_name): the column with the tool schemas given to the chat template
    tools_key: tools
    # plain-chat rows: the column with a per-row enable_thinking (true/false) for the chat template
    enable_thinking_key: enable_thinking
  # ours: the column holding an agent row's first observation (Agent-R1 rows: prompt), as data.prompt_key in agent-r1 train
  prompt_key: prompt
  # the most tokens (prompt + response) of one step row
  max_length: 1024
  # a longer step row: error (stop at load), left (cut the prompt's start) or right (cut the response's end)
  truncation: error
  # chat template variables for every prompt (e.g. enable_thinking: false), as agent-r1 train's data.apply_chat_template_kwargs
  apply_chat_template_kwargs: {}
  # ours: default env_kwargs for agent rows (the row's own win), as agent-r1 train's actor_rollout_ref.rollout.agent.env_kwargs
  env_kwargs: {}
  # ours: reshuffle the step rows every epoch
  shuffle: true
  # ours: the shuffling seed; null: trainer.seed
  seed: null

model:
  # the local Hugging Face model folder to start from (config.json, model.safetensors, tokenizer files)
  partial_pretrain: ~/models/gemma-1.1-7b-it
  enable_gradient_checkpointing: true
  # must be 0 (LoRA is not supported)
  lora_rank: 0
  fsdp_config:
    # the dtype parameters are kept and trained in
    model_dtype: fp32

optim:
  # must be AdamW
  optimizer: AdamW
  lr: 1e-5
  betas: [0.9, 0.95]
  weight_decay: 0.01
  # warmup steps as a fraction of the total (used when lr_warmup_steps is -1)
  lr_warmup_steps_ratio: 0.1
  # -1: use lr_warmup_steps_ratio
  lr_warmup_steps: -1
  # gradient-norm clipping
  clip_grad: 1.0
  # cosine or constant (after the linear warmup)
  lr_scheduler: cosine
  # cosine: the final lr as a fraction of lr
  min_lr_ratio: 0.0

# ours default true (verl: false): pack a micro-batch's rows into one forward; false: one row per forward
use_remove_padding: true

trainer:
  default_local_dir: checkpoints/\${trainer.project_name}/\${trainer.experiment_name}
  project_name: gsm8k-sft
  experiment_name: test
  total_epochs: 4
  # null: epochs x step rows per epoch / train_batch_size
  total_training_steps: null
  # console (a line per step), file (verl's JSON Lines at $VERL_FILE_LOGGER_PATH or <project_name>/<experiment_name>.jsonl),
  # tensorboard (event files in $TENSORBOARD_DIR or tensorboard_log/<project_name>/<experiment_name>); verl: [console, wandb].
  # Metrics always go to <default_local_dir>/sft_metrics.jsonl as well.
  logger: [console]
  seed: 1
  # save global_step_N every N steps (-1: only at the end; the last step is always saved)
  save_freq: -1
  # validation loss every N steps (-1: only at the end)
  test_freq: -1
  # null: keep every checkpoint
  max_ckpt_to_keep: null
  # cuda falls back to cpu (with a note) when there is no GPU
  device: cuda
`;
