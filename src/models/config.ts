// config.json of a Hugging Face causal LM: the raw keys as written there (snake_case,
// transformers 4 and 5 spellings), and the resolved decoder shape our layers run.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import type { DType } from '../torch/index.js';

/** The config.json keys we read, spelled as Hugging Face writes them. Others are kept and written back. */
export interface HFConfig {
  architectures?: string[];
  model_type?: string;
  hidden_size?: number;
  num_hidden_layers?: number;
  num_attention_heads?: number;
  num_key_value_heads?: number;
  head_dim?: number | null;
  intermediate_size?: number;
  rms_norm_eps?: number;
  rope_theta?: number;
  rope_scaling?: Record<string, unknown> | null;
  /** transformers 5: rope_theta and the scaling options together. */
  rope_parameters?: Record<string, unknown> | null;
  tie_word_embeddings?: boolean;
  vocab_size?: number;
  torch_dtype?: string;
  dtype?: string;
  attention_bias?: boolean;
  mlp_bias?: boolean;
  hidden_act?: string;
  use_sliding_window?: boolean;
  sliding_window?: number | null;
  layer_types?: string[];
  initializer_range?: number;
  pad_token_id?: number | null;
  bos_token_id?: number | number[] | null;
  eos_token_id?: number | number[] | null;
  max_position_embeddings?: number;
  partial_rotary_factor?: number;
  num_experts?: number;
  [key: string]: unknown;
}

export type RopeSpec =
  | { type: 'default'; theta: number }
  | {
      type: 'llama3';
      theta: number;
      factor: number;
      lowFreqFactor: number;
      highFreqFactor: number;
      originalMaxPositionEmbeddings: number;
    };

/** The resolved shape of a decoder-only transformer: what the layers need, in our spelling. */
export interface DecoderSpec {
  /** The registry key (config.json model_type). */
  modelType: string;
  /** The Hugging Face class name, e.g. 'Qwen3ForCausalLM'. */
  architecture: string;
  hiddenSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  intermediateSize: number;
  vocabSize: number;
  rmsNormEps: number;
  rope: RopeSpec;
  tieWordEmbeddings: boolean;
  /** Bias on q/k/v projections. */
  qkvBias: boolean;
  /** Bias on o_proj. */
  oBias: boolean;
  mlpBias: boolean;
  /** Per-head RMSNorm on q and k before RoPE (Qwen3). */
  qkNorm: boolean;
  /** The checkpoint's dtype (config dtype / torch_dtype), float32 when absent. */
  dtype: DType;
  initializerRange: number;
  padTokenId: number | null;
}

export const SUPPORTED_DTYPES: readonly DType[] = ['float32', 'bfloat16', 'float16', 'float64'];

/** Reads `<dir>/config.json`; a clear error when it is missing or not JSON. */
export function readConfig(dir: string): HFConfig {
  const path = join(dir, 'config.json');
  if (!existsSync(path)) {
    throw new UserError(
      `no config.json in model folder ${dir}: a Hugging Face model folder needs config.json and model.safetensors (or model.safetensors.index.json with its shards)`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new UserError(`${path} is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new UserError(`${path} is not a JSON object`);
  return raw as HFConfig;
}

// ---- field helpers, shared by the architecture files ------------------------------------------

function where(config: HFConfig): string {
  return config.architectures?.[0] ?? config.model_type ?? 'config';
}

export function requireInt(config: HFConfig, key: string): number {
  const v = config[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
    throw new UserError(`${where(config)} config.json: '${key}' must be a positive integer, got ${JSON.stringify(v)}`);
  }
  return v;
}

export function optionalNumber(config: HFConfig, key: string, fallback: number): number {
  const v = config[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new UserError(`${where(config)} config.json: '${key}' must be a number, got ${JSON.stringify(v)}`);
  }
  return v;
}

/** Maps a dtype name as configs and users write it ('bfloat16', 'torch.bfloat16', 'bf16'...) to ours. */
export function parseDType(name: unknown, what: string): DType {
  const aliases: Record<string, DType> = {
    float32: 'float32',
    float: 'float32',
    fp32: 'float32',
    bfloat16: 'bfloat16',
    bf16: 'bfloat16',
    float16: 'float16',
    half: 'float16',
    fp16: 'float16',
    // what a float64 model saves (exactness tests train in float64 and resume from their checkpoints)
    float64: 'float64',
    double: 'float64',
    fp64: 'float64',
  };
  const key = typeof name === 'string' ? name.replace(/^torch\./, '').toLowerCase() : '';
  const dt = aliases[key];
  if (!dt) {
    throw new UserError(
      `${what}: dtype ${JSON.stringify(name)} is not supported; use one of ${SUPPORTED_DTYPES.join(', ')}`,
    );
  }
  return dt;
}

/**
 * RoPE settings from either spelling: transformers 5 `rope_parameters` {rope_type, rope_theta, ...},
 * or transformers 4 `rope_theta` + `rope_scaling` {rope_type|type, factor, ...}.
 */
export function parseRope(config: HFConfig, defaultTheta = 10000): RopeSpec {
  const params = { ...(config.rope_scaling ?? {}), ...(config.rope_parameters ?? {}) } as Record<string, unknown>;
  const theta =
    typeof params.rope_theta === 'number'
      ? params.rope_theta
      : typeof config.rope_theta === 'number'
        ? config.rope_theta
        : defaultTheta;
  const type = (params.rope_type ?? params.type ?? 'default') as string;
  const partial = params.partial_rotary_factor ?? config.partial_rotary_factor;
  if (partial !== undefined && partial !== null && partial !== 1) {
    throw new UserError(`${where(config)}: partial_rotary_factor ${partial} is not supported (only 1.0)`);
  }
  if (type === 'default') return { type: 'default', theta };
  if (type === 'llama3') {
    const num = (k: string, fallback?: number): number => {
      const v = params[k] ?? fallback;
      if (typeof v !== 'number') throw new UserError(`${where(config)}: rope scaling 'llama3' needs a number '${k}'`);
      return v;
    };
    return {
      type: 'llama3',
      theta,
      factor: num('factor'),
      lowFreqFactor: num('low_freq_factor'),
      highFreqFactor: num('high_freq_factor'),
      originalMaxPositionEmbeddings: num('original_max_position_embeddings', config.max_position_embeddings),
    };
  }
  throw new UserError(`${where(config)}: rope type '${type}' is not supported; supported rope types: default, llama3`);
}

/** The parts every supported architecture shares; the architecture file sets the rest. */
export function parseCommon(
  config: HFConfig,
  modelType: string,
  architecture: string,
): Omit<DecoderSpec, 'qkvBias' | 'oBias' | 'mlpBias' | 'qkNorm'> {
  const act = config.hidden_act ?? 'silu';
  if (act !== 'silu') throw new UserError(`${architecture}: hidden_act '${act}' is not supported (only silu)`);
  if (config.use_sliding_window === true || (config.layer_types ?? []).some((t) => t !== 'full_attention')) {
    throw new UserError(
      `${architecture}: sliding-window attention (use_sliding_window / layer_types 'sliding_attention') is not supported; only full attention`,
    );
  }
  if (typeof config.num_experts === 'number' && config.num_experts > 0) {
    throw new UserError(`${architecture}: mixture-of-experts (num_experts) is not supported; only dense models`);
  }
  const hiddenSize = requireInt(config, 'hidden_size');
  const numHeads = requireInt(config, 'num_attention_heads');
  const numKvHeads = config.num_key_value_heads == null ? numHeads : requireInt(config, 'num_key_value_heads');
  if (numHeads % numKvHeads !== 0) {
    throw new UserError(
      `${architecture}: num_attention_heads ${numHeads} is not a multiple of num_key_value_heads ${numKvHeads}`,
    );
  }
  const headDim = config.head_dim == null ? hiddenSize / numHeads : requireInt(config, 'head_dim');
  if (!Number.isInteger(headDim)) {
    throw new UserError(
      `${architecture}: hidden_size ${hiddenSize} is not divisible by num_attention_heads ${numHeads} (set head_dim)`,
    );
  }
  const dtypeName = config.dtype ?? config.torch_dtype;
  return {
    modelType,
    architecture,
    hiddenSize,
    numHeads,
    numKvHeads,
    headDim,
    numLayers: requireInt(config, 'num_hidden_layers'),
    intermediateSize: requireInt(config, 'intermediate_size'),
    vocabSize: requireInt(config, 'vocab_size'),
    rmsNormEps: optionalNumber(config, 'rms_norm_eps', 1e-6),
    rope: parseRope(config),
    tieWordEmbeddings: config.tie_word_embeddings ?? false,
    dtype:
      dtypeName === undefined || dtypeName === null ? 'float32' : parseDType(dtypeName, `${architecture} config.json`),
    initializerRange: optionalNumber(config, 'initializer_range', 0.02),
    padTokenId: typeof config.pad_token_id === 'number' ? config.pad_token_id : null,
  };
}
