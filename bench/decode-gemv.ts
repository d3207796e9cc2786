// The matmuls of a decode step of 1-4 rows on the GPU: torch.gemvRows (our kernel, one warp per
// output column) against libtorch's linear (cuBLAS) at the Qwen3-0.6B and Qwen3-4B projection
// shapes and their lm_head, in one run. Prints per shape the microseconds per call of each, inside
// a CUDA graph as the engine's decode step runs them (bench/graph-time.ts), and the weight bytes
// read per second.
//
// GPU:   bash bench/device/run.sh build gemv     (after bench/device/bundle.sh here)
import * as torch from '../src/torch/index.js';
import type { Tensor } from '../src/torch/index.js';
import { secondsPerCallInGraph } from './graph-time.js';

const dev = 'cuda:0' as const;
// name, output columns N, inner K: q/k/v stacked, o, gate/up stacked, down, lm_head
const SHAPES: [string, number, number][] = [
  ['0.6b qkv', 4096, 1024],
  ['0.6b o', 1024, 2048],
  ['0.6b gate_up', 6144, 1024],
  ['0.6b down', 1024, 3072],
  ['0.6b lm_head', 151936, 1024],
  ['4b qkv', 6144, 2560],
  ['4b o', 2560, 4096],
  ['4b gate_up', 19456, 2560],
  ['4b down', 2560, 9728],
  ['4b lm_head', 151936, 2560],
];
const ITERS = 50;

/** Microseconds per call of f, cycling `copies` weights (so L2 does not hold one between calls), inside one CUDA graph. */
const time = (copies: number, f: (i: number) => Tensor): number =>
  1e6 * secondsPerCallInGraph(ITERS, (i) => f(i % copies), { device: dev });

if (!torch.cuda.isAvailable()) throw new Error('bench/decode-gemv.ts runs on CUDA');
torch.prepareFusedDecodeKernels(dev, 128);
for (const [name, N, K] of SHAPES) {
  torch.noGrad(() =>
    torch.scope(() => {
      // enough copies of the weight to exceed the 60 MB L2
      const copies = Math.max(2, Math.ceil((128 * 2 ** 20) / (N * K * 2)));
      const ws = Array.from({ length: copies }, () => torch.randn([N, K], { device: dev }).mul(0.02).to('bfloat16'));
      for (const M of [1, 4]) {
        const x = torch.randn([M, K], { device: dev }).to('bfloat16');
        const ours = time(copies, (i) => torch.gemvRows(x, ws[i], null));
        const ref = time(copies, (i) => torch.linear(x, ws[i]));
        const bytes = N * K * 2;
        console.log(
          JSON.stringify({
            bench: 'decode-gemv',
            shape: name,
            rows: M,
            n: N,
            k: K,
            ours_us: +ours.toFixed(1),
            torch_linear_us: +ref.toFixed(1),
            ratio_vs_torch: +(ref / ours).toFixed(3),
            ours_gb_per_s: Math.round(bytes / ours / 1e3),
            torch_gb_per_s: Math.round(bytes / ref / 1e3),
          }),
        );
      }
    }),
  );
}
