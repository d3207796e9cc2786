// The defaults are verl's (ppo_trainer.yaml, with Agent-R1's rollout.agent overrides): values read
// from verl's and Agent-R1's config files, written here as literals.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { configSchema, defaultConfigTree, knownKeys, loadConfig } from '../../src/config/index.js';

describe('defaults', () => {
  const c = loadConfig();

  it("equal verl's ppo_trainer.yaml for the keys agent-r1 carries", () => {
    // data
    assert.equal(c.data.train_batch_size, 1024);
    assert.equal(c.data.max_prompt_length, 512);
    assert.equal(c.data.max_response_length, 512);
    assert.equal(c.data.prompt_key, 'prompt');
    assert.equal(c.data.reward_fn_key, 'data_source');
    assert.equal(c.data.return_raw_chat, true);
    assert.equal(c.data.shuffle, true);
    assert.equal(c.data.truncation, 'error');
    assert.equal(c.data.filter_overlong_prompts, false);
    assert.equal(c.data.train_files, '~/data/rlhf/gsm8k/train.parquet');
    // actor
    const a = c.actor_rollout_ref.actor;
    assert.equal(a.optim.lr, 1e-6);
    assert.equal(a.optim.weight_decay, 0.01);
    assert.deepEqual(a.optim.betas, [0.9, 0.999]);
    assert.equal(a.optim.lr_warmup_steps, -1);
    assert.equal(a.optim.lr_warmup_steps_ratio, 0);
    assert.equal(a.optim.lr_scheduler_type, 'constant');
    assert.equal(a.ppo_mini_batch_size, 256);
    assert.equal(a.ppo_micro_batch_size_per_gpu, null);
    assert.equal(a.ppo_epochs, 1);
    assert.equal(a.clip_ratio, 0.2);
    assert.equal(a.clip_ratio_low, 0.2);
    assert.equal(a.clip_ratio_high, 0.2);
    assert.equal(a.clip_ratio_c, 3.0);
    assert.equal(a.loss_agg_mode, 'token-mean');
    assert.equal(a.policy_loss.loss_mode, 'vanilla');
    assert.equal(a.entropy_coeff, 0);
    assert.equal(a.use_kl_loss, false);
    assert.equal(a.kl_loss_coef, 0.001);
    assert.equal(a.kl_loss_type, 'low_var_kl');
    assert.equal(a.grad_clip, 1.0);
    assert.equal(a.ppo_max_token_len_per_gpu, 16384);
    assert.equal(a.data_loader_seed, 42);
    // model
    assert.equal(c.actor_rollout_ref.model.path, '~/models/deepseek-llm-7b-chat');
    assert.equal(c.actor_rollout_ref.model.enable_gradient_checkpointing, true);
    // rollout
    const r = c.actor_rollout_ref.rollout;
    assert.equal(r.temperature, 1.0);
    assert.equal(r.top_k, -1);
    assert.equal(r.top_p, 1);
    assert.equal(r.n, 1);
    assert.equal(r.do_sample, true);
    assert.equal(r.prompt_length, 512);
    assert.equal(r.response_length, 512);
    assert.equal(r.gpu_memory_utilization, 0.5);
    assert.equal(r.val_kwargs.temperature, 0);
    assert.equal(r.val_kwargs.do_sample, false);
    // Agent-R1's rollout.agent overrides
    assert.equal(r.agent.default_agent_flow, 'single_step_agent');
    assert.equal(r.agent.max_steps, 10);
    assert.equal(r.agent.skip_special_tokens, true);
    assert.equal(r.agent.num_workers, 1); // Agent-R1: 8 worker processes; flows run in one process here (src/config/supported.ts)
    assert.equal(r.agent.agent_flow_config_path, null);
    // critic
    assert.equal(c.critic.optim.lr, 1e-5);
    assert.equal(c.critic.cliprange_value, 0.5);
    assert.equal(c.critic.ppo_mini_batch_size, 256);
    assert.equal(c.critic.ppo_max_token_len_per_gpu, 32768);
    assert.equal(c.critic.forward_max_token_len_per_gpu, 32768);
    assert.equal(c.critic.loss_agg_mode, 'token-mean');
    // algorithm
    assert.equal(c.algorithm.adv_estimator, 'gae');
    assert.equal(c.algorithm.gamma, 1.0);
    assert.equal(c.algorithm.lam, 1.0);
    assert.equal(c.algorithm.norm_adv_by_std_in_grpo, true);
    assert.equal(c.algorithm.use_kl_in_reward, false);
    assert.equal(c.algorithm.kl_penalty, 'kl');
    assert.deepEqual({ ...c.algorithm.kl_ctrl }, { type: 'fixed', kl_coef: 0.001, horizon: 10000, target_kl: 0.1 });
    // verl-agent's GiGPO defaults
    assert.equal(c.algorithm.gigpo.step_advantage_w, 1.0);
    assert.equal(c.algorithm.gigpo.mode, 'mean_std_norm');
    // trainer
    assert.equal(c.trainer.total_epochs, 30);
    assert.equal(c.trainer.total_training_steps, null);
    assert.equal(c.trainer.save_freq, -1);
    assert.equal(c.trainer.test_freq, -1);
    assert.equal(c.trainer.project_name, 'verl_examples');
    assert.equal(c.trainer.experiment_name, 'gsm8k');
    assert.deepEqual(c.trainer.logger, ['console'], 'verl adds wandb, which agent-r1 refuses');
    assert.equal(c.trainer.critic_warmup, 0);
    assert.equal(c.trainer.val_before_train, true);
    assert.equal(c.trainer.resume_mode, 'auto');
    assert.equal(c.trainer.default_local_dir, 'checkpoints/verl_examples/gsm8k');
  });

  it('every known key has a default, and the defaults pass the schema', () => {
    const tree = defaultConfigTree();
    for (const key of knownKeys()) {
      let node: unknown = tree;
      for (const part of key.split('.')) node = (node as Record<string, unknown>)[part];
      assert.notEqual(node, undefined, `no default for ${key}`);
    }
    assert.equal(configSchema.safeParse(c).success, true);
  });

  it('loading twice gives equal, independent configs', () => {
    const a = loadConfig();
    a.actor_rollout_ref.rollout.n = 99;
    assert.equal(loadConfig().actor_rollout_ref.rollout.n, 1);
  });
});
