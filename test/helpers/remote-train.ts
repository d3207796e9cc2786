// The config of a small `agent-r1 train` run (the gsm8k tool recipe, 2 prompts x 2 samples, 8
// response tokens) that rolls out on servers, and what the remote-rollout tests check after it:
// they train it against local `agent-r1 serve` instances speaking vLLM's or SGLang's API.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as torch from '../../src/torch/index.js';
import { type CausalLM, loadCausalLM } from '../../src/models/index.js';
import { Engine } from '../../src/engine/index.js';
import { type ServingModel, startServing } from '../../src/cli/serve.js';
import { trainerFromConfig } from '../../src/cli/training-run.js';
import { type AgentR1Config, loadConfig } from '../../src/config/index.js';
import { gsm8kRowsFromFile, writeRows } from '../../src/data/index.js';
import { writeTinyQwen3 } from './tiny-qwen3.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A served model's host root: SGLang's routes live there, the OpenAI ones (and vLLM's) under /v1. */
export const hostRoot = (s: ServingModel) => s.url.replace(/\/v1$/, '');

/** Two tiny Qwen3s (seeds 0 and 1) in a fresh folder, and `agent-r1 serve` over the first (CPU). */
export async function servedTinyModels(
  prefix: string,
): Promise<{ dir: string; modelA: string; modelB: string; server: ServingModel }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const modelA = writeTinyQwen3(join(dir, 'a'), { hidden: 32, seed: 0 });
  const modelB = writeTinyQwen3(join(dir, 'b'), { hidden: 32, seed: 1 });
  const server = await startServing(modelA, { port: 0, device: 'cpu', maxNumSeqs: 8, maxModelLen: 1100 });
  return { dir, modelA, modelB, server };
}

/** Closes what `servedTinyModels` made (either part may be missing when its setup failed). */
export async function closeServed(f: { dir?: string; server?: ServingModel }): Promise<void> {
  await f.server?.close();
  if (f.dir) rmSync(f.dir, { recursive: true, force: true });
}

/** What the served-model tests ask for: six greedy tokens (EOS ignored) after a fixed prompt. */
export const greedy = { maxTokens: 6, temperature: 0, ignoreEos: true };
export const prompt = [9707, 11, 1879, 0, 3555];

/** The ids an in-process engine over `modelDir` generates greedily for `prompt`. */
export async function engineIds(modelDir: string): Promise<number[]> {
  const model = loadCausalLM(modelDir, { device: 'cpu' });
  const engine = new Engine(model, { maxBatchSize: 2, maxLength: 64 });
  try {
    return (await engine.generate(prompt, greedy)).tokenIds;
  } finally {
    engine.dispose();
    model.dispose();
  }
}
const source = fileURLToPath(new URL('../../../shared/data/gsm8k/test.jsonl', import.meta.url));

/** Writes the training rows under `dir` and returns the config; rollout dumps go to `dir`/dumps. */
export function remoteTrainConfig(o: {
  dir: string;
  modelDir: string;
  api: 'vllm' | 'sglang';
  urls: readonly string[];
  steps?: number;
}): AgentR1Config {
  const rows = gsm8kRowsFromFile(source, { split: 'test', tool: true });
  const train = join(o.dir, 'train.jsonl');
  writeRows(train, rows.slice(0, 2), 'jsonl');
  return loadConfig({
    configFile: join(root, 'recipes', 'gsm8k_tool', 'config.yaml'),
    overrides: [
      `data.train_files=${train}`,
      'data.val_files=[]',
      'data.train_batch_size=2',
      `actor_rollout_ref.model.path=${o.modelDir}`,
      'actor_rollout_ref.actor.ppo_mini_batch_size=2',
      'actor_rollout_ref.actor.optim.lr=1e-2',
      'actor_rollout_ref.actor.use_kl_loss=false',
      'actor_rollout_ref.rollout.n=2',
      'actor_rollout_ref.rollout.prompt_length=1024',
      'actor_rollout_ref.rollout.response_length=8',
      `actor_rollout_ref.rollout.name=${o.api}`,
      `actor_rollout_ref.rollout.server_urls=[${o.urls.join(',')}]`,
      `trainer.total_training_steps=${o.steps ?? 2}`,
      'trainer.test_freq=0',
      'trainer.save_freq=0',
      'trainer.val_before_train=false',
      'trainer.resume_mode=disable',
      `trainer.default_local_dir=${join(o.dir, 'ckpt')}`,
      `trainer.rollout_data_dir=${join(o.dir, 'dumps')}`,
      'trainer.logger=[]',
      'trainer.device=cpu',
    ],
  });
}

const maxAbsDiff = (a: torch.Tensor, b: torch.Tensor): number => torch.scope(() => a.sub(b).abs().max().item());

/** Asserts that every parameter of `served` equals the trainer's, and that training moved them off `originalDir`'s. */
export function assertServerHoldsTrainerWeights(served: CausalLM, trainer: CausalLM, originalDir: string): void {
  const trained = new Map(trainer.namedParameters());
  let compared = 0;
  for (const [name, p] of served.namedParameters()) {
    assert.equal(maxAbsDiff(p, trained.get(name)!), 0, `${name} on the server equals the trainer's`);
    compared++;
  }
  assert.ok(compared > 0);
  const original = loadCausalLM(originalDir, { device: 'cpu' });
  try {
    const changed = [...original.namedParameters()].some(([name, p]) => maxAbsDiff(p, trained.get(name)!) > 0);
    assert.ok(changed, 'two updates at lr 1e-2 move the weights');
  } finally {
    original.dispose();
  }
}

/** The policy versions the steps of rollout dump `step` (under `dir`/dumps) record. */
export function dumpedPolicyVersions(dir: string, step: number): string[] {
  const dumped = readFileSync(join(dir, 'dumps', `${step}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { steps: { policy_version?: string }[] });
  return [...new Set(dumped.flatMap((t) => t.steps.map((s) => s.policy_version ?? 'none')))];
}

/**
 * Trains 2 steps against a fresh local `agent-r1 serve` speaking `api`, and checks that no engine ran
 * in process, the weights went out after each update and the server ends with the trainer's weights,
 * and the second step's samples carry policy version 1 (SGLang names it; vLLM names none, so the
 * trainer's count of updates stands for it).
 */
export async function trainTwoStepsOnServe(o: {
  dir: string;
  modelDir: string;
  api: 'vllm' | 'sglang';
}): Promise<void> {
  const served = await startServing(o.modelDir, { port: 0, device: 'cpu', maxNumSeqs: 4, maxModelLen: 1100 });
  try {
    // vLLM's routes are under /v1 with the OpenAI ones; SGLang's at the host's root
    const url = o.api === 'vllm' ? served.url : hostRoot(served);
    const cfg = remoteTrainConfig({ dir: o.dir, modelDir: o.modelDir, api: o.api, urls: [url] });
    const lines: string[] = [];
    const run = await trainerFromConfig(cfg, { log: (l) => lines.push(l) });
    try {
      assert.equal(run.engine, undefined, 'no in-process engine when the rollout runs on servers');
      const name = o.api === 'vllm' ? 'vLLM' : 'SGLang';
      assert.ok(lines.some((l) => l.includes(`rollout: on 1 ${name}-API server(s)`)));
      const last = await run.trainer.fit();
      assert.equal(last['training/global_step'], 2);
      assert.ok(last['timing_s/update_weights'] > 0);
      assert.equal(last['rollout/server_skips'], 0);
      assertServerHoldsTrainerWeights(served.model, run.policy, o.modelDir);
      assert.deepEqual(dumpedPolicyVersions(o.dir, 2), ['1']);
    } finally {
      run.dispose();
    }
  } finally {
    await served.close();
  }
}
