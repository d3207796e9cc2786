// A whole training run from a resolved config (what `agent-r1 train` does): the datasets
// (`data.train_files`, `data.val_files`), the policy and its tokenizer from
// `actor_rollout_ref.model.path`, a frozen reference when a KL loss or KL-in-reward is on, a critic
// for gae / token_gae (`critic.model.path`, the actor's folder by default, a value head added when
// it has none), the in-process Engine over the policy's own parameter tensors, and the Trainer.
// It lives with the CLI, above every layer it wires (config and data sit above the trainer);
// src/config/ maps the keys, and nothing here spells a verl key except in error messages.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../torch/index.js';
import { launchEnv, ProcessGroup } from '../torch/index.js';
import type { Device } from '../torch/index.js';
import { loadCausalLM, Tokenizer, type CausalLM, type ModelOptions } from '../models/index.js';
import { Engine } from '../engine/index.js';
import { ROLLOUT_SERVER_LABELS, type RolloutServerApi, rolloutServers } from './rollout-servers.js';
import {
  ConfigError,
  criticEnabled,
  expandHome,
  refEnabled,
  toAgentFlowConfig,
  toDataOptions,
  toModelLoadOptions,
  toTrainerOptionsInput,
  type AgentR1Config,
  type ModelLoadSettings,
} from '../config/index.js';
import { DataFileError, filterOverlongPrompts, formatBadRows, loadDataset, type LoadedDataset } from '../data/index.js';
import {
  checkSamples,
  envKwargsForSample,
  formatSampleProblems,
  rewardFunctions,
  type AgentSample,
  type RewardFunction,
} from '../agent/index.js';
import { checkTrainConfig } from '../config/supported.js';
import { importUserFunction } from './user-modules.js';
import {
  DataParallel,
  ZeroAdamW,
  Trainer,
  checkpointToResume,
  verifyCheckpoint,
  type TrainerComponents,
} from '../trainer/index.js';

export interface TrainingRunOptions {
  /** Where progress notes go (what was loaded, from where, on which device). Default: nowhere. */
  log?: (line: string) => void;
  /** Metrics as JSON Lines here (default `<trainer.default_local_dir>/metrics.jsonl`). */
  metricsPath?: string;
  /** Called with each step's metrics, after they are written. */
  onMetrics?: (step: number, metrics: Record<string, number>) => void;
  /** Progress inside each step (for progress bars) and where the per-step console line goes. */
  onProgress?: TrainerComponents['onProgress'];
  printLine?: TrainerComponents['printLine'];
}

/** Everything a run holds; `dispose()` frees it all (trainer states, engine, models). */
export interface TrainingRun extends Disposable {
  trainer: Trainer;
  policy: CausalLM;
  /** The in-process engine; undefined when the rollout runs on servers (`rollout.name=vllm|sglang`). */
  engine?: Engine;
  tokenizer: Tokenizer;
  reference?: CausalLM;
  critic?: CausalLM;
  device: Device;
  trainData: AgentSample[];
  valData: AgentSample[];
  metricsPath: string;
  /** Where checkpoints go (`global_step_N/actor` is a Hugging Face folder). */
  checkpointDir: string;
  dispose(): void;
}

/** The device `trainer.device` asks for: cuda when a GPU is there, else cpu (with a note). */
export function resolveDevice(requested: string, log: (line: string) => void = () => {}): Device {
  if (requested === 'cpu') return 'cpu';
  if (torch.cuda.isAvailable()) return 'cuda';
  log(`note: trainer.device is '${requested}' but no CUDA device is available; running on cpu`);
  return 'cpu';
}

/** A local Hugging Face model folder at `path` (with config.json), or a ConfigError naming `key`. */
export function checkModelFolder(key: string, path: string): void {
  if (!existsSync(path) || !statSync(path).isDirectory()) {
    throw new ConfigError(
      `${key}: no model folder at '${path}' (a local Hugging Face folder with config.json, model.safetensors and the tokenizer files; nothing is downloaded)`,
    );
  }
  if (!existsSync(join(path, 'config.json')))
    throw new ConfigError(`${key}: '${path}' has no config.json; it is not a Hugging Face model folder`);
}

/** Every file exists, or a DataFileError naming `key`. */
export function checkDataFiles(key: string, files: readonly string[]): void {
  for (const f of files) if (!existsSync(f)) throw new DataFileError(`${key}: no such data file '${f}'`);
}

function load(m: ModelLoadSettings, device: Device, extra: ModelOptions = {}): CausalLM {
  // mixed precision (fsdp_config.mixed_precision.param_dtype) on CUDA only: on CPU compute stays in the parameter dtype
  const compute = m.cudaComputeDtype !== undefined && device !== 'cpu' ? { computeDtype: m.cudaComputeDtype } : {};
  return loadCausalLM(m.path, { ...m.options, ...compute, ...extra, device });
}

/**
 * Checks every row before any model loads (each names a registered flow, env and tools, and selects
 * only declared MCP servers: data cannot start processes), and, with `data.truncation=error` and
 * `filter_overlong_prompts` off, that no first prompt is longer than `data.max_prompt_length`.
 * Lists what is wrong, by file and row, and what is registered.
 */
function checkRows(
  cfg: AgentR1Config,
  tokenizer: Tokenizer,
  sets: [string, LoadedDataset][],
  customReward: boolean,
): void {
  const flow = toAgentFlowConfig(cfg);
  const data = toDataOptions(cfg);
  const lines: string[] = [];
  let count = 0;
  for (const [key, set] of sets) {
    const where = (i: number) => `${set.origins[i].file} row ${set.origins[i].index}`;
    const problems = checkSamples(set.rows, {
      defaultAgentFlow: cfg.actor_rollout_ref.rollout.agent.default_agent_flow,
      envKwargs: flow.envKwargs,
      mcpServers: flow.mcpServers,
    });
    const bad = new Set(problems.map((p) => p.index));
    lines.push(...formatSampleProblems(problems, where).map((l) => `${key}: ${l}`));
    if (!customReward) {
      // A row of a flow or env that never rewards the final step itself (single_step_agent, the tool env)
      // is scored by the reward function its data.reward_fn_key names: that function must exist before
      // any rollout. A user env may reward every step itself, so its rows are not refused here.
      const known = new Set(rewardFunctions.names());
      const unscored = new Map<string, number[]>();
      for (const [i, row] of set.rows.entries()) {
        if (bad.has(i)) continue;
        const source = (row as unknown as Record<string, unknown>)[data.rewardFnKey];
        if (typeof source === 'string' && known.has(source)) continue;
        const flowName = row.agent_name ?? cfg.actor_rollout_ref.rollout.agent.default_agent_flow;
        if (
          flowName !== 'single_step_agent' &&
          envKwargsForSample(row, flow.envKwargs, flow.mcpServers).envType !== 'tool'
        )
          continue;
        const name = JSON.stringify(source ?? null);
        unscored.set(name, [...(unscored.get(name) ?? []), i]);
      }
      for (const [name, rows] of unscored) {
        for (const i of rows) bad.add(i);
        lines.push(
          `${key}: ${rows.length} rows (${rows.slice(0, 3).map(where).join(', ')}${rows.length > 3 ? ', ...' : ''}) have ${data.rewardFnKey} ${name}, ` +
            `which names no registered reward function (registered: ${[...known].join(', ')}); register one (rewardFunctions.register, in a module given to --import) or set custom_reward_function.path`,
        );
      }
    }
    count += bad.size;
    if (data.truncation === 'error' && !data.filterOverlongPrompts) {
      const { dropped } = filterOverlongPrompts(set.rows, tokenizer, data.maxPromptLength, flow.chatTemplate);
      count += dropped.length;
      if (dropped.length) {
        lines.push(
          `${key}: ${dropped
            .slice(0, 10)
            .map((d) => `${where(d.index)} (${d.length} tokens)`)
            .join(', ')}${dropped.length > 10 ? `, ... (${dropped.length} rows)` : ''}: ` +
            `the prompt is longer than data.max_prompt_length (${data.maxPromptLength}) and data.truncation is 'error'; set data.filter_overlong_prompts=true, data.truncation=left|right|middle, or a larger max_prompt_length`,
        );
      }
    }
  }
  if (lines.length) throw new DataFileError(`${count} rows are refused:\n  ${lines.join('\n  ')}`);
}

/** verl's `custom_reward_function`: the function `name` exported by the module at `path`, when a path is set. */
async function customRewardFunction(cfg: AgentR1Config): Promise<RewardFunction | undefined> {
  const { path, name } = cfg.custom_reward_function;
  if (path === null) return undefined;
  return (await importUserFunction(
    expandHome(path),
    name,
    `custom_reward_function (path=${path}, name=${name})`,
  )) as RewardFunction;
}

/**
 * Builds a run from the config: checks paths first (a missing model folder or data file is a
 * `ConfigError` / `DataFileError` naming the key), then loads data, models and the engine.
 */
export async function trainerFromConfig(cfg: AgentR1Config, opts: TrainingRunOptions = {}): Promise<TrainingRun> {
  const log = opts.log ?? (() => {});
  // What agent-r1 train cannot do is refused first, before any file is read.
  const launched = launchEnv();
  const worldSize = cfg.trainer.nnodes * cfg.trainer.n_gpus_per_node;
  if (launched && launched.worldSize !== worldSize) {
    throw new ConfigError(
      `WORLD_SIZE is ${launched.worldSize} but trainer.nnodes x trainer.n_gpus_per_node is ${worldSize}; make them agree`,
    );
  }
  if (!launched && worldSize > 1) {
    throw new ConfigError(
      `trainer.nnodes x trainer.n_gpus_per_node is ${worldSize} ranks but this process was not started as one of them: ` +
        'run `agent-r1 train` (it starts the ranks of one machine itself) or a launcher that sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT (torchrun, Slurm)',
    );
  }
  // verl's actor_rollout_ref.nccl_timeout (seconds), the process group's timeout as torch's init_process_group takes it
  const collectiveTimeoutMs = cfg.actor_rollout_ref.nccl_timeout * 1000;
  let device = resolveDevice(cfg.trainer.device, log);
  // one GPU per rank of this machine
  if (launched && device !== 'cpu') device = `cuda:${launched.localRank}`;
  checkTrainConfig(cfg, { device: device === 'cpu' ? 'cpu' : 'cuda' });
  const data = toDataOptions(cfg);
  const actorModel = toModelLoadOptions(cfg, 'actor');
  const useRef = refEnabled(cfg);
  const useCritic = criticEnabled(cfg);
  const criticModel = toModelLoadOptions(cfg, 'critic');

  // Fail fast, before anything heavy is loaded.
  checkModelFolder('actor_rollout_ref.model.path', actorModel.path);
  if (actorModel.tokenizerPath !== actorModel.path && !existsSync(actorModel.tokenizerPath)) {
    throw new ConfigError(`actor_rollout_ref.model.tokenizer_path: no such folder '${actorModel.tokenizerPath}'`);
  }
  if (useCritic) checkModelFolder('critic.model.path', criticModel.path);
  if (data.trainFiles.length === 0) throw new ConfigError('data.train_files is empty');
  checkDataFiles('data.train_files', data.trainFiles);
  checkDataFiles('data.val_files', data.valFiles);
  // a bad checkpoint to resume from (tracker file, missing or truncated files) is found before any model loads
  const run = toTrainerOptionsInput(cfg).trainer!;
  const resumeFrom = checkpointToResume({
    resumeMode: run.resumeMode!,
    defaultLocalDir: run.defaultLocalDir!,
    resumeFromPath: run.resumeFromPath,
  });
  if (resumeFrom) verifyCheckpoint(resumeFrom, useCritic ? ['actor', 'critic'] : ['actor']);

  const rewardFunction = await customRewardFunction(cfg);

  const tokenizer = await Tokenizer.fromDir(actorModel.tokenizerPath);
  const rowOptions = { promptKey: data.promptKey };
  const train = await loadDataset(data.trainFiles, { ...rowOptions, maxSamples: data.trainMaxSamples });
  if (train.bad.length) log(`data: ${train.bad.length} bad training rows skipped:\n${formatBadRows(train.bad, 5)}`);
  let trainData = train.rows;
  let valData: AgentSample[] = [];
  const sets: [string, LoadedDataset][] = [['data.train_files', train]];
  if (data.valFiles.length) {
    const val = await loadDataset(data.valFiles, { ...rowOptions, maxSamples: data.valMaxSamples });
    if (val.bad.length) log(`data: ${val.bad.length} bad validation rows skipped:\n${formatBadRows(val.bad, 5)}`);
    valData = val.rows;
    sets.push(['data.val_files', val]);
  }
  checkRows(cfg, tokenizer, sets, rewardFunction !== undefined);
  if (data.filterOverlongPrompts) {
    const { chatTemplate } = toAgentFlowConfig(cfg);
    const kept = filterOverlongPrompts(trainData, tokenizer, data.maxPromptLength, chatTemplate);
    if (kept.dropped.length)
      log(
        `data: ${kept.dropped.length} training prompts longer than data.max_prompt_length (${data.maxPromptLength}) dropped`,
      );
    trainData = kept.rows;
    valData = filterOverlongPrompts(valData, tokenizer, data.maxPromptLength, chatTemplate).rows;
    if (trainData.length === 0)
      throw new DataFileError(`every training prompt is longer than data.max_prompt_length (${data.maxPromptLength})`);
  }
  if (trainData.length < data.trainBatchSize) {
    throw new DataFileError(
      `data.train_batch_size is ${data.trainBatchSize} prompts but only ${trainData.length} training rows loaded from ${data.trainFiles.join(', ')}`,
    );
  }
  log(
    `data: ${trainData.length} training rows (${data.trainFiles.join(', ')}), ${valData.length} validation rows${data.valFiles.length ? ` (${data.valFiles.join(', ')})` : ''}`,
  );

  log(`run: ${cfg.trainer.project_name}/${cfg.trainer.experiment_name}`);
  torch.manualSeed(cfg.trainer.seed);
  const made: (CausalLM | Engine)[] = [];
  const disposeAll = () => {
    for (const m of made.reverse()) m.dispose();
    made.length = 0;
  };
  try {
    const policy = load(actorModel, device);
    made.push(policy);
    log(
      `policy: ${policy.spec.architecture} from ${actorModel.path}, ${(policy.numParameters() / 1e6).toFixed(1)}M parameters, ${device} ${policy.dtype}${policy.mixedPrecision ? ` (compute ${policy.computeDtype})` : ''}`,
    );
    let reference: CausalLM | undefined;
    if (useRef) {
      reference = load(toModelLoadOptions(cfg, 'ref'), device);
      made.push(reference);
      log(
        `reference: frozen copy from ${actorModel.path} (${cfg.actor_rollout_ref.actor.use_kl_loss ? 'KL loss' : 'KL in the reward'})`,
      );
    }
    let critic: CausalLM | undefined;
    if (useCritic) {
      critic = load(criticModel, device);
      made.push(critic);
      log(`critic: ${critic.spec.architecture} from ${criticModel.path} with a value head`);
    }
    const r = cfg.actor_rollout_ref.rollout;
    const input = toTrainerOptionsInput(cfg);
    if (rewardFunction) input.rollout = { ...input.rollout, rewardFunction };
    const checkpointDir = input.trainer!.defaultLocalDir!;
    // rollout.name=vllm|sglang (checked at load): generate on the servers and push weights to them; else the in-process engine
    const api = r.name as RolloutServerApi | null;
    const servers = api ? rolloutServers(api, r.server_urls, checkpointDir, log) : undefined;
    let engine: Engine | undefined;
    if (api)
      log(
        `rollout: on ${r.server_urls.length} ${ROLLOUT_SERVER_LABELS[api]}-API server(s): ${r.server_urls.join(', ')}`,
      );
    else {
      engine = new Engine(policy, {
        maxBatchSize: r.max_num_seqs,
        maxLength: r.max_model_len ?? r.prompt_length + r.response_length,
        maxPrefillTokens: r.max_num_batched_tokens,
        gpuMemoryUtilization: r.gpu_memory_utilization,
        enforceEager: r.enforce_eager,
        asyncScheduling: r.async_scheduling ?? undefined,
        tokenizer,
      });
      made.push(engine);
      log(engine.describeCache());
    }

    const metricsPath = opts.metricsPath ?? join(checkpointDir, 'metrics.jsonl');
    // Trainer.fit starts a fresh metrics file when it resumes no checkpoint, and continues it when it does.
    input.trainer!.metricsPath = metricsPath;
    let dataParallel: DataParallel | undefined;
    if (launched && launched.worldSize > 1) {
      const backend = device === 'cpu' ? 'gloo' : 'nccl';
      dataParallel = new DataParallel(
        ProcessGroup.create({ backend, ...launched, timeoutMs: collectiveTimeoutMs }),
        device,
      );
      log(
        `data parallel: rank ${launched.rank} of ${launched.worldSize} (${backend}, ${device}; collectives time out after ${collectiveTimeoutMs / 1000} s)`,
      );
      if (launched.rank !== 0) {
        // rank 0 alone writes metrics, logs, dumps and checkpoints
        const t = input.trainer!;
        t.metricsPath = undefined;
        t.fileLoggerPath = undefined;
        t.tensorboardDir = undefined;
        t.rolloutDataDir = undefined;
        t.console = false;
      }
    }
    const trainer = new Trainer(
      {
        policy,
        generator: servers?.generator ?? engine!,
        ...(servers ? { syncWeights: servers.syncWeights } : {}),
        tokenizer,
        trainData,
        valData,
        reference,
        critic,
        onMetrics: opts.onMetrics,
        onProgress: opts.onProgress,
        printLine: opts.printLine,
        ...(dataParallel ? { dataParallel } : {}),
      },
      input,
    );
    for (const [name, opt] of [
      ['actor', trainer.actorOptimizer],
      ['critic', trainer.criticOptimizer],
    ] as const)
      if (opt instanceof ZeroAdamW) log(`${name} ${opt.describe()}`);
    let disposed = false;
    const dispose = () => {
      if (disposed) return;
      disposed = true;
      trainer.dispose();
      dataParallel?.group.destroy();
      disposeAll();
    };
    return {
      trainer,
      policy,
      engine,
      tokenizer,
      reference,
      critic,
      device,
      trainData,
      valData,
      metricsPath,
      checkpointDir,
      dispose,
      [Symbol.dispose]: dispose,
    };
  } catch (error) {
    disposeAll();
    throw error;
  }
}
