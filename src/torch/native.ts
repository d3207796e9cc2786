// Loads the native addon (native/, built by `npm run build:native`). Internal:
// the public API is the rest of src/torch/.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UserError } from '../errors.js';
import type { ProfileEvent } from './profiler.js';

/** An opaque tensor handle owned by the native slab. */
export type Handle = object & { readonly __handle: unique symbol };
/** An opaque CUDA graph handle (freed by its finalizer or `cudaGraphReset`). */
export type GraphHandle = object & { readonly __graph: unique symbol };

export interface CudaMemoryStats {
  allocated: number;
  reserved: number;
  peakAllocated: number;
  peakReserved: number;
}

export interface NativeBinding {
  torchVersion: string;
  builtWithCuda: boolean;
  resolveOp(name: string, overload: string): number;
  callOp(id: number, ...args: unknown[]): unknown;
  opSchema(id: number): string;
  fromBytes(bytes: Uint8Array, dtype: number, shape: number[]): Handle;
  toBytes(h: Handle): ArrayBuffer;
  meta(h: Handle): number[];
  item(h: Handle): number | boolean;
  toString(h: Handle): string;
  dispose(h: Handle): void;
  disposeMany(hs: Handle[]): void;
  liveTensors(): number;
  isTensor(h: unknown): boolean;
  sameTensor(a: Handle, b: Handle): boolean;
  dataPtr(h: Handle): number;
  isGradEnabled(): boolean;
  setGradEnabled(on: boolean): void;
  setRequiresGrad(h: Handle, on: boolean): void;
  grad(h: Handle): Handle | null;
  setGrad(h: Handle, g: Handle | null): void;
  retainGrad(h: Handle): void;
  gradInfo(h: Handle): [boolean, string];
  backward(outputs: Handle[], grads: (Handle | null)[] | null, retainGraph: boolean, createGraph: boolean): void;
  gradOf(
    outputs: Handle[],
    inputs: Handle[],
    grads: (Handle | null)[] | null,
    retainGraph: boolean,
    allowUnused: boolean,
  ): (Handle | null)[];
  cudaIsAvailable(): boolean;
  cudaDeviceCount(): number;
  cudaSynchronize(device?: number): void;
  cudaSynchronizeAsync(device?: number): Promise<void>;
  cudaFenceAsync(device: number): Promise<void>;
  cudaMemoryStats(device: number): CudaMemoryStats;
  cudaMemoryInfo(device: number): { free: number; total: number };
  cudaResetPeak(device: number): void;
  cudaEmptyCache(): void;
  cudaGraphPoolHandle(): [number, number];
  cudaGraphCreate(): GraphHandle;
  cudaGraphCaptureBegin(g: GraphHandle, pool: [number, number] | null, device: number): void;
  cudaGraphCaptureEnd(g: GraphHandle): void;
  cudaGraphReplay(g: GraphHandle): void;
  cudaGraphReset(g: GraphHandle): void;
  pagedDecodeAttention(
    q: Handle,
    k: Handle,
    v: Handle,
    blockTables: Handle,
    positions: Handle,
    blockSize: number,
    scale: number,
    splits: number,
  ): Handle;
  pagedDecodeAttentionPrepare(device: number, headDim: number, group: number, blockSize: number): void;
  fusedAddRmsNorm(x: Handle, residual: Handle | null, weight: Handle, eps: number): [Handle, Handle | null];
  fusedQkNormRopeCache(
    qkv: Handle,
    norm: Handle | null,
    positions: Handle,
    invFreq: Handle,
    slots: Handle,
    kCache: Handle,
    vCache: Handle,
    numHeads: number,
    numKvHeads: number,
    headDim: number,
    eps: number,
  ): Handle;
  fusedSiluMul(gateUp: Handle): Handle;
  fusedCopyPinned(dst: Handle, src: Handle): void;
  fusedDecodePrepare(device: number, headDim: number): void;
  fusedSampleRows(
    logits: Handle,
    temperature: Handle,
    uniforms: Handle | null,
    greedy: Handle | null,
  ): [Handle, Handle];
  fusedSamplingPrepare(device: number): void;
  fusedGemvRows(
    x: Handle,
    weight: Handle,
    bias: Handle | null,
    mode: number,
    residual: Handle | null,
    normWeight: Handle | null,
    eps: number,
  ): [Handle, Handle | null];
  fusedDecodeTrunk(
    x: Handle,
    layers: (Handle | null)[],
    positions: Handle,
    slots: Handle,
    blockTables: Handle,
    invFreq: Handle,
    blockSize: number,
    eps: number,
    scale: number,
  ): [Handle, Handle];
  fusedDecodeTrunkUnsupported(
    device: number,
    hidden: number,
    numHeads: number,
    numKvHeads: number,
    headDim: number,
    intermediate: number,
    layers: number,
    rows: number,
    blockSize: number,
  ): string | null;
  fusedDecodeTrunkTrace(device: number): Handle | null;
  profilerStart(cuda: boolean): void;
  profilerStop(tracePath: string | null): ProfileEvent[];
  setDependentLaunches(on: boolean): void;
  dependentLaunches(): boolean;
  shareTensor(h: Handle): number;
  adoptTensor(id: number): Handle;
  releaseShared(id: number): void;
  manualSeed(seed: number): void;
  setNumThreads(n: number): void;
  getNumThreads(): number;
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function load(): NativeBinding {
  const candidates = [
    process.env.AGENT_R1_NATIVE,
    join(root, 'native', 'build', 'Release', 'agent_r1_native.node'),
    join(root, 'native', 'build', 'Debug', 'agent_r1_native.node'),
  ].filter((p): p is string => !!p);
  const path = candidates.find((p) => existsSync(p));
  if (!path) {
    throw new UserError(
      `agent-r1's native addon is not built (looked for ${candidates.join(', ')}). ` +
        'Build it with `npm run build:native`; it needs libtorch: `pip install torch==2.13.0` ' +
        '(CPU) in the python3 on PATH, or `export LIBTORCH=/path/to/libtorch`.',
    );
  }
  const require = createRequire(import.meta.url);
  try {
    return require(path) as NativeBinding;
  } catch (e) {
    throw new UserError(
      `agent-r1's native addon at ${path} failed to load: ${(e as Error).message}. ` +
        'If libtorch moved or changed version since the build, rebuild with `npm run build:native`.',
      { cause: e },
    );
  }
}

export const native: NativeBinding = load();
