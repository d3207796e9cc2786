// Sampling cost on a CPU: one draw per row from softmax(logits / T) over a [batch, vocab] float32
// batch, as the engine does each decode step. Compares the engine's sampler (inverse CDF: one
// uniform number per row, `sampleTokens`) with the exponential race it replaced (argmax p / E, one
// exponential number per vocabulary entry, which is also what torch.multinomial does for one
// sample), measured in the same run. Prints one JSON line.
//   npx tsx bench/sampling.ts [--batch 64] [--vocab 151936] [--repeats 50]
// With --device cuda: torch.sampleRows (the sample_rows kernel the engine samples with on CUDA) at
// batches 1, 8, 64 and 256 (or --batch's, comma-separated), sampled and greedy rows, microseconds
// per call inside a CUDA graph as the decode step runs it (bench/graph-time.ts): with the logits
// in L2, as they are after the step's lm_head, and cycling copies that L2 does not hold. One JSON
// line per batch and mode; AGENT_R1_SAMPLE_SLICES (1: one block per row) is printed with them.
//   npx tsx bench/sampling.ts --device cuda [--batch 1,8,64,256] [--vocab 151936]
import { parseArgs } from 'node:util';
import * as torch from '../src/torch/index.js';
import { sampleTokens, samplingTensors } from '../src/engine/index.js';
import { secondsPerCallInGraph } from './graph-time.js';

const { values: a } = parseArgs({
  options: {
    device: { type: 'string', default: 'cpu' },
    batch: { type: 'string' },
    vocab: { type: 'string', default: '151936' },
    repeats: { type: 'string', default: '50' },
  },
});
const V = Number(a.vocab);
const repeats = Number(a.repeats);
if (a.device !== 'cpu' && a.device !== 'cuda')
  throw new Error(`bench/sampling.ts: --device must be cpu or cuda, got '${a.device}'`);
const batches = (a.batch ?? (a.device === 'cuda' ? '1,8,64,256' : '64')).split(',').map(Number);
if (batches.some((b) => !Number.isInteger(b) || b < 1))
  throw new Error(
    `bench/sampling.ts: --batch must be positive integers (comma-separated with --device cuda), got '${a.batch}'`,
  );
if (a.device === 'cuda') {
  if (!torch.cuda.isAvailable()) throw new Error('bench/sampling.ts --device cuda: CUDA is not available');
  benchSampleRows('cuda:0', batches);
  process.exit(0);
}
if (batches.length !== 1) throw new Error(`bench/sampling.ts: the CPU comparison takes one --batch, got '${a.batch}'`);
const B = batches[0];
const exponential_ = torch.aten('exponential_');

/** The replaced sampler: argmax(p / E) with E ~ Exp(1) per entry, and the logprob by a second logsumexp. */
function exponentialRace(logits: torch.Tensor): torch.Tensor {
  const probs = logits.softmax(-1);
  const noise = exponential_(torch.empty(probs.shape), 1.0, null);
  const tokens = probs.div(noise).argmax(-1);
  return logits.gather(-1, tokens.unsqueeze(-1)).squeeze(-1).sub(logits.logsumexp(-1));
}

function timeMs(fn: () => void): number {
  for (let i = 0; i < 3; i++) torch.scope(fn);
  const t0 = performance.now();
  for (let i = 0; i < repeats; i++) torch.scope(fn);
  return (performance.now() - t0) / repeats;
}

torch.manualSeed(0);
const logits = torch.keep(torch.randn([B, V]).mul(3));
const settings = samplingTensors(
  Array.from({ length: B }, (_, i) => ({ temperature: 1, seed: i })),
  V,
  'cpu',
  new Array(B).fill(100),
);
const ours = timeMs(() => {
  sampleTokens(logits, settings);
});
const race = timeMs(() => {
  exponentialRace(logits.div(settings.temperature));
});
console.log(
  JSON.stringify({
    bench: 'sampling',
    machine: `${process.platform} ${process.arch}`,
    threads: torch.getNumThreads(),
    batch: B,
    vocab: V,
    inverse_cdf_ms: +ours.toFixed(3),
    exponential_race_ms: +race.toFixed(3),
    speedup: +(race / ours).toFixed(2),
  }),
);

/** sampleRows' microseconds per call in a CUDA graph at each batch, sampled and greedy, L2-hot and cold. */
function benchSampleRows(dev: 'cuda:0', batches: number[]): void {
  torch.prepareSampleRows(dev);
  for (const batch of batches) {
    torch.noGrad(() =>
      torch.scope(() => {
        const bytes = batch * V * 4;
        // enough copies of the logits to exceed the 60 MB L2, cycled through by the calls of the cold graph
        const copies = Math.max(2, Math.ceil((128 * 2 ** 20) / bytes));
        const logits = Array.from({ length: copies }, () => torch.randn([batch, V], { device: dev }).mul(3));
        const temperature = torch.full([batch], 1, { dtype: 'float32', device: dev });
        const u = torch.rand([batch], { device: dev });
        for (const mode of ['sampled', 'greedy'] as const) {
          const uniforms = mode === 'sampled' ? u : null;
          const time = (n: number) =>
            1e6 *
            secondsPerCallInGraph(
              Math.max(50, n),
              (i) => torch.sampleRows(logits[i % n], temperature, uniforms, null),
              {
                device: dev,
              },
            );
          const hot = time(1);
          const cold = time(copies);
          console.log(
            JSON.stringify({
              bench: 'sample-rows',
              device: dev,
              batch,
              vocab: V,
              mode,
              slices_env: process.env.AGENT_R1_SAMPLE_SLICES ?? null,
              l2_hot_us: +hot.toFixed(2),
              l2_cold_us: +cold.toFixed(2),
              cold_gb_per_s: Math.round(bytes / cold / 1e3),
            }),
          );
        }
      }),
    );
  }
}
