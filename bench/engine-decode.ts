// Rollout decode throughput of the engine: a batch of `--batch` (default 64) sequences with random
// prompts of `--prompt-len` tokens, each generating exactly `--new-tokens` tokens (no eos) on a
// Qwen3-shaped random model (default Qwen3-0.6B: hidden 1024, 28 layers, 16 heads, 8 kv heads,
// head_dim 128, intermediate 3072, vocab 151936, tied embeddings; bf16). Decode tokens/s is
//   batch * (new_tokens - 1) / (time(new_tokens) - time(1))
// so the prefill and the first token cancel out; the end-to-end tokens/s (prefill included) is
// printed too. The engine replays CUDA graphs unless --enforce-eager; --scheduling async queues each
// decode step before reading the previous one, --scheduling step reads each before the next (default:
// the engine's, async on CUDA); --dependent-launch off starts each of its kernels after the one
// before has ended (torch.setDependentLaunches).
//
// --suite: issue 10's five points in one run (Qwen3-0.6B shape, prompt 128, 256 new, batch 1, 64,
// 256; Qwen3-4B shape, prompt 512, 128 new, batch 1, 64), each against the hand-written PyTorch
// CUDA-graph decode step of bench/decode_graph_reference.py (run in the same call), and the
// roofline from the device copy bandwidth measured here:
//   roofline tokens/s = batch / ((weight bytes + batch * average KV bytes read per step) / bandwidth)
// (average KV bytes: keys and values of prompt + new/2 positions, every layer). One JSON line per
// point, then a table.
// --reference (single point): transformers' generate on the same shape (bench/engine_decode_reference.py).
// --trace <file.json>: after the timed runs, --trace-tokens (default 8) more under libtorch's profiler
// (torch.profile): the Chrome trace to the file (chrome://tracing, ui.perfetto.dev) and, on CUDA, the
// decode steps' kernel timeline (bench/kernel-timeline.ts: idle time between kernels, each kernel's
// start against the previous one's end) as a table and in the JSON line.
//
// GPU:   bash bench/device/run.sh build decode   (after bench/device/bundle.sh here: the suite, with the
//        engine's default scheduling and with --scheduling step), or node .devexp/native/engine-decode.mjs <flags>
// Smoke: npx tsx bench/engine-decode.ts --device cpu --dtype float32 --layers 2 --hidden 64 --heads 4 --kv-heads 2 \
//          --head-dim 16 --intermediate 128 --vocab 512 --batch 4 --prompt-len 16 --new-tokens 8 --repeats 1
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as torch from '../src/torch/index.js';
import type { Device, DType } from '../src/torch/index.js';
import { createCausalLM } from '../src/models/index.js';
import { Engine, decodeTrunkRows, generationModel, type DecodeAttention } from '../src/engine/index.js';
import { benchPython } from './python.js';
import { qwen3Config, shapeFromFlags, type Qwen3Shape } from './qwen3-shape.js';
import { formatTimeline, kernelTimeline, type Timeline } from './kernel-timeline.js';
import { formatTrunkTrace, trunkTraceSummary, type TrunkTraceRow } from './trunk-trace.js';

const { values: a } = parseArgs({
  options: {
    layers: { type: 'string', default: '28' },
    hidden: { type: 'string', default: '1024' },
    heads: { type: 'string', default: '16' },
    'kv-heads': { type: 'string', default: '8' },
    'head-dim': { type: 'string', default: '128' },
    intermediate: { type: 'string', default: '3072' },
    vocab: { type: 'string', default: '151936' },
    batch: { type: 'string', default: '64' },
    'prompt-len': { type: 'string', default: '128' },
    'new-tokens': { type: 'string', default: '256' },
    repeats: { type: 'string', default: '2' },
    dtype: { type: 'string', default: 'bfloat16' },
    device: { type: 'string' },
    'decode-attention': { type: 'string', default: 'auto' },
    temperature: { type: 'string', default: '0' },
    'enforce-eager': { type: 'boolean', default: false },
    // the models' trunk instead of the fused decode kernels (to measure what they bring)
    'no-fused-kernels': { type: 'boolean', default: false },
    // async: each decode step queued before the previous one is read (the engine's asyncScheduling);
    // step: each read before the next; default: the engine's (async on CUDA, step on the CPU)
    scheduling: { type: 'string' },
    // on (the default): the engine's CUDA kernels start while the one before ends
    // (torch.setDependentLaunches); off: each after the one before has ended
    'dependent-launch': { type: 'string', default: 'on' },
    // the engine's cache budget (vLLM's gpu_memory_utilization); its blocks and bytes are printed
    'gpu-memory-utilization': { type: 'string', default: '0.5' },
    // tokens per cache block (default: the engine's, 256 where decode runs as flash attention, which reads
    // blocks of a multiple of 256 in place and must gather smaller ones)
    'block-size': { type: 'string' },
    trace: { type: 'string' },
    'trace-tokens': { type: 'string' },
    reference: { type: 'boolean', default: false },
    /** Suite: ours only, without the PyTorch reference (a comparison of our own settings). */
    'no-reference': { type: 'boolean', default: false },
    suite: { type: 'boolean', default: false },
    /** Suite smoke runs: fewer layers for every shape (and the reference). */
    'suite-layers': { type: 'string' },
    /** A subset of the suite's points, as shape:batch pairs (e.g. 0.6b:64,4b:1). */
    'suite-points': { type: 'string' },
  },
});
const num = (k: keyof typeof a) => Number(a[k]);
if (a.scheduling !== undefined && a.scheduling !== 'async' && a.scheduling !== 'step') {
  console.error(`--scheduling must be async or step, got '${a.scheduling}'`);
  process.exit(2);
}
if (a['dependent-launch'] !== 'on' && a['dependent-launch'] !== 'off') {
  console.error(`--dependent-launch must be on or off, got '${a['dependent-launch']}'`);
  process.exit(2);
}
const device = (a.device ?? (torch.cuda.isAvailable() ? 'cuda:0' : 'cpu')) as Device;
const cuda = device !== 'cpu';
if (cuda && torch.hasFusedDecodeKernels()) torch.setDependentLaunches(a['dependent-launch'] === 'on');
else if (a['dependent-launch'] === 'off') {
  console.error('--dependent-launch off needs a CUDA device and an addon built against a CUDA libtorch');
  process.exit(2);
}
const dtype = a.dtype as DType;
const repeats = num('repeats');
if (a.trace && a.suite) {
  console.error('--trace profiles one point: give its shape and batch instead of --suite');
  process.exit(2);
}
if (a['trace-tokens'] !== undefined && !a.trace) {
  console.error('--trace-tokens sets how many tokens --trace profiles: give --trace <file.json> with it');
  process.exit(2);
}
const traceTokens = Number(a['trace-tokens'] ?? 8);
if (!Number.isInteger(traceTokens) || traceTokens < 3) {
  console.error(
    `--trace-tokens must be an integer of at least 3 (two decode steps after the first token), got '${a['trace-tokens']}'`,
  );
  process.exit(2);
}
const temperature = num('temperature');
const here = dirname(fileURLToPath(import.meta.url));

interface Shape extends Qwen3Shape {
  name: string;
}
const SHAPES: Record<string, Omit<Shape, 'name'>> = {
  '0.6b': { hidden: 1024, layers: 28, heads: 16, kvHeads: 8, headDim: 128, intermediate: 3072, vocab: 151936 },
  '4b': { hidden: 2560, layers: 36, heads: 32, kvHeads: 8, headDim: 128, intermediate: 9728, vocab: 151936 },
};

/** Device copy bandwidth in bytes/s (read + write), best of 10 rounds of 5 copies of 2 GiB. */
function copyBandwidth(): number {
  const n = 1 << 30;
  const src = torch.keep(torch.randn([n], { dtype: 'bfloat16', device }));
  const dst = torch.keep(torch.zerosLike(src));
  let best = Infinity;
  for (let r = 0; r < 10; r++) {
    torch.cuda.synchronize();
    const t0 = performance.now();
    for (let i = 0; i < 5; i++) dst.copy_(src);
    torch.cuda.synchronize();
    best = Math.min(best, (performance.now() - t0) / 5 / 1e3);
  }
  src.dispose();
  dst.dispose();
  torch.cuda.emptyCache();
  return (2 * n * 2) / best;
}

interface Point {
  shape: Shape;
  batch: number;
  promptLen: number;
  newTokens: number;
}

async function measure(p: Point): Promise<Record<string, unknown>> {
  const { shape, batch, promptLen, newTokens } = p;
  const config = qwen3Config(shape, dtype);
  const model = createCausalLM(config, { device, dtype, seed: 0 });
  const engine = new Engine(model, {
    maxBatchSize: batch,
    maxLength: promptLen + newTokens,
    eosTokenIds: [],
    decodeAttention: a['decode-attention'] as DecodeAttention,
    enforceEager: a['enforce-eager'],
    fusedDecodeKernels: a['no-fused-kernels'] ? false : undefined,
    asyncScheduling: a.scheduling === undefined ? undefined : a.scheduling === 'async',
    gpuMemoryUtilization: num('gpu-memory-utilization'),
    blockSize: a['block-size'] ? num('block-size') : undefined,
  });
  torch.manualSeed(0);
  const prompts = torch.scope(() => torch.randint(0, shape.vocab, [batch, promptLen]).toNested() as number[][]);

  /** Seconds for the whole batch to generate `n` tokens each (best of `repeats`). */
  async function timed(n: number): Promise<number> {
    let best = Infinity;
    for (let r = 0; r < repeats; r++) {
      const t0 = performance.now();
      const outs = await Promise.all(prompts.map((q) => engine.generate(q, { maxTokens: n, temperature })));
      if (cuda) torch.cuda.synchronize();
      best = Math.min(best, (performance.now() - t0) / 1e3);
      if (outs.some((o) => o.tokenIds.length !== n)) throw new Error('a sequence stopped early');
    }
    return best;
  }

  await timed(Math.min(4, newTokens)); // warm-up (kernels, allocator, graph capture)
  const t1 = await timed(1);
  const tN = await timed(newTokens);
  const decodeTps = (batch * (newTokens - 1)) / (tN - t1);
  // --trace: a run of --trace-tokens more under the profiler, after the timed ones (it slows them)
  let timeline: Timeline | undefined;
  if (a.trace) {
    const { events } = await torch.profile(
      async () => {
        await Promise.all(prompts.map((q) => engine.generate(q, { maxTokens: traceTokens, temperature })));
        if (cuda) torch.cuda.synchronize();
      },
      { cuda, tracePath: a.trace },
    );
    if (cuda) timeline = kernelTimeline(events);
  }
  // AGENT_R1_DECODE_TRUNK_TRACE=1: where the last decode-trunk step's time went, layer by layer
  let trunkTrace: TrunkTraceRow[] | undefined;
  if (cuda && process.env.AGENT_R1_DECODE_TRUNK_TRACE === '1') {
    const t = torch.decodeTrunkTrace(device);
    if (t) {
      trunkTrace = trunkTraceSummary(t.toNested() as number[][][]);
      t.dispose();
    }
  }
  const params = model.numParameters();
  const trunkRows = torch.noGrad(() => {
    const g = generationModel(model);
    g.invFreq.dispose();
    return decodeTrunkRows(g);
  });
  const item = dtype === 'float32' ? 4 : 2;
  const kvPerToken = 2 * shape.layers * shape.kvHeads * shape.headDim * item;
  const graphs = engine.usesCudaGraphs;
  const cache = engine.cacheInfo;
  engine.dispose();
  model.dispose();
  if (cuda) torch.cuda.emptyCache();
  if (timeline) console.log(formatTimeline(timeline));
  if (trunkTrace) console.log(formatTrunkTrace(trunkTrace));
  return {
    bench: 'engine-decode',
    impl: 'agent-r1',
    device,
    dtype,
    libtorch: torch.torchVersion,
    shape: shape.name,
    params,
    layers: shape.layers,
    batch,
    prompt_len: promptLen,
    new_tokens: newTokens,
    temperature,
    cuda_graphs: graphs,
    decode_attention: engine.decodeAttention,
    fused_kernels: engine.fusedKernels,
    decode_trunk_rows: engine.fusedKernels ? trunkRows : 0,
    async_scheduling: engine.asyncScheduling,
    dependent_launches: cuda && torch.hasFusedDecodeKernels() ? torch.dependentLaunches() : false,
    prefill_plus_first_token_s: +t1.toFixed(4),
    total_s: +tN.toFixed(4),
    decode_tokens_per_s: Math.round(decodeTps),
    // a decode step's time at full precision (the tokens/s above are rounded): what paired runs compare
    decode_step_ms: +(((tN - t1) / (newTokens - 1)) * 1000).toFixed(4),
    end_to_end_tokens_per_s: Math.round((batch * newTokens) / tN),
    weight_bytes: params * item,
    avg_kv_bytes_per_seq_step: kvPerToken * (promptLen + newTokens / 2),
    kv_cache_blocks: cache.numBlocks,
    kv_cache_block_size: cache.blockSize,
    kv_cache_gib: +(cache.bytes / 2 ** 30).toFixed(3),
    kv_cache_budget: cache.source,
    ...(a.trace ? { trace: a.trace, timeline } : {}),
    ...(trunkTrace ? { trunk_trace: trunkTrace } : {}),
  };
}

if (a.suite) {
  const layersOverride = a['suite-layers'] ? Number(a['suite-layers']) : undefined;
  const shapeOf = (name: string): Shape => ({
    name,
    ...SHAPES[name],
    ...(layersOverride ? { layers: layersOverride } : {}),
  });
  const all: Point[] = [
    { shape: shapeOf('0.6b'), batch: 1, promptLen: 128, newTokens: 256 },
    { shape: shapeOf('0.6b'), batch: 64, promptLen: 128, newTokens: 256 },
    { shape: shapeOf('0.6b'), batch: 256, promptLen: 128, newTokens: 256 },
    { shape: shapeOf('4b'), batch: 1, promptLen: 512, newTokens: 128 },
    { shape: shapeOf('4b'), batch: 64, promptLen: 512, newTokens: 128 },
  ];
  // points --suite-points may name beside the five: the few-row steps the decode trunk may take
  const fewRows: Point[] = [2, 4].flatMap((batch) => [
    { shape: shapeOf('0.6b'), batch, promptLen: 128, newTokens: 256 },
    { shape: shapeOf('4b'), batch, promptLen: 512, newTokens: 128 },
  ]);
  const wanted = a['suite-points']?.split(',');
  const named = [...all, ...fewRows];
  const points = wanted ? named.filter((p) => wanted.includes(`${p.shape.name}:${p.batch}`)) : all;
  if (wanted && points.length !== wanted.length)
    throw new Error(`--suite-points: ${wanted} names points outside ${named.map((p) => `${p.shape.name}:${p.batch}`)}`);
  const bw = copyBandwidth();
  console.log(JSON.stringify({ bench: 'copy-bandwidth', device, bytes_per_s: Math.round(bw) }));
  const ours: Record<string, unknown>[] = [];
  for (const p of points) {
    // one failing point (say, out of memory) still leaves the others and the reference measured
    const r: Record<string, unknown> = await measure(p).catch((e: Error) => {
      console.log(JSON.stringify({ bench: 'engine-decode', shape: p.shape.name, batch: p.batch, error: e.message }));
      if (cuda) torch.cuda.emptyCache();
      return {
        shape: p.shape.name,
        batch: p.batch,
        weight_bytes: NaN,
        avg_kv_bytes_per_seq_step: NaN,
        error: e.message,
      };
    });
    const step = ((r.weight_bytes as number) + p.batch * (r.avg_kv_bytes_per_seq_step as number)) / bw;
    r.roofline_tokens_per_s = Math.round(p.batch / step);
    console.log(JSON.stringify(r));
    ours.push(r);
  }
  const spec = points.map((p) => `${p.shape.name}:${p.batch}:${p.promptLen}:${p.newTokens}`).join(',');
  const args = [join(here, 'decode_graph_reference.py'), '--points', spec];
  if (layersOverride) args.push('--layers', String(layersOverride));
  const ref = a['no-reference']
    ? { stdout: '', stderr: '', status: 0 }
    : spawnSync(benchPython(), args, { encoding: 'utf8', maxBuffer: 1 << 26 });
  const refs = (ref.stdout ?? '')
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, number | string>);
  if (ref.status !== 0) console.log(`reference failed (exit ${ref.status}): ${(ref.stderr ?? '').trim().slice(-2000)}`);
  const rows: string[] = [
    '| shape | batch | agent-r1 | PyTorch eager | PyTorch + CUDA graph | roofline | vs graph | of roofline |',
    '|---|---|---|---|---|---|---|---|',
  ];
  ours.forEach((r, i) => {
    const x = refs[i];
    r.reference = x;
    const tps = r.decode_tokens_per_s as number;
    const graph = x ? (x.graph_tokens_per_s as number) : undefined;
    // a failed point has no ratios, and its row says why (the error's first line), not undefined and NaN
    const failed = r.error === undefined ? undefined : `failed: ${String(r.error).split('\n')[0].slice(0, 160)}`;
    if (!failed) {
      if (graph) r.ratio_vs_graph_reference = +(tps / graph).toFixed(3);
      r.fraction_of_roofline = +(tps / (r.roofline_tokens_per_s as number)).toFixed(3);
    }
    const vsGraph = r.ratio_vs_graph_reference === undefined ? '-' : `${r.ratio_vs_graph_reference}x`;
    const ofRoofline = failed ? '-' : `${(100 * (r.fraction_of_roofline as number)).toFixed(0)}%`;
    rows.push(
      `| ${r.shape} | ${r.batch} | ${failed ?? tps} | ${x?.eager_tokens_per_s ?? '-'} | ${graph ?? '-'} | ${failed ? '-' : r.roofline_tokens_per_s} | ${vsGraph} | ${ofRoofline} |`,
    );
  });
  console.log(JSON.stringify({ bench: 'engine-decode-suite', copy_bytes_per_s: Math.round(bw), points: ours }));
  console.log(rows.join('\n'));
} else {
  const shape: Shape = { name: 'custom', ...shapeFromFlags(num) };
  const [batch, promptLen, newTokens] = [num('batch'), num('prompt-len'), num('new-tokens')];
  const result = await measure({ shape, batch, promptLen, newTokens });
  if (a.reference) {
    const script = join(here, 'engine_decode_reference.py');
    const argv = process.argv
      .slice(2)
      .filter(
        (x) =>
          x !== '--reference' &&
          x !== '--enforce-eager' &&
          x !== '--no-fused-kernels' &&
          ![
            '--decode-attention',
            '--gpu-memory-utilization',
            '--block-size',
            '--scheduling',
            '--dependent-launch',
          ].some((f) => x.startsWith(f)),
      );
    const r = spawnSync(benchPython(), [script, ...argv], { encoding: 'utf8', maxBuffer: 1 << 26 });
    const lines = (r.stdout ?? '').trim().split('\n');
    try {
      const ref = JSON.parse(lines[lines.length - 1]) as { decode_tokens_per_s?: number };
      result.reference = ref;
      if (ref.decode_tokens_per_s)
        result.ratio_decode = +((result.decode_tokens_per_s as number) / ref.decode_tokens_per_s).toFixed(3);
    } catch {
      result.reference = {
        error: `python reference failed (exit ${r.status}): ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' | ')}`,
      };
    }
  }
  console.log(JSON.stringify(result));
}
