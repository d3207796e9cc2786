// The generation engine: continuous batching over a paged KV cache. Requests wait in a queue;
// between decode steps, waiting requests are prefilled (packed) and join the batch; every step
// decodes one token for every running sequence in one batched forward; a finished sequence gives
// its blocks back at once. The scheduler here holds only JS state (block tables, lengths, token
// lists); the math is forward.ts and sampling.ts, the block bookkeeping block-pool.ts.
//
// Memory: the cache is a pool of fixed-size blocks (kv-cache.ts) sized once from a budget
// (`gpuMemoryUtilization` of the device, weights included, as vLLM means it; or `kvCacheBytes`),
// never more than max batch x max length needs. A sequence takes a block when it grows into one.
// When the pool is full, waiting requests wait; when a running sequence needs a block and none is
// free, the most recently admitted sequence is preempted: its blocks are freed and it goes back to
// the front of the queue with the tokens it has, to be prefilled again (recomputed) and go on.
// So the engine never runs out of memory on a long rollout; it only slows down.
//
// Prefix sharing: the n samples of one prompt (a GRPO group), admitted together, prefill the
// prompt once; they hold its full blocks together, and each gets its own copy of the last partial
// block (the only block any of them writes into), then they sample apart.
//
// Seeds: every request has one (its `seed`, else one drawn from libtorch's CPU generator when it
// arrives, so `torch.manualSeed` before a run still repeats a whole run). The random number that
// draws a request's token at position p is a hash of (seed, p) (sampling.ts), so the same request
// with the same seed gives the same tokens whatever else is in the batch, and a preempted request
// resumes exactly where it was.
//
// The event loop stays free: the loop yields (setImmediate) between steps, and on CUDA waits for
// the device with `torch.cuda.synchronizeAsync()` (off the main thread) before reading sampled ids.
// Each step reads back the batch's token ids and logprobs in one copy each.
//
// Step inputs: every step's rows (tokens, positions, slots, block tables, sampling settings) go to
// the device through static buffers (step-inputs.ts) in one copy; each request's sampling settings,
// its seed's key among them, are worked out once when it arrives.
//
// CUDA graphs: on CUDA (unless `enforceEager`) the decode step with its sampling (`decodeStep`,
// forward.ts: its contract, then `sampleTokens`) is replayed from one CUDA graph per (batch,
// block-table width) bucket and set of sampling features (decode-graphs.ts), made again with the
// cache; a step that cannot be captured falls back to eager decoding, the same function run op by
// op. On CUDA the engine also reads stacked q/k/v and gate/up copies of the weights
// (fused-weights.ts: fewer kernels per layer), refreshed from the model whenever it starts work
// after being idle.
import { totalmem } from 'node:os';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../torch/index.js';
import type { Tensor } from '../torch/index.js';
import { cudaIndex } from '../torch/device.js';
import { AgentR1Error, UserError } from '../errors.js';
import type { CausalLM } from '../models/causal-lm.js';
import { PackedBatch } from '../models/packing.js';
import type { AttentionBackend } from '../models/layers.js';
import type { GenerateResult, Generator, SamplingParams } from './generator.js';
import { BlockPool } from './block-pool.js';
import { KVCache, blockBytes, type KVCacheShape } from './kv-cache.js';
import {
  FLASH_PAGED_BLOCK,
  flashTakesBlockTable,
  generationModel,
  prefill,
  resolveDecodeAttention,
  type DecodeAttention,
  type GenerationModel,
  type ResolvedDecodeAttention,
} from './forward.js';
import { rowSettings, type RowSettings } from './sampling.js';
import { DecodeGraphs, GraphCaptureError, graphWidth } from './decode-graphs.js';
import { fusedDecodeUnsupported } from './fused-decode.js';
import { StepInputs, type DecodeRows } from './step-inputs.js';
import { FusedWeights } from './fused-weights.js';

export interface EngineOptions {
  /** Sequences decoded at once (vLLM's max_num_seqs). Default 64. */
  maxBatchSize?: number;
  /** Most tokens of a sequence, prompt plus response (vLLM's max_model_len). Default min(max_position_embeddings, 4096). */
  maxLength?: number;
  /** Prompt tokens prefilled in one forward (a longer prompt is prefilled alone). Default 8192. */
  maxPrefillTokens?: number;
  /** Tokens that end every request (besides its `stopTokenIds`). Default: generation_config.json's
   *  eos_token_id in the model's folder, else config.json's. */
  eosTokenIds?: number[];
  /** Prefill attention (as the model's `attention`). Default: the model's. */
  prefillAttention?: AttentionBackend;
  /** Decode attention: 'sdpa' with a length mask (everywhere), 'flash' (CUDA 16-bit). Default 'auto'. */
  decodeAttention?: DecodeAttention;
  /** Decodes ids to text for `stop` strings. Without one, a request with `stop` strings is an error. */
  tokenizer?: { decode(ids: number[]): string };
  /** Run every decode step eagerly, op by op (vLLM's enforce_eager). Default false: on CUDA the
   *  decode step replays CUDA graphs (one per batch and block-table width bucket, captured on first use). */
  enforceEager?: boolean;
  /** Forward through stacked copies of the q/k/v and gate/up weights (fewer, larger matmuls; extra
   *  memory of about the attention and MLP weights). Default: on CUDA. */
  fuseWeights?: boolean;
  /** Decode through the fused kernels (fused-decode.ts: 9 launches a layer instead of about 24).
   *  Default: where they run (CUDA, bf16, 'paged' decode attention, fuseWeights); true where they
   *  cannot is refused; false runs the models' trunk (to compare). */
  fusedDecodeKernels?: boolean;
  /** Token slots per cache block (vLLM's block_size). Default 16; 256 where decode runs as flash
   *  attention that takes a block table (it reads blocks of a multiple of 256 in place and must
   *  gather smaller ones into a copy every step). */
  blockSize?: number;
  /**
   * The fraction of the device's memory the engine may hold, its weights and everything else this
   * process holds there included (vLLM's gpu_memory_utilization): the cache gets that share of the
   * device's total memory less what is allocated when the engine starts, less an estimate of the
   * forward's activations. On the CPU the same fraction of the host's memory (os.totalmem()), less
   * the model's weights. Default 0.5 (verl's).
   */
  gpuMemoryUtilization?: number;
  /** The cache's size in bytes, instead of `gpuMemoryUtilization` (vLLM's kv_cache_memory_bytes). */
  kvCacheBytes?: number;
  /**
   * Queue each decode step before reading the previous one's tokens (vLLM's async_scheduling), so
   * the host's work of a step (reading tokens, finishing requests, building the next inputs) runs
   * while the device computes. The step feeds each row the token the previous step left on the
   * device. A request that ends on a stop token has one more token computed, and dropped. Admitting
   * requests and preempting wait for the step in flight. The same tokens either way. Default: on
   * CUDA (1.06-1.22x the decode tokens/s on an H200, bench/results/h200-engine-decode.log),
   * not on the CPU, whose device work is synchronous (nothing runs while the host works).
   */
  asyncScheduling?: boolean;
}

/** The engine could not run a request (the message says why); other requests go on. */
export class EngineError extends AgentR1Error {}

interface Request {
  prompt: number[];
  sampling: SamplingParams;
  /** Its sampling settings as the sampler reads them, its seed's key among them (its seed: its own, or drawn when it arrived). */
  settings: RowSettings;
  maxTokens: number;
  stopIds: Set<number>;
  tokens: number[];
  logprobs: number[];
  /** Its block table: the cache blocks holding its tokens, in position order (empty while waiting). */
  blocks: number[];
  /** Tokens whose keys and values the cache holds (its next decode feeds position `cached`). */
  cached: number;
  /** Times it was preempted (its blocks taken back and its tokens recomputed later). */
  preemptions: number;
  aborted: boolean;
  done: boolean;
  resolve(r: GenerateResult): void;
  reject(e: unknown): void;
  cleanup(): void;
}

/** A decode step queued on the device and not read yet (asyncScheduling). */
interface StepInFlight {
  reqs: Request[];
  /** Each request's row in the step. */
  rows: Map<Request, number>;
  /** Resolves when the device has done the step and the copy of its tokens. */
  ready: Promise<void>;
  read(): { ids: number[]; logprobs: number[] };
  enqueued: number;
}

/** Requests prefilled together as one sequence: the first holds the prefix's blocks, the others share them. */
interface PrefillGroup {
  members: Request[];
  /** The tokens prefilled: the prompt, and the tokens generated before a preemption. */
  tokens: number[];
}

export interface EngineStats {
  waiting: number;
  active: number;
  steps: number;
  prefills: number;
  /** Tokens run through prefill forwards (a prompt shared by n samples counts once). */
  prefillTokens: number;
  generatedTokens: number;
  /** Running sequences preempted for lack of cache blocks (recomputed later). */
  preemptions: number;
  /** Cache blocks held now, and the most held at once. */
  blocksUsed: number;
  peakBlocksUsed: number;
  /** Decode steps run, and the rows they decoded (their mean batch: decodedRows / decodeSteps). */
  decodeSteps: number;
  decodedRows: number;
  /** Seconds the host spent building steps' inputs and enqueueing their work (prefills and decode steps; on the CPU the work itself). */
  hostSeconds: number;
  /** Seconds spent waiting for the device to finish steps and reading their token ids back. */
  deviceWaitSeconds: number;
  /** CUDA graphs captured (one per decode batch bucket, block-table width and sampling features; again after a new cache at other addresses). */
  graphCaptures: number;
  /** Seconds capturing them (a part of hostSeconds). */
  captureSeconds: number;
  /** Times a new cache landed where the released one was, so its graphs were kept instead of captured again. */
  graphsReused: number;
  /** Seconds in prefill steps, from building their inputs to reading their first tokens back. */
  prefillSeconds: number;
  /** Seconds allocating the cache (at the first request, and again after each `releaseCache`). */
  cacheSeconds: number;
  /** Seconds the scheduler ran: from a request arriving at an idle engine to the last one ending. */
  busySeconds: number;
}

/**
 * The trainer's metrics of an engine's work between two `stats` snapshots (one rollout):
 * rollout/engine/decode_steps, mean_batch (rows per decode step), host_s (building and enqueueing
 * steps), device_wait_s (waiting for the device and reading token ids back), graph_captures,
 * capture_s and graphs_reused (a released cache's graphs kept for the new one), prefill_s, cache_s
 * (allocating the cache) and busy_s (the scheduler running: the rest of a rollout's time is spent
 * outside the engine, in flows, environments and rewards, or between turns).
 */
export function engineMetrics(before: EngineStats, after: EngineStats): Record<string, number> {
  const steps = after.decodeSteps - before.decodeSteps;
  return {
    'rollout/engine/decode_steps': steps,
    'rollout/engine/mean_batch': steps > 0 ? (after.decodedRows - before.decodedRows) / steps : 0,
    'rollout/engine/host_s': after.hostSeconds - before.hostSeconds,
    'rollout/engine/device_wait_s': after.deviceWaitSeconds - before.deviceWaitSeconds,
    'rollout/engine/graph_captures': after.graphCaptures - before.graphCaptures,
    'rollout/engine/capture_s': after.captureSeconds - before.captureSeconds,
    'rollout/engine/graphs_reused': after.graphsReused - before.graphsReused,
    'rollout/engine/prefill_s': after.prefillSeconds - before.prefillSeconds,
    'rollout/engine/cache_s': after.cacheSeconds - before.cacheSeconds,
    'rollout/engine/busy_s': after.busySeconds - before.busySeconds,
  };
}

/** The cache an engine took: its blocks, their size, the bytes they hold, and the budget they came from. */
export interface CacheInfo {
  numBlocks: number;
  blockSize: number;
  bytes: number;
  /** The budget in bytes (the cache is capped at what max batch x max length needs). */
  budgetBytes: number;
  /** Where the budget came from, in words. */
  source: string;
}

/** The ids an Engine over `model` stops every request on by default: generation_config.json's eos_token_id in its folder, else config.json's. */
export function eosFromModel(model: CausalLM): number[] {
  const asList = (v: unknown): number[] =>
    typeof v === 'number' ? [v] : Array.isArray(v) ? v.filter((x) => typeof x === 'number') : [];
  if (model.sourceDir && existsSync(join(model.sourceDir, 'generation_config.json'))) {
    try {
      const gen = JSON.parse(readFileSync(join(model.sourceDir, 'generation_config.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      const ids = asList(gen.eos_token_id);
      if (ids.length) return ids;
    } catch {
      /* fall back to config.json */
    }
  }
  return asList(model.config.eos_token_id);
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A seed for a request that brings none: from libtorch's CPU generator, so `torch.manualSeed` repeats a run. */
function drawSeed(): number {
  return torch.scope(() => torch.randint(0, 2 ** 31 - 1, [1]).item());
}

/** An int64 tensor of small integers: through float64 (exact below 2^53) and one native cast, not a BigInt per value. */
function int64(values: readonly number[], device: torch.Device): Tensor {
  return torch.tensor(Float64Array.from(values)).to({ dtype: 'int64', device });
}

/**
 * The cache's budget in bytes, and where it came from: `kvCacheBytes`, or `gpuMemoryUtilization` of
 * the device's memory less what this process holds there (weights, ...) and the forward's activations.
 */
function cacheBudget(model: CausalLM, o: EngineOptions, activations: number): { bytes: number; source: string } {
  if (o.kvCacheBytes !== undefined) return { bytes: o.kvCacheBytes, source: 'kvCacheBytes' };
  const fraction = o.gpuMemoryUtilization ?? 0.5;
  const GiB = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;
  if (model.device === 'cpu') {
    const weights = model.parameters().reduce((n, t) => n + t.numel * (t.dtype === 'float32' ? 4 : 2), 0);
    const bytes = fraction * totalmem() - weights - activations;
    return {
      bytes,
      source: `gpu_memory_utilization ${fraction} of the host's ${GiB(totalmem())} less ${GiB(weights)} of weights and ${GiB(activations)} of activations`,
    };
  }
  const index = Number(model.device.split(':')[1] ?? 0);
  const { total, free } = torch.cuda.memoryInfo(index);
  const held = torch.cuda.memoryStats(index).allocated;
  // never more than is free on the device now (another process may hold some of it)
  const bytes = Math.min(fraction * total - held, free) - activations;
  return {
    bytes,
    source: `gpu_memory_utilization ${fraction} of ${model.device}'s ${GiB(total)} less ${GiB(held)} held (weights) and ${GiB(activations)} of activations (${GiB(free)} free)`,
  };
}

/**
 * A `Generator` over a model in this process. `generate` may be called any number of times
 * concurrently; requests are batched continuously up to `maxBatchSize`, within the cache's blocks.
 *
 * ```ts
 * const engine = new Engine(model, { maxBatchSize: 64, maxLength: 4096 });
 * const { tokenIds, logprobs, finishReason } = await engine.generate(promptIds, { maxTokens: 256, temperature: 1 });
 * engine.dispose();
 * ```
 */
export class Engine implements Generator, Disposable {
  readonly maxBatchSize: number;
  readonly maxLength: number;
  readonly maxPrefillTokens: number;
  readonly blockSize: number;
  readonly eosTokenIds: readonly number[];
  /** The cache's size: blocks, bytes and the budget they came from. */
  readonly cacheInfo: CacheInfo;
  private readonly generation: GenerationModel;
  private readonly shape: KVCacheShape;
  /** The cache's tensors; null while released (`releaseCache`), taken again by the next request. */
  private cache: KVCache | null;
  private readonly pool: BlockPool;
  private readonly waiting: Request[] = [];
  /** Running sequences, in admission order (the last is the first preempted). */
  private readonly running: Request[] = [];
  private readonly prefillAttention: AttentionBackend;
  /** What decode attention runs as here ('auto' resolved): 'paged', 'flash' or 'sdpa'. */
  readonly decodeAttention: ResolvedDecodeAttention;
  /** Whether decode steps run the fused kernels (fused-decode.ts). */
  readonly fusedKernels: boolean;
  private readonly tokenizer?: { decode(ids: number[]): string };
  /** Stacked q/k/v and gate/up weights (null: the model's own layout). */
  private readonly fused: FusedWeights | null;
  /** Whether decode steps replay CUDA graphs; the graphs are made with the cache. */
  private graphsOn: boolean;
  private graphs: DecodeGraphs | null = null;
  /** The graphs of a released cache: kept for the next cache, if it lands at the same addresses. */
  private dormantGraphs: DecodeGraphs | null = null;
  /** The steps' static inputs (the graphs read them too). */
  private readonly inputs: StepInputs;
  private loopDone: Promise<void> | null = null;
  /** Whether decode steps are queued ahead of reading the previous one (asyncScheduling). */
  readonly asyncScheduling: boolean;
  private releaseWhenIdle = false;
  /** When busySeconds was last counted up to (countBusy). */
  private busyMark = 0;
  private disposed = false;
  private readonly counters = {
    steps: 0,
    prefills: 0,
    prefillTokens: 0,
    generatedTokens: 0,
    preemptions: 0,
    peakBlocksUsed: 0,
    decodeSteps: 0,
    decodedRows: 0,
    hostSeconds: 0,
    deviceWaitSeconds: 0,
    graphCaptures: 0,
    captureSeconds: 0,
    graphsReused: 0,
    prefillSeconds: 0,
    cacheSeconds: 0,
    busySeconds: 0,
  };

  constructor(
    readonly model: CausalLM,
    o: EngineOptions = {},
  ) {
    this.maxBatchSize = o.maxBatchSize ?? 64;
    this.maxLength = o.maxLength ?? Math.min(Number(model.config.max_position_embeddings ?? 4096), 4096);
    this.maxPrefillTokens = o.maxPrefillTokens ?? 8192;
    this.decodeAttention = resolveDecodeAttention(o.decodeAttention ?? 'auto', {
      device: model.device,
      dtype: model.computeDtype,
      headDim: model.spec.headDim,
      numHeads: model.spec.numHeads,
      numKvHeads: model.spec.numKvHeads,
    });
    // flash reads blocks in place only when it takes a block table and they hold a multiple of 256 tokens
    const flashInPlace = this.decodeAttention === 'flash' && model.device !== 'cpu' && flashTakesBlockTable();
    this.blockSize = o.blockSize ?? (flashInPlace ? FLASH_PAGED_BLOCK : 16);
    for (const [k, v] of [
      ['maxBatchSize', this.maxBatchSize],
      ['maxLength', this.maxLength],
      ['maxPrefillTokens', this.maxPrefillTokens],
      ['blockSize', this.blockSize],
    ] as const) {
      if (!Number.isInteger(v) || v < 1) throw new UserError(`Engine: ${k} must be a positive integer, got ${v}`);
    }
    const u = o.gpuMemoryUtilization;
    if (u !== undefined && !(u > 0 && u <= 1)) {
      throw new UserError(`Engine: gpuMemoryUtilization must be in (0, 1], got ${u}`);
    }
    if (o.kvCacheBytes !== undefined && !(o.kvCacheBytes > 0)) {
      throw new UserError(`Engine: kvCacheBytes must be a positive number of bytes, got ${o.kvCacheBytes}`);
    }
    this.eosTokenIds = o.eosTokenIds ?? eosFromModel(model);
    this.prefillAttention = o.prefillAttention ?? model.attention;
    this.tokenizer = o.tokenizer;
    const { spec } = model;
    const blockShape = {
      numLayers: spec.numLayers,
      blockSize: this.blockSize,
      numKvHeads: spec.numKvHeads,
      headDim: spec.headDim,
    };
    const perBlock = blockBytes(blockShape, model.computeDtype);
    const perSequence = Math.ceil(this.maxLength / this.blockSize);
    const budget = cacheBudget(model, o, this.activationBytes());
    const numBlocks = Math.min(Math.floor(Math.max(budget.bytes, 0) / perBlock), this.maxBatchSize * perSequence);
    if (numBlocks < perSequence) {
      throw new UserError(
        `Engine: the KV cache budget (${budget.source}: ${Math.max(0, Math.floor(budget.bytes))} bytes) holds ${numBlocks} blocks of ${this.blockSize} tokens, fewer than the ${perSequence} one sequence of max length ${this.maxLength} needs; raise gpu_memory_utilization (or kvCacheBytes) or lower max_model_len`,
      );
    }
    this.cacheInfo = {
      numBlocks,
      blockSize: this.blockSize,
      bytes: numBlocks * perBlock,
      budgetBytes: budget.bytes,
      source: budget.source,
    };
    this.shape = { ...blockShape, numBlocks };
    this.pool = new BlockPool(numBlocks);
    const base = generationModel(model);
    this.fused = (o.fuseWeights ?? model.device !== 'cpu') ? new FusedWeights(spec, base.layers) : null;
    this.generation = this.fused ? { ...base, layers: this.fused.layers } : base;
    this.graphsOn = !o.enforceEager && model.device !== 'cpu';
    if (this.decodeAttention === 'paged') {
      if (model.device === 'cpu' || model.computeDtype !== 'bfloat16' || !torch.hasPagedDecodeAttention())
        throw new UserError(
          `Engine: decodeAttention 'paged' runs on CUDA in bf16 with an addon built against a CUDA libtorch; this engine is ${model.device} ${model.computeDtype}: use 'auto', 'flash' or 'sdpa'`,
        );
      // compiled now: a CUDA graph capture cannot load a kernel
      torch.preparePagedDecodeAttention(model.device, spec.headDim, spec.numHeads / spec.numKvHeads, this.blockSize);
    }
    const unfused =
      fusedDecodeUnsupported(this.generation, model.device, model.computeDtype) ??
      (this.decodeAttention === 'paged'
        ? null
        : "the fused decode kernels read the cache through 'paged' decode attention");
    if (o.fusedDecodeKernels && unfused) throw new UserError(`Engine: fusedDecodeKernels: ${unfused}`);
    this.fusedKernels = (o.fusedDecodeKernels ?? true) && !unfused;
    if (this.fusedKernels) torch.prepareFusedDecodeKernels(model.device, spec.headDim);
    // sampleTokens' one-kernel path on CUDA, loaded before any graph captures it
    if (model.device !== 'cpu' && torch.hasFusedDecodeKernels()) torch.prepareSampleRows(model.device);
    this.asyncScheduling = o.asyncScheduling ?? model.device !== 'cpu';
    this.inputs = new StepInputs({
      maxBatch: this.maxBatchSize,
      maxWidth: this.maxWidth,
      vocabSize: spec.vocabSize,
      device: model.device,
      runAhead: this.asyncScheduling,
    });
    this.cache = this.newCache();
  }

  /** One line saying what the cache took (for a run's log). */
  describeCache(): string {
    const { numBlocks, blockSize, bytes, source } = this.cacheInfo;
    const tokens = numBlocks * blockSize;
    return `engine KV cache: ${numBlocks} blocks of ${blockSize} tokens (${tokens} tokens, ${(tokens / this.maxLength).toFixed(1)} sequences of ${this.maxLength}), ${(bytes / 2 ** 30).toFixed(3)} GiB; budget from ${source}`;
  }

  /** A rough peak of the forward's own memory beside the cache: a full prefill's activations and a full batch's sampling. */
  private activationBytes(): number {
    const { spec } = this.model;
    const item = this.model.computeDtype === 'float32' ? 4 : 2;
    const perToken =
      (6 * spec.hiddenSize + 3 * spec.intermediateSize + 3 * (spec.numHeads + 2 * spec.numKvHeads) * spec.headDim) *
      item;
    const sampling = this.maxBatchSize * spec.vocabSize * 24; // float32 logits, their sorted copy and softmax, int64 indices
    return this.maxPrefillTokens * perToken + sampling;
  }

  private newCache(): KVCache {
    return new KVCache(this.shape, { dtype: this.model.computeDtype, device: this.model.device });
  }

  /** Block-table columns of a sequence of max length. */
  private get maxWidth(): number {
    return Math.ceil(this.maxLength / this.blockSize);
  }

  get stats(): EngineStats {
    return {
      waiting: this.waiting.length,
      active: this.running.length,
      blocksUsed: this.pool.numUsed,
      ...this.counters,
    };
  }

  /** Resolves when no request is waiting or running. */
  async idle(): Promise<void> {
    while (this.loopDone) await this.loopDone;
  }

  /**
   * Frees the cache's tensors (verl's free_cache_engine: the training phase gets the memory); the
   * next request takes them again. With requests still running (an abort not yet reached), as soon
   * as they end.
   */
  releaseCache(): void {
    if (this.waiting.length || this.running.length) {
      this.releaseWhenIdle = true;
      return;
    }
    // The graphs read the cache's tensors at their addresses: kept (with their memory pool) in case the
    // next cache lands there again, which saves capturing every batch bucket again each rollout.
    this.dormantGraphs?.dispose();
    this.dormantGraphs = this.graphs;
    this.graphs = null;
    this.cache?.dispose();
    this.cache = null;
  }

  /** Whether decode steps replay CUDA graphs (CUDA, not `enforceEager`, and capture worked). */
  get usesCudaGraphs(): boolean {
    return this.graphsOn;
  }

  /** Whether the cache's tensors are allocated now. */
  get cacheAllocated(): boolean {
    return this.cache !== null;
  }

  generate(
    promptIds: readonly number[],
    sampling: SamplingParams,
    opts: { signal?: AbortSignal } = {},
  ): Promise<GenerateResult> {
    return new Promise<GenerateResult>((resolve, reject) => {
      const bad = this.validate(promptIds, sampling);
      if (bad) return reject(new UserError(bad));
      if (opts.signal?.aborted) return resolve({ tokenIds: [], logprobs: [], finishReason: 'abort' });
      const req: Request = {
        prompt: [...promptIds],
        sampling,
        settings: rowSettings({ ...sampling, seed: sampling.seed ?? drawSeed() }, this.model.spec.vocabSize),
        maxTokens: sampling.maxTokens,
        stopIds: new Set([...(sampling.ignoreEos ? [] : this.eosTokenIds), ...(sampling.stopTokenIds ?? [])]),
        tokens: [],
        logprobs: [],
        blocks: [],
        cached: 0,
        preemptions: 0,
        aborted: false,
        done: false,
        resolve,
        reject,
        cleanup: () => {},
      };
      if (req.maxTokens === 0) return resolve({ tokenIds: [], logprobs: [], finishReason: 'length' });
      if (opts.signal) {
        const signal = opts.signal;
        const onAbort = () => this.abort(req);
        signal.addEventListener('abort', onAbort, { once: true });
        req.cleanup = () => signal.removeEventListener('abort', onAbort);
      }
      this.waiting.push(req);
      this.start();
    });
  }

  private validate(promptIds: readonly number[], s: SamplingParams): string | undefined {
    if (this.disposed) return 'the engine was disposed';
    if (!Array.isArray(promptIds) || promptIds.length === 0) return 'the prompt must hold at least one token id';
    const V = this.model.spec.vocabSize;
    const badId = promptIds.find((t) => !Number.isInteger(t) || t < 0 || t >= V);
    if (badId !== undefined) return `prompt token id ${badId} is outside the vocabulary [0, ${V})`;
    if (promptIds.length >= this.maxLength) {
      return `prompt of ${promptIds.length} tokens does not fit the engine's max length ${this.maxLength} (prompt + response); shorten it or raise maxLength`;
    }
    if (!Number.isInteger(s.maxTokens) || s.maxTokens < 0)
      return `maxTokens must be a non-negative integer, got ${s.maxTokens}`;
    if (s.temperature !== undefined && !(s.temperature >= 0 && Number.isFinite(s.temperature)))
      return `temperature must be >= 0, got ${s.temperature}`;
    if (s.topP !== undefined && !(s.topP > 0 && s.topP <= 1)) return `topP must be in (0, 1], got ${s.topP}`;
    if (s.topK !== undefined && !Number.isInteger(s.topK))
      return `topK must be an integer (0 or -1 for off), got ${s.topK}`;
    if (s.seed !== undefined && !Number.isSafeInteger(s.seed)) return `seed must be an integer, got ${s.seed}`;
    if (s.stop?.length && !this.tokenizer)
      return 'stop strings need a tokenizer: pass Engine({ tokenizer }) or use stopTokenIds';
    return undefined;
  }

  private abort(req: Request): void {
    if (req.done) return;
    req.aborted = true;
    const i = this.waiting.indexOf(req);
    if (i >= 0) {
      this.waiting.splice(i, 1);
      this.finish(req, 'abort');
    }
    // a running request ends at the next step boundary
  }

  /** Takes `req` out of the batch and gives its blocks back. */
  private leave(req: Request): void {
    const i = this.running.indexOf(req);
    if (i >= 0) this.running.splice(i, 1);
    this.pool.release(req.blocks);
    req.blocks = [];
    req.cached = 0;
  }

  private finish(req: Request, finishReason: GenerateResult['finishReason']): void {
    if (req.done) return;
    req.done = true;
    this.leave(req);
    req.cleanup();
    req.resolve({ tokenIds: req.tokens, logprobs: req.logprobs, finishReason });
  }

  private fail(req: Request, error: unknown): void {
    if (req.done) return;
    req.done = true;
    this.leave(req);
    req.cleanup();
    req.reject(
      error instanceof AgentR1Error
        ? error
        : new EngineError(`generation failed: ${(error as Error)?.message ?? error}`, { cause: error }),
    );
  }

  /**
   * Adds the time since the last mark to busySeconds. The loops call it before each yield: the last
   * request of a rollout resolves inside an iteration, and its caller reads `stats` before the loop
   * itself ends.
   */
  private countBusy(): void {
    const now = performance.now();
    this.counters.busySeconds += (now - this.busyMark) / 1000;
    this.busyMark = now;
  }

  private start(): void {
    if (this.loopDone) return;
    this.busyMark = performance.now();
    this.loopDone = this.loop().finally(() => {
      this.countBusy();
      this.loopDone = null;
      if (this.releaseWhenIdle && !this.waiting.length && !this.running.length) {
        this.releaseWhenIdle = false;
        this.releaseCache();
      }
    });
  }

  /**
   * The scheduler, until nothing is left: give every running sequence a slot for its next token
   * (preempting the newest when the pool is full); admit (prefill) waiting requests into what is
   * left, unless a sequence was just preempted; decode one step of the running ones; yield.
   */
  private async loop(): Promise<void> {
    await tick(); // let requests that arrive together be admitted together
    // the model may have been updated (an optimizer step) since the engine last ran
    if (!this.disposed) this.fused?.refresh();
    if (this.asyncScheduling) return this.loopAhead();
    while (!this.disposed && (this.waiting.length > 0 || this.running.length > 0)) {
      const decoding = (await this.admitAndPrefill()).filter((r) => !r.done);
      if (decoding.length) await this.runStep(decoding, () => this.decode(decoding));
      this.countBusy();
      await tick();
    }
  }

  /**
   * A step's scheduling before its decode: ends aborted requests, takes the cache again if it was
   * released, reserves the running sequences' next slots (preempting if it must), admits and prefills
   * waiting requests unless something was preempted. Returns the sequences that decode this step.
   */
  private async admitAndPrefill(): Promise<Request[]> {
    for (const r of [...this.running]) if (r.aborted) this.finish(r, 'abort');
    if (!this.cache) {
      const started = performance.now();
      this.cache = this.newCache();
      if (this.dormantGraphs?.adopt(this.cache)) {
        this.graphs = this.dormantGraphs;
        this.counters.graphsReused++;
      } else this.dormantGraphs?.dispose();
      this.dormantGraphs = null;
      this.counters.cacheSeconds += (performance.now() - started) / 1000;
    }
    const batch = this.reserveDecodeSlots();
    const groups = batch.preempted ? [] : this.admit();
    this.counters.peakBlocksUsed = Math.max(this.counters.peakBlocksUsed, this.pool.numUsed);
    if (groups.length) {
      const started = performance.now();
      await this.runStep(
        groups.flatMap((g) => g.members),
        () => this.prefill(groups),
      );
      this.counters.prefillSeconds += (performance.now() - started) / 1000;
    }
    return batch.requests;
  }

  /**
   * The scheduler with asyncScheduling: as `loop`, but a decode step of the running sequences is
   * queued while the previous one is still in flight, and that one is read after. It waits for the
   * step in flight first when requests wait to be admitted or the blocks the next step needs are not
   * free (preempting needs every token read). Sequences that reach their length with the step in
   * flight do not decode again.
   */
  private async loopAhead(): Promise<void> {
    let inFlight: StepInFlight | null = null;
    try {
      while (!this.disposed && (this.waiting.length > 0 || this.running.length > 0 || inFlight)) {
        if (inFlight && (this.waiting.length > 0 || this.blocksShort())) {
          await this.land(inFlight);
          inFlight = null;
        }
        const pending: StepInFlight | null = inFlight;
        const decoding: Request[] = (await this.admitAndPrefill()).filter((r) => !r.done && !this.endsWith(r, pending));
        const next: StepInFlight | null = decoding.length ? this.queueDecode(decoding, pending) : null;
        if (pending) await this.land(pending);
        inFlight = next;
        this.countBusy();
        await tick();
      }
    } finally {
      // disposed with a step in flight: its requests have ended; let the device finish it
      if (inFlight) await inFlight.ready.catch(() => {});
    }
  }

  /** Whether some running sequence needs a new block for its next token and none is free. */
  private blocksShort(): boolean {
    let needed = 0;
    for (const r of this.running) if (this.needsBlock(r)) needed++;
    return needed > this.pool.numFree;
  }

  /** Whether the next token of `r` goes past its blocks (it needs another). */
  private needsBlock(r: Request): boolean {
    return r.cached >= r.blocks.length * this.blockSize;
  }

  /** Whether `r` is at its length (maxTokens, or the engine's maxLength) once it holds `tokens` tokens. */
  private atLength(r: Request, tokens: number): boolean {
    return tokens >= r.maxTokens || r.prompt.length + tokens >= this.maxLength;
  }

  /** Whether `r` reaches its length with the token of the step in flight (it then decodes no more). */
  private endsWith(r: Request, inFlight: StepInFlight | null): boolean {
    return this.atLength(r, r.tokens.length + (inFlight?.rows.has(r) ? 1 : 0));
  }

  /** Queues a decode step of `reqs` (rows of `previous` feed the token it leaves on the device) and the copy of its tokens; returns it in flight. */
  private queueDecode(reqs: Request[], previous: StepInFlight | null): StepInFlight | null {
    try {
      const started = performance.now();
      const read = torch.noGrad(() =>
        torch.scope(() => this.inputs.readBack(this.decode(reqs, (r) => previous?.rows.get(r) ?? -1))),
      );
      const device = this.model.device;
      const ready = device === 'cpu' ? Promise.resolve() : torch.cuda.fenceAsync(cudaIndex(device));
      const enqueued = performance.now();
      this.counters.hostSeconds += (enqueued - started) / 1000;
      return { reqs, rows: new Map(reqs.map((r, i) => [r, i])), ready, read, enqueued };
    } catch (e) {
      for (const r of reqs) this.fail(r, e);
      return null;
    }
  }

  /** Waits for a step in flight and gives each of its requests its token (those that ended meanwhile drop theirs). */
  private async land(step: StepInFlight): Promise<void> {
    try {
      await step.ready;
      const { ids, logprobs } = step.read();
      this.counters.deviceWaitSeconds += (performance.now() - step.enqueued) / 1000;
      this.counters.steps++;
      step.reqs.forEach((r, i) => this.append(r, ids[i], logprobs[i]));
    } catch (e) {
      for (const r of step.reqs) this.fail(r, e);
    }
  }

  /**
   * Gives each running sequence the block its next token goes into, when it needs a new one. With
   * no free block, the newest running sequence is preempted (possibly the one asking). Returns the
   * sequences that decode this step, and whether any was preempted.
   */
  private reserveDecodeSlots(): { requests: Request[]; preempted: boolean } {
    let preempted = false;
    for (let i = 0; i < this.running.length; i++) {
      const r = this.running[i];
      if (!this.needsBlock(r)) continue;
      let block = this.pool.allocate(1);
      while (!block) {
        const victim = this.running[this.running.length - 1];
        this.preempt(victim);
        preempted = true;
        if (victim === r) break;
        block = this.pool.allocate(1);
      }
      if (!block) {
        i--; // r left this.running at i
        continue;
      }
      r.blocks.push(block[0]);
    }
    return { requests: [...this.running], preempted };
  }

  /** Frees `r`'s blocks and puts it first in the queue, keeping its tokens: it is prefilled again later. */
  private preempt(r: Request): void {
    this.leave(r);
    r.preemptions++;
    this.counters.preemptions++;
    this.waiting.unshift(r);
  }

  /** Blocks a group of `n` sharing `len` tokens takes: the full blocks once, a copy of the partial block each. */
  private blocksFor(len: number, n: number): number {
    const partial = len % this.blockSize === 0 ? 0 : 1;
    return Math.floor(len / this.blockSize) + n * partial;
  }

  /**
   * Takes waiting requests (in arrival order, a preempted one first) into the batch, within the
   * batch size, the prefill token budget and the free blocks. A fresh request brings along the
   * waiting requests with the same prompt (the other samples of its group): they share its prefill.
   */
  private admit(): PrefillGroup[] {
    const groups: PrefillGroup[] = [];
    let tokens = 0;
    while (this.waiting.length && this.running.length < this.maxBatchSize) {
      const first = this.waiting[0];
      const seq = first.tokens.length ? [...first.prompt, ...first.tokens] : first.prompt;
      if (groups.length && tokens + seq.length > this.maxPrefillTokens) break;
      const members = [first];
      if (!first.tokens.length) {
        const room = this.maxBatchSize - this.running.length;
        for (const w of this.waiting) {
          if (members.length >= room) break;
          if (w !== first && !w.tokens.length && samePrompt(w.prompt, first.prompt)) members.push(w);
        }
      }
      // beside running sequences, keep a few blocks free for their growth (vLLM's watermark), so a request
      // just admitted is not preempted at once; alone, a request may take every block
      const reserve = this.running.length ? Math.max(1, Math.floor(0.01 * this.pool.numBlocks)) : 0;
      while (members.length && this.blocksFor(seq.length, members.length) + reserve > this.pool.numFree) members.pop();
      if (!members.length) break; // waits for blocks
      const own = this.pool.allocate(Math.ceil(seq.length / this.blockSize))!;
      const full = own.slice(0, Math.floor(seq.length / this.blockSize));
      members.forEach((r, i) => {
        if (i === 0) r.blocks = own;
        else {
          this.pool.share(full);
          r.blocks = own.length > full.length ? [...full, ...this.pool.allocate(1)!] : [...full];
        }
        r.cached = seq.length;
        this.waiting.splice(this.waiting.indexOf(r), 1);
        this.running.push(r);
      });
      tokens += seq.length;
      groups.push({ members, tokens: seq });
    }
    return groups;
  }

  /** Runs one batched step (sync math in a scope), waits for the device off-thread, reads the ids and logprobs back. */
  private async runStep(reqs: Request[], math: () => { tokens: Tensor; logprobs: Tensor }): Promise<void> {
    let out: { tokens: Tensor; logprobs: Tensor } | undefined;
    try {
      const started = performance.now();
      out = torch.keep(torch.noGrad(() => torch.scope(math)));
      const enqueued = performance.now();
      if (this.model.device !== 'cpu') await torch.cuda.synchronizeAsync();
      const cpu = torch.scope(() => ({ t: out!.tokens.to('cpu'), l: out!.logprobs.to('cpu') }));
      const ids = cpu.t.toArray();
      const lps = cpu.l.toArray();
      cpu.t.dispose();
      cpu.l.dispose();
      this.counters.hostSeconds += (enqueued - started) / 1000;
      this.counters.deviceWaitSeconds += (performance.now() - enqueued) / 1000;
      this.counters.steps++;
      reqs.forEach((r, i) => this.append(r, ids[i], lps[i]));
    } catch (e) {
      for (const r of reqs) this.fail(r, e);
    } finally {
      out?.tokens.dispose();
      out?.logprobs.dispose();
    }
  }

  private append(r: Request, token: number, logprob: number): void {
    if (r.done) return;
    r.tokens.push(token);
    r.logprobs.push(logprob);
    this.counters.generatedTokens++;
    const reason = this.finishReason(r, token);
    if (reason) this.finish(r, reason);
  }

  private finishReason(r: Request, token: number): GenerateResult['finishReason'] | undefined {
    if (r.stopIds.has(token)) return 'stop';
    if (r.sampling.stop?.length && this.tokenizer) {
      const text = this.tokenizer.decode(r.tokens);
      if (r.sampling.stop.some((s) => s.length > 0 && text.includes(s))) return 'stop';
    }
    if (this.atLength(r, r.tokens.length)) return 'length';
    if (r.aborted) return 'abort';
    return undefined;
  }

  /** Samples each row's next token from logits [B, V]; `last` [B]: the position of each row's last token (it draws the next). */
  private sample(logits: Tensor, reqs: Request[], last: number[]) {
    const features = this.inputs.fillSampling(
      reqs.map((r) => r.settings),
      last,
    );
    return this.inputs.sample(logits, features);
  }

  /** The cache slot of position `p` of a sequence with these blocks. */
  private slotOf(blocks: readonly number[], p: number): number {
    return blocks[Math.floor(p / this.blockSize)] * this.blockSize + (p % this.blockSize);
  }

  private prefill(groups: PrefillGroup[]): { tokens: Tensor; logprobs: Tensor } {
    this.counters.prefills++;
    const device = this.model.device;
    const cache = this.cache!;
    const cu = [0];
    for (const g of groups) cu.push(cu[cu.length - 1] + g.tokens.length);
    this.counters.prefillTokens += cu[cu.length - 1];
    const ids = int64(
      groups.flatMap((g) => g.tokens),
      device,
    );
    const pos = int64(
      groups.flatMap((g) => g.tokens.map((_, i) => i)),
      device,
    );
    const slots = int64(
      groups.flatMap((g) => g.tokens.map((_, i) => this.slotOf(g.members[0].blocks, i))),
      device,
    );
    // every member samples from its group's last position
    const lastIndex = int64(
      groups.flatMap((g, i) => g.members.map(() => cu[i + 1] - 1)),
      device,
    );
    const batch = new PackedBatch(ids, pos, cu);
    try {
      const logits = prefill(this.generation, cache, { batch, slots, lastIndex, attention: this.prefillAttention });
      // the others' own copy of the group's last, partial block
      const src: number[] = [];
      const dst: number[] = [];
      for (const g of groups) {
        const owner = g.members[0].blocks;
        for (const r of g.members.slice(1)) {
          if (r.blocks.length && r.blocks[r.blocks.length - 1] !== owner[owner.length - 1]) {
            src.push(owner[owner.length - 1]);
            dst.push(r.blocks[r.blocks.length - 1]);
          }
        }
      }
      if (src.length) cache.copyBlocks(int64(src, device), int64(dst, device));
      const members = groups.flatMap((g) => g.members);
      return this.sample(
        logits,
        members,
        groups.flatMap((g) => g.members.map(() => g.tokens.length - 1)),
      );
    } finally {
      batch.dispose();
    }
  }

  /** One decode step of `reqs`; `from` (asyncScheduling): the row of the step in flight whose token a request feeds, or -1. */
  private decode(reqs: Request[], from?: (r: Request) => number): { tokens: Tensor; logprobs: Tensor } {
    const device = this.model.device;
    const B = reqs.length;
    this.counters.decodeSteps++;
    this.counters.decodedRows += B;
    const needed = Math.max(...reqs.map((r) => Math.floor(r.cached / this.blockSize) + 1));
    // On CUDA the width is bucketed as the graphs bucket it (a few blocks more at most), so eager and
    // graph steps run the same kernels; the paged kernel reads only each row's own blocks whatever the
    // width, so it runs at the widest, one graph per batch size (and sampling features).
    const W =
      device === 'cpu' ? needed : this.decodeAttention === 'paged' ? this.maxWidth : graphWidth(needed, this.maxWidth);
    const feeds = from ? reqs.map(from) : undefined;
    const rows: DecodeRows = {
      // a row fed from the step in flight has no token on the host yet: its id here is unused
      ids: reqs.map((r, i) => (feeds && feeds[i] >= 0 ? 0 : r.tokens[r.tokens.length - 1])),
      ...(feeds ? { from: feeds } : {}),
      positions: reqs.map((r) => r.cached),
      slots: reqs.map((r) => this.slotOf(r.blocks, r.cached)),
      blocks: reqs.map((r) => r.blocks),
      width: W,
      sampling: reqs.map((r) => r.settings),
    };
    const out = (this.graphsOn && this.decodeGraphed(rows)) || this.decodeEager(rows);
    for (const r of reqs) r.cached++;
    return out;
  }

  /** The decode step run op by op, over the same static inputs the graphs read. */
  private decodeEager(rows: DecodeRows): { tokens: Tensor; logprobs: Tensor } {
    const B = rows.ids.length;
    const features = this.inputs.fillDecode(rows, B);
    return this.inputs.decode(this.generation, this.cache!, {
      bucket: B,
      width: rows.width,
      features,
      attention: this.decodeAttention,
      fusedKernels: this.fusedKernels,
    });
  }

  /** The decode step from CUDA graphs; null when it could not be captured (graphs are then off). */
  private decodeGraphed(rows: DecodeRows): { tokens: Tensor; logprobs: Tensor } | null {
    this.graphs ??= new DecodeGraphs(this.generation, this.cache!, this.inputs, {
      maxBatch: this.maxBatchSize,
      attention: this.decodeAttention,
      fusedKernels: this.fusedKernels,
    });
    const captured = this.graphs.captured;
    const started = performance.now();
    try {
      return this.graphs.run(rows);
    } catch (e) {
      if (!(e instanceof GraphCaptureError)) throw e;
      console.warn(`agent-r1 engine: ${e.message}; decoding eagerly (set enforce_eager=true to skip the attempt)`);
      this.graphs.dispose();
      this.graphs = null;
      this.graphsOn = false;
      return null;
    } finally {
      const captures = (this.graphs?.captured ?? captured) - captured;
      this.counters.graphCaptures += captures;
      // the step's own replay is in it too: a few milliseconds of the capture's seconds
      if (captures > 0) this.counters.captureSeconds += (performance.now() - started) / 1000;
    }
  }

  /**
   * The trainer's update_weights phase hands the updated policy over here, between rollouts. Over
   * the policy's own tensors (the CLI's set-up) there is nothing to copy: the optimizer stepped them
   * in place, or, with mixed precision, refreshed the compute copies this engine reads. An engine over
   * another model (its own copy) gets the policy's parameters copied into it. Refused while a request
   * is waiting or generating, so weights never change under a generation.
   */
  async updateWeights(policy: CausalLM): Promise<void> {
    if (this.disposed) throw new EngineError('the engine was disposed');
    const generating = this.waiting.length + this.running.length;
    if (generating > 0) {
      throw new UserError(
        `Engine.updateWeights: ${generating} requests are still generating; update weights between rollouts`,
      );
    }
    await this.idle(); // the scheduling loop winds down after its last request
    if (policy === this.model) return;
    const own = new Map(this.model.namedParameters());
    const theirs = policy.namedParameters();
    const mismatch = theirs.filter(([name, t]) => own.get(name)?.shape.join() !== t.shape.join()).map(([n]) => n);
    if (mismatch.length > 0 || theirs.length !== own.size) {
      throw new UserError(
        `Engine.updateWeights: the policy's parameters do not match the engine's model (${mismatch.slice(0, 3).join(', ') || `${theirs.length} vs ${own.size} tensors`})`,
      );
    }
    torch.noGrad(() => {
      for (const [name, t] of theirs) own.get(name)!.copy_(t);
    });
    this.model.refreshComputeWeights();
  }

  /** Ends every request (finish 'abort' for those running, an error for those waiting) and frees the cache. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const r of this.waiting.splice(0)) this.fail(r, new EngineError('the engine was disposed'));
    for (const r of [...this.running]) this.finish(r, 'abort');
    this.graphs?.dispose();
    this.graphs = null;
    this.dormantGraphs?.dispose();
    this.dormantGraphs = null;
    this.inputs.dispose();
    this.fused?.dispose();
    this.cache?.dispose();
    this.cache = null;
    this.generation.invFreq.dispose();
  }
  [Symbol.dispose](): void {
    this.dispose();
  }
}

function samePrompt(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
