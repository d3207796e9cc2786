// Times GPU work as the engine runs it: captured in one CUDA graph and replayed. Timed eagerly, a
// call of a few microseconds measures its launch from JS rather than the kernel.
import * as torch from '../src/torch/index.js';
import type { Device } from '../src/torch/index.js';

/**
 * Seconds per call of `call(i)` for i in [0, calls): one CUDA graph of all the calls (cycle through
 * enough distinct inputs that the L2 cache does not hold one between calls), best of `repeats`
 * timings of `passes` replays each.
 */
export function secondsPerCallInGraph(
  calls: number,
  call: (i: number) => unknown,
  o: { device: Device; repeats?: number; passes?: number },
): number {
  const { repeats = 10, passes = 5 } = o;
  const pass = () => {
    for (let i = 0; i < calls; i++) call(i);
  };
  torch.scope(pass); // warm-up: kernels loaded, allocator primed
  torch.cuda.synchronize();
  const graph = new torch.CUDAGraph();
  try {
    graph.capture(() => torch.scope(pass), { device: o.device });
    graph.replay();
    torch.cuda.synchronize();
    let best = Infinity;
    for (let r = 0; r < repeats; r++) {
      const t0 = performance.now();
      for (let p = 0; p < passes; p++) graph.replay();
      torch.cuda.synchronize();
      best = Math.min(best, (performance.now() - t0) / 1e3 / calls / passes);
    }
    return best;
  } finally {
    graph.dispose();
  }
}
