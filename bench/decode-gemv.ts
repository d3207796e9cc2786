// The matmuls of a decode step of 1-4 rows on the GPU (and of 64 and 256 through libtorch alone), in one run:
// - per matmul: torch.gemvRows (our kernel, one warp per output row) against libtorch's linear
//   (cuBLAS) at the Qwen3-0.6B and Qwen3-4B projection shapes and their lm_head;
// - per layer: the four matmuls of one layer as the fused trunk runs them (src/engine/fused-decode.ts:
//   the norms and silu * up folded into gemvRows), with dependent launches on and off, against
//   addRmsNorm / siluMul kernels and libtorch's linear.
// Prints microseconds per call inside a CUDA graph, as the engine's decode step runs them
// (bench/graph-time.ts), and the weight bytes read per second.
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
// hidden, q/k/v rows, attention output width, intermediate
const LAYERS: [string, number, number, number, number][] = [
  ['0.6b', 1024, 4096, 2048, 3072],
  ['4b', 2560, 6144, 4096, 9728],
];

/** Microseconds per call of f, cycling `copies` weights (so L2 does not hold one between calls), inside one CUDA graph. */
const time = (copies: number, f: (i: number) => unknown): number =>
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
      // batches too large for gemvRows: libtorch's linear alone (cuBLAS), what the batch-64 and 256 steps run
      for (const M of [64, 256]) {
        const x = torch.randn([M, K], { device: dev }).to('bfloat16');
        const ref = time(copies, (i) => torch.linear(x, ws[i]));
        console.log(
          JSON.stringify({
            bench: 'decode-linear',
            shape: name,
            rows: M,
            n: N,
            k: K,
            torch_linear_us: +ref.toFixed(1),
            torch_gb_per_s: Math.round((N * K * 2) / ref / 1e3),
          }),
        );
      }
    }),
  );
}

for (const [name, H, QKV, A, I] of LAYERS) {
  torch.noGrad(() =>
    torch.scope(() => {
      const bytes = (QKV * H + H * A + 2 * I * H + H * I) * 2;
      const copies = Math.max(2, Math.ceil((128 * 2 ** 20) / bytes));
      const w = (n: number, k: number) => torch.randn([n, k], { device: dev }).mul(0.02).to('bfloat16');
      const layers = Array.from({ length: copies }, () => ({
        qkv: w(QKV, H),
        o: w(H, A),
        gateUp: w(2 * I, H),
        down: w(H, I),
        n1: torch.ones([H], { device: dev, dtype: 'bfloat16' }),
        n2: torch.ones([H], { device: dev, dtype: 'bfloat16' }),
      }));
      // the layer as the unfused trunk runs it: norm kernels, silu * up and libtorch's linear
      const unfused = (x: Tensor, res: Tensor, attn: Tensor) => (i: number) => {
        const l = layers[i];
        const n1 = torch.addRmsNorm(x, res, l.n1, 1e-6);
        const qkv = torch.linear(n1.out, l.qkv);
        const o = torch.linear(attn, l.o);
        const n2 = torch.addRmsNorm(o, n1.residual, l.n2, 1e-6);
        return [qkv, torch.linear(torch.siluMul(torch.linear(n2.out, l.gateUp)), l.down)];
      };
      for (const M of [1, 4]) {
        const x = torch.randn([M, H], { device: dev }).to('bfloat16');
        const res = torch.randn([M, H], { device: dev }).to('bfloat16');
        const attn = torch.randn([M, A], { device: dev }).to('bfloat16');
        // the attention's output stands in for what q/k/v feed (the bench times the matmuls)
        const fused = (i: number) => {
          const l = layers[i];
          const qkv = torch.addRmsNormGemvRows(x, res, l.n1, 1e-6, l.qkv, null);
          const o = torch.gemvRows(attn, l.o, null);
          const gu = torch.addRmsNormGemvRows(o, qkv.residual, l.n2, 1e-6, l.gateUp, null);
          return [qkv.out, torch.gemvRows(gu.out, l.down, null, { siluMul: true })];
        };
        const apart = unfused(x, res, attn);
        const ours = time(copies, fused);
        torch.setDependentLaunches(false);
        const oursSerial = time(copies, fused);
        torch.setDependentLaunches(true);
        const ref = time(copies, apart);
        console.log(
          JSON.stringify({
            bench: 'decode-gemv-layer',
            shape: name,
            rows: M,
            weight_bytes: bytes,
            ours_us: +ours.toFixed(1),
            ours_no_dependent_launch_us: +oursSerial.toFixed(1),
            torch_linear_us: +ref.toFixed(1),
            ratio_vs_torch: +(ref / ours).toFixed(3),
            ours_gb_per_s: Math.round(bytes / ours / 1e3),
            torch_gb_per_s: Math.round(bytes / ref / 1e3),
          }),
        );
      }
      // the batch-64 step's layer without its attention
      {
        const M = 64;
        const x = torch.randn([M, H], { device: dev }).to('bfloat16');
        const res = torch.randn([M, H], { device: dev }).to('bfloat16');
        const attn = torch.randn([M, A], { device: dev }).to('bfloat16');
        const apart = unfused(x, res, attn);
        const ref = time(copies, apart);
        console.log(
          JSON.stringify({
            bench: 'decode-linear-layer',
            shape: name,
            rows: M,
            weight_bytes: bytes,
            torch_linear_us: +ref.toFixed(1),
            torch_gb_per_s: Math.round(bytes / ref / 1e3),
          }),
        );
      }
    }),
  );
}
