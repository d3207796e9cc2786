// `agent-r1 serve MODEL_DIR`: the engine over a local Hugging Face folder as an HTTP server with
// vLLM's completions API and dev-mode weight reload (/collective_rpc reload_weights), and SGLang's
// /generate and /update_weights_from_disk (engine/server.ts). A trainer with
// `actor_rollout_ref.rollout.name=vllm` (or sglang) and this server's address rolls out on it and
// pushes its weights after every update, as it would to vLLM (or SGLang).
// The native addon is loaded only when the command runs.
import { Command, InvalidArgumentError } from 'commander';
import { ConfigError } from '../config/index.js';
import type { CausalLM } from '../models/index.js';

export interface ServeOptions {
  /** Interface to bind; default 127.0.0.1 (this machine only). */
  host?: string;
  /** Port; 0 picks a free one. Default 8000. */
  port?: number;
  /** 'auto' (CUDA when available), 'cpu' or 'cuda'. */
  device?: string;
  /** Parameter dtype; default config.json's. */
  dtype?: string;
  /** The name /v1/models lists; default the folder's name. */
  servedModelName?: string;
  /** Sequences decoded together. Default 256. */
  maxNumSeqs?: number;
  /** Longest prompt + response in tokens. Default 4096. */
  maxModelLen?: number;
  maxSequencesPerRequest?: number;
  maxQueuedTokens?: number;
  /** Seeds libtorch's generators (requests' own seeds are honoured either way). */
  seed?: number;
  log?: (line: string) => void;
}

export interface ServingModel {
  /** The API root, e.g. http://127.0.0.1:8000/v1 (SGLang's routes are at the host's root). */
  url: string;
  /** The served model (its parameters change when weights are loaded). */
  model: CausalLM;
  port: number;
  close(): Promise<void>;
}

/** Loads the model, starts the engine and the server; `close()` stops both and frees the model. */
export async function startServing(modelDir: string, o: ServeOptions = {}): Promise<ServingModel> {
  const { existsSync } = await import('node:fs');
  const { basename, resolve } = await import('node:path');
  if (!existsSync(`${modelDir}/config.json`))
    throw new ConfigError(`MODEL_DIR: '${modelDir}' is not a Hugging Face model folder (no config.json)`);
  const torch = await import('../torch/index.js');
  const { loadCausalLM, Tokenizer } = await import('../models/index.js');
  const { Engine, serve } = await import('../engine/index.js');
  const { loadWeightsInto } = await import('../trainer/index.js');
  const { resolveDevice } = await import('./training-run.js');
  const log = o.log ?? (() => {});
  const device = resolveDevice(o.device ?? 'auto', log);
  if (o.seed !== undefined) torch.manualSeed(o.seed);
  const model = loadCausalLM(modelDir, { device, ...(o.dtype ? { dtype: o.dtype } : {}) });
  let engine: InstanceType<typeof Engine> | undefined;
  try {
    const tokenizer = await Tokenizer.fromDir(modelDir);
    const maxLength = o.maxModelLen ?? 4096;
    engine = new Engine(model, { maxBatchSize: o.maxNumSeqs ?? 256, maxLength, tokenizer });
    const running = await serve(engine, {
      host: o.host ?? '127.0.0.1',
      port: o.port ?? 8000,
      modelName: o.servedModelName ?? basename(resolve(modelDir)),
      tokenizer,
      maxModelLen: maxLength,
      ...(o.maxSequencesPerRequest !== undefined ? { maxSequencesPerRequest: o.maxSequencesPerRequest } : {}),
      ...(o.maxQueuedTokens !== undefined ? { maxQueuedTokens: o.maxQueuedTokens } : {}),
      // the copy runs between decode steps (one synchronous call): requests in flight go on with the new weights
      updateWeights: (path) => {
        loadWeightsInto(model, path);
        log(`loaded weights from ${path}`);
      },
    });
    log(
      `serving ${model.spec.architecture} from ${modelDir} (${(model.numParameters() / 1e6).toFixed(1)}M parameters, ${device} ${model.dtype}) at ${running.url}`,
    );
    const started = engine;
    return {
      url: running.url,
      model,
      port: running.port,
      close: async () => {
        await running.close();
        started.dispose();
        model.dispose();
      },
    };
  } catch (e) {
    engine?.dispose();
    model.dispose();
    throw e;
  }
}

function count(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError('expected a whole number >= 1.');
  return n;
}

/** A commander parser for --port: 0-65535 (0 picks a free port). */
export function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n > 65535) throw new InvalidArgumentError('expected a port number, 0-65535.');
  return n;
}

export function serveCommand(): Command {
  return new Command('serve')
    .description(
      "Serve a local Hugging Face model: vLLM's /v1/completions (token ids in and out) and /collective_rpc reload_weights, SGLang's /generate and /update_weights_from_disk.",
    )
    .argument('<model_dir>', 'a local Hugging Face folder (config.json, safetensors, tokenizer files)')
    .option('--host <host>', 'interface to bind (0.0.0.0 for every interface)', '127.0.0.1')
    .option('--port <port>', 'port (0 picks a free one)', port, 8000)
    .option('--device <device>', 'auto, cpu or cuda', 'auto')
    .option('--dtype <dtype>', "parameter dtype (default: config.json's)")
    .option('--served-model-name <name>', 'the model name /v1/models lists (default: the folder name)')
    .option('--max-num-seqs <n>', 'sequences decoded together', count, 256)
    .option('--max-model-len <n>', 'longest prompt + response in tokens', count, 4096)
    .option('--max-sequences-per-request <n>', 'most prompts x n in one request (more answers 400)', count, 4096)
    .option('--max-queued-tokens <n>', 'most tokens queued over all requests (more answers 429)', count, 4 << 20)
    .option('--seed <n>', "seed libtorch's generators", count)
    .action(async (modelDir: string, opts: ServeOptions) => {
      const running = await startServing(modelDir, { ...opts, log: (line) => console.log(line) });
      const stop = () => {
        void running.close().then(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
