// CUDA graphs (torch.cuda.CUDAGraph's meaning): the CUDA work a function issues is captured once
// and replayed as one launch. A capture runs the function on a side stream after a device
// synchronize, with its allocations served from a private memory pool (shareable between graphs
// through `graphPoolHandle()`). The function must do only device work: no reads to the host, no
// host-to-device copies of new data. Its inputs are tensors made before the capture ("static
// inputs": refill them in place, e.g. `copy_`, before each replay) and its results are the graph's
// static outputs, rewritten in place by every replay.
import { native, type GraphHandle } from './native.js';
import { keep, scope } from './scope.js';
import { cudaIndex, type Device } from './device.js';

/** A memory pool several graphs may share (replay them one at a time, as torch.cuda.graph_pool_handle). */
export type GraphPool = readonly [number, number];

export function graphPoolHandle(): GraphPool {
  return native.cudaGraphPoolHandle();
}

export class CUDAGraph implements Disposable {
  private handle: GraphHandle | null = native.cudaGraphCreate();
  private outputs: unknown = undefined;

  /**
   * Captures the device work of `fn` (run once, in a scope; its kernels do not execute during
   * capture). Returns what `fn` returned: its tensors are kept as the graph's static outputs
   * (they hold meaningful values only after a `replay()`) and are disposed with the graph.
   */
  capture<T>(fn: () => T, o: { device?: Device; pool?: GraphPool } = {}): T {
    const g = this.live();
    native.cudaGraphCaptureBegin(g, o.pool ? [o.pool[0], o.pool[1]] : null, cudaIndex(o.device ?? 'cuda'));
    let out: T;
    try {
      out = scope(fn);
    } catch (e) {
      try {
        native.cudaGraphCaptureEnd(g);
      } catch {
        /* the function's error is the one to report */
      }
      throw e;
    }
    native.cudaGraphCaptureEnd(g);
    this.outputs = keep(out);
    return out;
  }

  /** Launches the captured work on the current stream (asynchronous, as any op). */
  replay(): void {
    native.cudaGraphReplay(this.live());
  }

  private live(): GraphHandle {
    if (!this.handle) throw new Error('the CUDA graph was disposed');
    return this.handle;
  }

  /** Frees the graph and its static outputs. */
  dispose(): void {
    if (!this.handle) return;
    native.cudaGraphReset(this.handle);
    this.handle = null;
    disposeAll(this.outputs);
    this.outputs = undefined;
  }
  [Symbol.dispose](): void {
    this.dispose();
  }
}

function disposeAll(v: unknown): void {
  if (typeof v !== 'object' || v === null) return;
  if ('dispose' in v && typeof (v as { dispose: unknown }).dispose === 'function' && 'handle' in v) {
    (v as { dispose(): void }).dispose();
    return;
  }
  const items = Array.isArray(v) ? v : v instanceof Map ? [...v.values()] : Object.values(v);
  for (const x of items) disposeAll(x);
}
