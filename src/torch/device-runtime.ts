// CUDA queries, RNG seeds and threads.
import { native, type CudaMemoryStats } from './native.js';

export const cuda = {
  isAvailable: (): boolean => native.cudaIsAvailable(),
  deviceCount: (): number => native.cudaDeviceCount(),
  /** Blocks until the device has finished its queued work. */
  synchronize: (device = -1): void => native.cudaSynchronize(device),
  /** Waits for the device off the main thread: the event loop keeps running meanwhile. */
  synchronizeAsync: (device = -1): Promise<void> => native.cudaSynchronizeAsync(device),
  /**
   * Marks the work queued so far on `device`'s current stream and waits, off the main thread, until
   * the device has done it; work queued after the call may still run. (An event recorded and synchronized.)
   */
  fenceAsync: (device = 0): Promise<void> => native.cudaFenceAsync(device),
  /** Caching-allocator statistics in bytes. */
  memoryStats: (device = 0): CudaMemoryStats => native.cudaMemoryStats(device),
  /** The device's free and total memory in bytes, as the driver reports them (cudaMemGetInfo). */
  memoryInfo: (device = 0): { free: number; total: number } => native.cudaMemoryInfo(device),
  resetPeakMemoryStats: (device = 0): void => native.cudaResetPeak(device),
  emptyCache: (): void => native.cudaEmptyCache(),
};

/** Seeds the CPU and every CUDA generator: CPU runs are then reproducible. */
export function manualSeed(seed: number): void {
  native.manualSeed(seed);
}
export function setNumThreads(n: number): void {
  native.setNumThreads(n);
}
export function getNumThreads(): number {
  return native.getNumThreads();
}
export const torchVersion: string = native.torchVersion;
export type { CudaMemoryStats };
