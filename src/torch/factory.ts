// Making tensors: from JS data, filled, ranges, random.
import { native } from './native.js';
import { aten } from './op.js';
import { dtypeCode, isFloating, itemSize, type DType } from './dtype.js';
import { checkDevice, type Device } from './device.js';
import { type Tensor, wrap } from './tensor.js';
import { TorchError } from './errors.js';

export interface TensorOptions {
  dtype?: DType;
  device?: Device;
  requiresGrad?: boolean;
}

const op = {
  zeros: aten('zeros'),
  ones: aten('ones'),
  full: aten('full'),
  empty: aten('empty', 'memory_format'),
  arange: aten('arange', 'start_step'),
  randn: aten('randn'),
  rand: aten('rand'),
  randint: aten('randint', 'low'),
  linspace: aten('linspace'),
  eye: aten('eye'),
  zerosLike: aten('zeros_like'),
  onesLike: aten('ones_like'),
  fullLike: aten('full_like'),
  randnLike: aten('randn_like'),
};

function finish(t: Tensor, opts: TensorOptions): Tensor {
  if (opts.requiresGrad) t.requiresGrad = true;
  return t;
}
const dt = (o: TensorOptions, fallback?: DType) =>
  (o.dtype ?? fallback) === undefined ? null : dtypeCode((o.dtype ?? fallback)!);
const dev = (o: TensorOptions) => (o.device ? checkDevice(o.device) : null);

export function zeros(shape: number[], opts: TensorOptions = {}): Tensor {
  return finish(op.zeros(shape, dt(opts, 'float32'), null, dev(opts), null), opts);
}
export function ones(shape: number[], opts: TensorOptions = {}): Tensor {
  return finish(op.ones(shape, dt(opts, 'float32'), null, dev(opts), null), opts);
}
export function full(shape: number[], value: number | boolean, opts: TensorOptions = {}): Tensor {
  return finish(op.full(shape, value, dt(opts), null, dev(opts), null), opts);
}
/** `pinMemory`: page-locked host memory (needs CUDA), which a non-blocking copy to or from a CUDA device leaves to the stream. */
export function empty(shape: number[], opts: TensorOptions & { pinMemory?: boolean } = {}): Tensor {
  return finish(op.empty(shape, dt(opts, 'float32'), null, dev(opts), opts.pinMemory ? true : null, null), opts);
}
/** Values start, start+step, ... below end (int64 for integer arguments, like Python). */
export function arange(start: number, end?: number, step = 1, opts: TensorOptions = {}): Tensor {
  if (end === undefined) [start, end] = [0, start];
  return finish(op.arange(start, end, step, dt(opts), null, dev(opts), null), opts);
}
export function linspace(start: number, end: number, steps: number, opts: TensorOptions = {}): Tensor {
  return finish(op.linspace(start, end, steps, dt(opts), null, dev(opts), null), opts);
}
export function eye(n: number, opts: TensorOptions = {}): Tensor {
  return finish(op.eye(n, dt(opts, 'float32'), null, dev(opts), null), opts);
}
/** Standard normal samples (seeded by manualSeed). */
export function randn(shape: number[], opts: TensorOptions = {}): Tensor {
  return finish(op.randn(shape, dt(opts, 'float32'), null, dev(opts), null), opts);
}
/** Uniform samples in [0, 1). */
export function rand(shape: number[], opts: TensorOptions = {}): Tensor {
  return finish(op.rand(shape, dt(opts, 'float32'), null, dev(opts), null), opts);
}
/** Integers uniform in [low, high). */
export function randint(low: number, high: number, shape: number[], opts: TensorOptions = {}): Tensor {
  return op.randint(low, high, shape, dt(opts, 'int64'), null, dev(opts), null);
}
export function zerosLike(t: Tensor, opts: TensorOptions = {}): Tensor {
  return op.zerosLike(t, dt(opts), null, dev(opts), null, null);
}
export function onesLike(t: Tensor, opts: TensorOptions = {}): Tensor {
  return op.onesLike(t, dt(opts), null, dev(opts), null, null);
}
export function fullLike(t: Tensor, value: number, opts: TensorOptions = {}): Tensor {
  return op.fullLike(t, value, dt(opts), null, dev(opts), null, null);
}
export function randnLike(t: Tensor): Tensor {
  return op.randnLike(t, null, null, null, null, null);
}

type Nested = number | boolean | bigint | Nested[];
type TypedData = Float32Array | Float64Array | Int32Array | BigInt64Array | Int16Array | Int8Array | Uint8Array;

function inferShape(data: Nested): number[] {
  const shape: number[] = [];
  let d: Nested = data;
  while (Array.isArray(d)) {
    shape.push(d.length);
    d = d[0] as Nested;
  }
  return shape;
}

function flatten(data: Nested, shape: number[], dim: number, out: (number | boolean | bigint)[]): void {
  if (dim === shape.length) {
    if (Array.isArray(data))
      throw new TorchError('tensor(): ragged nested array (deeper than its first element)', 'shape');
    out.push(data);
    return;
  }
  if (!Array.isArray(data) || data.length !== shape[dim]) {
    throw new TorchError(`tensor(): ragged nested array: expected length ${shape[dim]} at depth ${dim}`, 'shape');
  }
  for (const x of data) flatten(x, shape, dim + 1, out);
}

function bytesOf(values: ArrayLike<number | boolean | bigint>, dtype: DType): Uint8Array {
  const n = values.length;
  switch (dtype) {
    case 'float32':
      return new Uint8Array(Float32Array.from(values as ArrayLike<number>, Number).buffer);
    case 'float64':
      return new Uint8Array(Float64Array.from(values as ArrayLike<number>, Number).buffer);
    case 'int32':
      return new Uint8Array(Int32Array.from(values as ArrayLike<number>, Number).buffer);
    case 'int16':
      return new Uint8Array(Int16Array.from(values as ArrayLike<number>, Number).buffer);
    case 'int8':
      return new Uint8Array(Int8Array.from(values as ArrayLike<number>, Number).buffer);
    case 'uint8':
      return Uint8Array.from(values as ArrayLike<number>, Number);
    case 'bool':
      return Uint8Array.from(values as ArrayLike<number>, (v) => (v ? 1 : 0));
    case 'int64': {
      const a = new BigInt64Array(n);
      for (let i = 0; i < n; i++) {
        const v = values[i];
        if (typeof v === 'number' && !Number.isInteger(v))
          throw new TorchError(`tensor(): ${v} is not an integer (dtype int64)`, 'dtype');
        a[i] = BigInt(v as number);
      }
      return new Uint8Array(a.buffer);
    }
    default:
      throw new TorchError(
        `tensor(): make ${dtype} tensors from float32 data and convert with .to('${dtype}')`,
        'dtype',
      );
  }
}

/**
 * A tensor from JS data: a number, nested arrays, or a typed array (with `shape`).
 * The dtype defaults from the data as in Python: float32 for numbers with a fraction... and for
 * any JS number array unless every value is an integer (then int64); booleans give bool.
 */
export function tensor(data: Nested | TypedData, opts: TensorOptions & { shape?: number[] } = {}): Tensor {
  let shape: number[];
  let values: ArrayLike<number | boolean | bigint>;
  let inferred: DType;
  if (ArrayBuffer.isView(data)) {
    values = data as ArrayLike<number | bigint>;
    shape = opts.shape ?? [values.length];
    inferred =
      data instanceof Float32Array
        ? 'float32'
        : data instanceof Float64Array
          ? 'float64'
          : data instanceof Int32Array
            ? 'int32'
            : data instanceof BigInt64Array
              ? 'int64'
              : data instanceof Int16Array
                ? 'int16'
                : data instanceof Int8Array
                  ? 'int8'
                  : 'uint8';
  } else {
    shape = inferShape(data as Nested);
    const flat: (number | boolean | bigint)[] = [];
    flatten(data as Nested, shape, 0, flat);
    values = flat;
    inferred =
      flat.length > 0 && flat.every((v) => typeof v === 'boolean')
        ? 'bool'
        : flat.every((v) => typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))) && flat.length > 0
          ? 'int64'
          : 'float32';
    if (opts.shape) shape = opts.shape;
  }
  const dtype = opts.dtype ?? inferred;
  dtypeCode(dtype); // rejects an unknown dtype name up front
  const count = shape.reduce((a, b) => a * b, 1);
  if (count !== values.length) {
    throw new TorchError(`tensor(): ${values.length} values do not fill shape [${shape.join(', ')}]`, 'shape');
  }
  const direct = dtype === 'float16' || dtype === 'bfloat16' ? 'float32' : dtype;
  // A typed array already in the target layout is copied as bytes, not element by element.
  const bytes =
    ArrayBuffer.isView(data) && inferred === direct
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : bytesOf(values, direct);
  let t = wrap(native.fromBytes(bytes, dtypeCode(direct), shape)) as Tensor;
  if (direct !== dtype || (opts.device && opts.device !== 'cpu')) {
    const moved = t.to({ dtype, device: opts.device });
    t.dispose();
    t = moved;
  }
  if (opts.requiresGrad) {
    if (!isFloating(dtype)) throw new TorchError(`requiresGrad needs a floating dtype, got ${dtype}`, 'dtype');
    t.requiresGrad = true;
  }
  return t;
}

/** A CPU tensor over raw little-endian bytes (as stored in safetensors), copied. */
export function fromBytes(bytes: Uint8Array, dtype: DType, shape: number[]): Tensor {
  const need = shape.reduce((a, b) => a * b, 1) * itemSize[dtype];
  if (bytes.byteLength !== need) {
    throw new TorchError(
      `fromBytes: ${bytes.byteLength} bytes for shape [${shape.join(', ')}] of ${dtype} (needs ${need})`,
      'shape',
    );
  }
  return wrap(native.fromBytes(bytes, dtypeCode(dtype), shape));
}

/** The raw bytes of a tensor's data (contiguous, on the CPU). */
export function toBytes(t: Tensor): Uint8Array {
  return new Uint8Array(native.toBytes(t.handle$));
}
