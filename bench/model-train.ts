// Training throughput of our model code: forward + backward tokens/s of a Qwen3-4B-shaped
// random model (hidden 2560, 36 layers, 32 heads, 8 kv heads, head_dim 128, intermediate 9728,
// vocab 151936, tied embeddings; bf16) on packed rows (default 8 sequences x 2048 = 16k tokens),
// activation checkpointing off and on, with a bf16 matmul peak measured in the same run and
// MFU = model FLOPs/s / peak. Prints one JSON line.
//
// FLOPs counted: 6 * N * tokens with N the parameters that do matmuls (every layer's weights and
// the lm_head; the embedding lookup does none), plus causal attention 6 * S * Hq * D * layers per
// token for sequences of length S (QK^T and PV, forward x3, half the scores masked). Recompute under
// checkpointing is not counted (model FLOPs, not hardware FLOPs). No optimizer step is timed.
//
// GPU:   npx tsx bench/model-train.ts [--reference]       (--reference also runs
//        bench/model_train_reference.py, transformers + PyTorch eager, with the same arguments)
// On the lent H200 (no tsx there), as bench/results/h200-model-train.json was made:
//   here:  npx esbuild bench/model-train.ts --bundle --platform=node --format=esm --target=node20 \
//            --outfile=.devbench/model-train.mjs && cp bench/model_train_reference.py .devbench/
//   there (carry .device .devbench node_modules/node-addon-api):
//          source .device/bootstrap.sh && (cd native && node-gyp rebuild) &&
//          AGENT_R1_NATIVE=$PWD/native/build/Release/agent_r1_native.node node .devbench/model-train.mjs --reference
// Smoke: npx tsx bench/model-train.ts --device cpu --dtype float32 --layers 1 --hidden 64 --heads 4 \
//          --kv-heads 2 --head-dim 16 --intermediate 128 --vocab 512 --seqs 2 --seq-len 32 --steps 1 --warmup 1 --reference
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as torch from '../src/torch/index.js';
import type { Device, DType } from '../src/torch/index.js';
import { createCausalLM, packSequences } from '../src/models/index.js';
import { benchPython } from './python.js';
import { qwen3Config, shapeFromFlags } from './qwen3-shape.js';

const { values: a } = parseArgs({
  options: {
    layers: { type: 'string', default: '36' },
    hidden: { type: 'string', default: '2560' },
    heads: { type: 'string', default: '32' },
    'kv-heads': { type: 'string', default: '8' },
    'head-dim': { type: 'string', default: '128' },
    intermediate: { type: 'string', default: '9728' },
    vocab: { type: 'string', default: '151936' },
    seqs: { type: 'string', default: '8' },
    'seq-len': { type: 'string', default: '2048' },
    steps: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '2' },
    checkpointing: { type: 'string', default: 'off,on' },
    'chunk-size': { type: 'string', default: '4096' },
    dtype: { type: 'string', default: 'bfloat16' },
    device: { type: 'string' },
    'peak-n': { type: 'string' },
    reference: { type: 'boolean', default: false },
  },
});
const num = (k: keyof typeof a) => Number(a[k]);
const device = (a.device ?? (torch.cuda.isAvailable() ? 'cuda:0' : 'cpu')) as Device;
const cuda = device !== 'cpu';
const dtype = a.dtype as DType;
const [seqs, seqLen, steps, warmup] = [num('seqs'), num('seq-len'), num('steps'), num('warmup')];
const tokens = seqs * seqLen;
const sync = () => {
  if (cuda) torch.cuda.synchronize();
};

const config = qwen3Config(shapeFromFlags(num), dtype);

/** bf16 (or the bench dtype) matmul peak in TFLOP/s, best of 3 timed loops. */
function matmulPeak(): number {
  const n = Number(a['peak-n'] ?? (cuda ? 8192 : 1024));
  const iters = cuda ? 50 : 3;
  return torch.scope(() => {
    const x = torch.randn([n, n], { dtype, device });
    const y = torch.randn([n, n], { dtype, device });
    for (let i = 0; i < 3; i++)
      torch.scope(() => {
        x.matmul(y);
      });
    sync();
    let best = Infinity;
    for (let r = 0; r < 3; r++) {
      const t0 = performance.now();
      for (let i = 0; i < iters; i++)
        torch.scope(() => {
          x.matmul(y);
        });
      sync();
      best = Math.min(best, (performance.now() - t0) / iters);
    }
    return (2 * n ** 3) / (best / 1e3) / 1e12;
  });
}

const peakTflops = matmulPeak();
torch.manualSeed(0);
const model = createCausalLM(config, { device, dtype, requiresGrad: true, seed: 0 });
const matmulParams =
  model.numParameters() -
  config.vocab_size * config.hidden_size * (config.tie_word_embeddings ? 0 : 1) -
  (config.num_hidden_layers * 2 + 1) * config.hidden_size -
  config.num_hidden_layers * 2 * config.head_dim;
const flopsPerToken = 6 * matmulParams;
const attnFlopsPerToken = 6 * seqLen * config.num_attention_heads * config.head_dim * config.num_hidden_layers;

// random tokens, 8 sequences; a PPO-like loss on the logprobs with random advantages
const ids = torch.scope(() => torch.randint(0, config.vocab_size, [tokens]).toArray());
const batch = packSequences(
  Array.from({ length: seqs }, (_, s) => ids.slice(s * seqLen, (s + 1) * seqLen)),
  { device },
);
const adv = torch.keep(torch.randn([tokens], { device }));
const lossFn = ({ logprobs }: { logprobs: torch.Tensor }) => logprobs.mul(adv).mean().neg();

const runs: Record<string, unknown> = {};
for (const mode of a.checkpointing!.split(',')) {
  const gradientCheckpointing = mode === 'on';
  try {
    if (cuda) {
      torch.cuda.emptyCache();
      torch.cuda.resetPeakMemoryStats(0);
    }
    const step = () => {
      for (const p of model.parameters()) p.grad = null;
      return model.forwardBackward(batch, lossFn, { gradientCheckpointing, chunkSize: num('chunk-size') });
    };
    for (let i = 0; i < warmup; i++) step();
    sync();
    const t0 = performance.now();
    let loss = 0;
    for (let i = 0; i < steps; i++) loss = step().loss;
    sync();
    const sec = (performance.now() - t0) / 1e3 / steps;
    const tps = tokens / sec;
    runs[`checkpointing_${mode}`] = {
      step_s: +sec.toFixed(4),
      tokens_per_s: Math.round(tps),
      loss: +loss.toFixed(4),
      mfu: +((flopsPerToken * tps) / (peakTflops * 1e12)).toFixed(4),
      mfu_with_attention: +(((flopsPerToken + attnFlopsPerToken) * tps) / (peakTflops * 1e12)).toFixed(4),
      peak_memory_gib: cuda ? +(torch.cuda.memoryStats(0).peakAllocated / 2 ** 30).toFixed(2) : null,
    };
  } catch (e) {
    runs[`checkpointing_${mode}`] = {
      error: String((e as Error).message)
        .split('\n')[0]
        .slice(0, 300),
    };
  }
}
for (const p of model.parameters()) p.grad = null;
const paramsTotal = model.numParameters();
model.dispose();
batch.dispose();
adv.dispose();
if (cuda) torch.cuda.emptyCache(); // the reference runs next on the same GPU

const result: Record<string, unknown> = {
  bench: 'model-train',
  impl: 'agent-r1',
  device,
  dtype,
  libtorch: torch.torchVersion,
  params: paramsTotal,
  matmul_params: matmulParams,
  layers: config.num_hidden_layers,
  tokens,
  seqs,
  seq_len: seqLen,
  steps,
  peak_matmul_tflops: +peakTflops.toFixed(1),
  flops_note:
    '6*matmul_params per token; mfu_with_attention adds causal attention 6*S*Hq*D*layers per token; recompute not counted',
  ...runs,
};

if (a.reference) {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'model_train_reference.py');
  const argv = process.argv.slice(2).filter((x) => x !== '--reference');
  const r = spawnSync(benchPython(), [script, ...argv], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const lines = (r.stdout ?? '').trim().split('\n');
  try {
    const ref = JSON.parse(lines[lines.length - 1]) as Record<string, { tokens_per_s?: number }>;
    result.reference = ref;
    for (const mode of a.checkpointing!.split(',')) {
      const ours = (runs[`checkpointing_${mode}`] as { tokens_per_s?: number }).tokens_per_s;
      const theirs = ref[`checkpointing_${mode}`]?.tokens_per_s;
      if (ours && theirs) result[`ratio_checkpointing_${mode}`] = +(ours / theirs).toFixed(3);
    }
  } catch {
    result.reference = {
      error: `python reference failed (exit ${r.status}): ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' | ')}`,
    };
  }
}
console.log(JSON.stringify(result));
