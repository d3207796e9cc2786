// libtorch's profiler (Kineto, native/src/profiler.cc): the ops run on the calling thread and, with
// `cuda`, every kernel the device runs (CUPTI), those of replayed CUDA graphs one by one. Profiles
// open in chrome://tracing or Perfetto (ui.perfetto.dev); bench/kernel-timeline.ts reads the kernels.
import { native } from './native.js';
import { withTorchError } from './errors.js';

/** An op on the profiled thread (device 'cpu') or a kernel the device ran ('cuda'); times in ns from the profile's start. */
export interface ProfileEvent {
  name: string;
  device: 'cpu' | 'cuda';
  startNs: number;
  durationNs: number;
}

/** Starts the profiler: this thread's ops, and with `cuda` the device's kernels. One profile at a time. */
export function startProfiler(o: { cuda?: boolean } = {}): void {
  withTorchError('startProfiler', [], () => native.profilerStart(o.cuda ?? false));
}

/** Stops the profiler and returns its events; with `tracePath`, also writes the Chrome trace there. */
export function stopProfiler(o: { tracePath?: string } = {}): ProfileEvent[] {
  return withTorchError('stopProfiler', [], () => native.profilerStop(o.tracePath ?? null));
}

/** Runs `fn` under the profiler (stopped whether or not it throws); its result and the events. */
export async function profile<T>(
  fn: () => T | Promise<T>,
  o: { cuda?: boolean; tracePath?: string } = {},
): Promise<{ result: T; events: ProfileEvent[] }> {
  startProfiler(o);
  let result: T;
  try {
    result = await fn();
  } catch (e) {
    stopProfiler();
    throw e;
  }
  return { result, events: stopProfiler(o) };
}
