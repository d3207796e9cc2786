// The Qwen3 shape the GPU benches build random models of, and its HF config (Qwen3's own constants:
// rms_norm_eps 1e-6, rope_theta 1e6, tied embeddings, silu).
import type { DType } from '../src/torch/index.js';

export interface Qwen3Shape {
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  intermediate: number;
  vocab: number;
}

/** The shape the benches' --hidden, --layers, --heads, --kv-heads, --head-dim, --intermediate and --vocab flags give. */
export function shapeFromFlags(
  num: (flag: 'hidden' | 'layers' | 'heads' | 'kv-heads' | 'head-dim' | 'intermediate' | 'vocab') => number,
): Qwen3Shape {
  return {
    hidden: num('hidden'),
    layers: num('layers'),
    heads: num('heads'),
    kvHeads: num('kv-heads'),
    headDim: num('head-dim'),
    intermediate: num('intermediate'),
    vocab: num('vocab'),
  };
}

export function qwen3Config(s: Qwen3Shape, dtype: DType) {
  return {
    architectures: ['Qwen3ForCausalLM'],
    model_type: 'qwen3',
    hidden_size: s.hidden,
    num_hidden_layers: s.layers,
    num_attention_heads: s.heads,
    num_key_value_heads: s.kvHeads,
    head_dim: s.headDim,
    intermediate_size: s.intermediate,
    vocab_size: s.vocab,
    rms_norm_eps: 1e-6,
    rope_theta: 1000000,
    tie_word_embeddings: true,
    max_position_embeddings: 40960,
    hidden_act: 'silu',
    initializer_range: 0.02,
    dtype,
  };
}
