// The Tensor class: one native handle, shape/dtype/device, and the methods the
// models and RL losses use. Each method is one dispatcher call (aten/op.ts).
import { native, type Handle } from './native.js';
import { aten } from './op.js';
import { dtypeCode, dtypeName, itemSize, typedArrayOf, type DType } from './dtype.js';
import { checkDevice, deviceName, type Device } from './device.js';
import { release, track, type Scope, type Tracked } from './scope.js';
import { TorchError, toTorchError } from './errors.js';

export type Scalar = number | boolean;
export type TensorOrScalar = Tensor | Scalar;

/** Wraps what an op returned: handles become Tensors (also inside arrays). */
export function wrap(raw: unknown): any {
  if (raw === null || raw === undefined || typeof raw !== 'object') return raw;
  if (Array.isArray(raw)) return raw.map(wrap);
  return new Tensor(raw as Handle);
}

const op = {
  add: aten('add', 'Tensor'),
  sub: aten('sub', 'Tensor'),
  mul: aten('mul', 'Tensor'),
  div: aten('div', 'Tensor'),
  divMode: aten('div', 'Tensor_mode'),
  rsub: aten('rsub', 'Tensor'),
  powS: aten('pow', 'Tensor_Scalar'),
  powT: aten('pow', 'Tensor_Tensor'),
  neg: aten('neg'),
  exp: aten('exp'),
  log: aten('log'),
  log1p: aten('log1p'),
  expm1: aten('expm1'),
  sqrt: aten('sqrt'),
  rsqrt: aten('rsqrt'),
  abs: aten('abs'),
  tanh: aten('tanh'),
  sigmoid: aten('sigmoid'),
  silu: aten('silu'),
  relu: aten('relu'),
  sin: aten('sin'),
  cos: aten('cos'),
  reciprocal: aten('reciprocal'),
  sign: aten('sign'),
  floor: aten('floor'),
  ceil: aten('ceil'),
  round: aten('round'),
  gelu: aten('gelu'),
  logicalNot: aten('logical_not'),
  logicalAnd: aten('logical_and'),
  logicalOr: aten('logical_or'),
  maximum: aten('maximum'),
  minimum: aten('minimum'),
  isnan: aten('isnan'),
  isfinite: aten('isfinite'),
  eq: aten('eq', 'Tensor'),
  ne: aten('ne', 'Tensor'),
  lt: aten('lt', 'Tensor'),
  le: aten('le', 'Tensor'),
  gt: aten('gt', 'Tensor'),
  ge: aten('ge', 'Tensor'),
  clamp: aten('clamp'),
  clampT: aten('clamp', 'Tensor'),
  where: aten('where', 'self'),
  maskedFillS: aten('masked_fill', 'Scalar'),
  maskedFillT: aten('masked_fill', 'Tensor'),
  softmax: aten('softmax', 'int'),
  logSoftmax: aten('log_softmax', 'int'),
  sumAll: aten('sum'),
  sumDim: aten('sum', 'dim_IntList'),
  meanAll: aten('mean'),
  meanDim: aten('mean', 'dim'),
  maxAll: aten('max'),
  maxDim: aten('max', 'dim'),
  minAll: aten('min'),
  minDim: aten('min', 'dim'),
  argmax: aten('argmax'),
  argmin: aten('argmin'),
  logsumexp: aten('logsumexp'),
  std: aten('std', 'correction'),
  var: aten('var', 'correction'),
  norm: aten('linalg_vector_norm'),
  all: aten('all'),
  any: aten('any'),
  prod: aten('prod'),
  matmul: aten('matmul'),
  mm: aten('mm'),
  bmm: aten('bmm'),
  gather: aten('gather'),
  scatterT: aten('scatter', 'src'),
  scatterS: aten('scatter', 'value'),
  scatterAdd: aten('scatter_add'),
  indexSelect: aten('index_select'),
  index: aten('index', 'Tensor'),
  indexPut: aten('index_put'),
  narrow: aten('narrow'),
  slice: aten('slice', 'Tensor'),
  select: aten('select', 'int'),
  view: aten('view'),
  reshape: aten('reshape'),
  permute: aten('permute'),
  transpose: aten('transpose', 'int'),
  contiguous: aten('contiguous'),
  expand: aten('expand'),
  unsqueeze: aten('unsqueeze'),
  squeezeAll: aten('squeeze'),
  squeezeDim: aten('squeeze', 'dim'),
  flatten: aten('flatten', 'using_ints'),
  split: aten('split', 'Tensor'),
  splitSizes: aten('split_with_sizes'),
  chunk: aten('chunk'),
  repeat: aten('repeat'),
  flip: aten('flip'),
  triu: aten('triu'),
  tril: aten('tril'),
  topk: aten('topk'),
  sort: aten('sort'),
  cumsum: aten('cumsum'),
  multinomial: aten('multinomial'),
  to: aten('to', 'dtype_layout'),
  detach: aten('detach'),
  clone: aten('clone'),
  fill_: aten('fill_', 'Scalar'),
  zero_: aten('zero_'),
  copy_: aten('copy_'),
  add_: aten('add_', 'Tensor'),
  mul_: aten('mul_', 'Tensor'),
  maskedFill_: aten('masked_fill_', 'Scalar'),
  requiresGrad_: aten('requires_grad_'),
};

/** Gradient mode checks use this; set by autograd.ts to avoid an import cycle. */
export class Tensor implements Tracked, Disposable {
  /** @internal */ handle: Handle | null;
  /** @internal */ owner: Scope | null = null;
  /** @internal */ guarded = false;
  private meta: number[] | undefined;

  /** @internal Tensors are made by ops and factories (torch.tensor, torch.zeros...), not by `new`. */
  constructor(handle: Handle) {
    this.handle = handle;
    track(this);
  }

  /** @internal The live handle; a clear error once disposed. */
  get handle$(): Handle {
    if (this.handle === null) {
      throw new TorchError(
        'tensor was already disposed (its scope ended, or dispose() was called); ' +
          'return it from the scope or keep() it to use it later',
        'disposed',
      );
    }
    return this.handle;
  }

  private info(): number[] {
    if (this.meta === undefined) this.meta = native.meta(this.handle$);
    return this.meta;
  }

  get shape(): number[] {
    return this.info().slice(4);
  }
  get ndim(): number {
    return this.info().length - 4;
  }
  get dtype(): DType {
    return dtypeName(this.info()[0]);
  }
  get device(): Device {
    const m = this.info();
    return deviceName(m[1], m[2]);
  }
  /** Bytes per element (torch.Tensor.itemsize). */
  get itemsize(): number {
    return itemSize[this.dtype];
  }
  get numel(): number {
    let n = 1;
    const m = this.info();
    for (let i = 4; i < m.length; i++) n *= m[i];
    return n;
  }
  /** Size of one dimension (negative counts from the end). */
  size(dim: number): number {
    const s = this.shape;
    return s[dim < 0 ? s.length + dim : dim];
  }
  get isDisposed(): boolean {
    return this.handle === null;
  }

  dispose(): void {
    if (this.handle === null) return;
    release(this);
    native.dispose(this.handle);
    this.handle = null;
  }
  [Symbol.dispose](): void {
    this.dispose();
  }

  /** The address of the first element in device (or host) memory (PyTorch's data_ptr): whether two tensors, even one freed since, lie at the same place. */
  dataPtr(): number {
    return native.dataPtr(this.handle$);
  }

  // ---- autograd -------------------------------------------------------------------------
  get requiresGrad(): boolean {
    return native.meta(this.handle$)[3] === 1;
  }
  set requiresGrad(on: boolean) {
    native.setRequiresGrad(this.handle$, on);
    this.meta = undefined;
  }
  /** Marks a leaf as needing gradients; returns this. */
  requiresGrad_(on = true): this {
    this.requiresGrad = on;
    return this;
  }
  /** The accumulated gradient of a leaf (a new handle each call; dispose or scope it), or null. */
  get grad(): Tensor | null {
    return wrap(native.grad(this.handle$));
  }
  set grad(g: Tensor | null) {
    native.setGrad(this.handle$, g === null ? null : g.handle$);
  }
  get isLeaf(): boolean {
    return native.gradInfo(this.handle$)[0];
  }
  get gradFn(): string {
    return native.gradInfo(this.handle$)[1];
  }
  retainGrad(): this {
    native.retainGrad(this.handle$);
    return this;
  }
  /** Backpropagates from this tensor (a scalar, or pass `gradient` of this tensor's shape). */
  backward(gradient?: Tensor, opts: { retainGraph?: boolean; createGraph?: boolean } = {}): void {
    try {
      native.backward([this.handle$], gradient ? [gradient.handle$] : null, !!opts.retainGraph, !!opts.createGraph);
    } catch (e) {
      throw toTorchError(e, 'backward');
    }
  }
  detach(): Tensor {
    return op.detach(this);
  }
  clone(): Tensor {
    return op.clone(this);
  }

  // ---- data in and out ---------------------------------------------------------------------
  /** The single value of a one-element tensor (synchronises with the device). */
  item(): number {
    const v = native.item(this.handle$);
    return typeof v === 'boolean' ? Number(v) : v;
  }
  /** A flat typed array copy of the data (16-bit floats as raw Uint16 bits; use float() first for values). */
  toTypedArray(): ReturnType<typeof typedArrayOf> {
    return typedArrayOf(this.dtype, native.toBytes(this.handle$));
  }
  /** A flat array of numbers (int64 converted with Number()). 16-bit floats are converted through float32. */
  toArray(): number[] {
    const dt = this.dtype;
    if (dt === 'float16' || dt === 'bfloat16') {
      const f = this.to('float32');
      try {
        return Array.from(f.toTypedArray() as Float32Array);
      } finally {
        f.dispose();
      }
    }
    const arr = this.toTypedArray();
    return arr instanceof BigInt64Array ? Array.from(arr, Number) : Array.from(arr as ArrayLike<number>);
  }
  /** Nested arrays in the tensor's shape. */
  toNested(): unknown {
    const flat = this.toArray();
    const shape = this.shape;
    const build = (dim: number, offset: number): unknown => {
      if (dim === shape.length) return flat[offset];
      const stride = shape.slice(dim + 1).reduce((a, b) => a * b, 1);
      return Array.from({ length: shape[dim] }, (_, i) => build(dim + 1, offset + i * stride));
    };
    return build(0, 0);
  }
  toString(): string {
    return this.handle ? native.toString(this.handle) : 'Tensor(disposed)';
  }

  // ---- conversion ------------------------------------------------------------------------------
  /** To a dtype and/or device; returns this tensor's data unchanged (a new handle) when nothing changes. */
  to(target: DType | Device | { dtype?: DType; device?: Device; nonBlocking?: boolean; copy?: boolean }): Tensor {
    let dtype: DType | undefined;
    let device: Device | undefined;
    let nonBlocking = false;
    let copy = false;
    if (typeof target === 'string') {
      if (target === 'cpu' || target.startsWith('cuda')) device = checkDevice(target);
      else dtype = target as DType;
    } else {
      ({ dtype, device } = target);
      nonBlocking = !!target.nonBlocking;
      copy = !!target.copy;
    }
    return op.to(
      this,
      dtype === undefined ? null : dtypeCode(dtype),
      null,
      device === undefined ? null : checkDevice(device),
      null,
      nonBlocking,
      copy,
      null,
    );
  }
  float(): Tensor {
    return this.to('float32');
  }
  double(): Tensor {
    return this.to('float64');
  }
  half(): Tensor {
    return this.to('float16');
  }
  bfloat16(): Tensor {
    return this.to('bfloat16');
  }
  long(): Tensor {
    return this.to('int64');
  }
  int(): Tensor {
    return this.to('int32');
  }
  bool(): Tensor {
    return this.to('bool');
  }
  cuda(index = 0): Tensor {
    return this.to(`cuda:${index}`);
  }
  cpu(): Tensor {
    return this.to('cpu');
  }

  // ---- elementwise ---------------------------------------------------------------------------
  add(other: TensorOrScalar, alpha: number = 1): Tensor {
    return op.add(this, other, alpha);
  }
  sub(other: TensorOrScalar, alpha: number = 1): Tensor {
    return op.sub(this, other, alpha);
  }
  /** other - this */
  rsub(other: TensorOrScalar): Tensor {
    return op.rsub(this, other, 1);
  }
  mul(other: TensorOrScalar): Tensor {
    return op.mul(this, other);
  }
  div(other: TensorOrScalar, roundingMode?: 'trunc' | 'floor'): Tensor {
    return roundingMode ? op.divMode(this, other, roundingMode) : op.div(this, other);
  }
  pow(exponent: TensorOrScalar): Tensor {
    return exponent instanceof Tensor ? op.powT(this, exponent) : op.powS(this, exponent);
  }
  square(): Tensor {
    return this.pow(2);
  }
  neg(): Tensor {
    return op.neg(this);
  }
  exp(): Tensor {
    return op.exp(this);
  }
  log(): Tensor {
    return op.log(this);
  }
  log1p(): Tensor {
    return op.log1p(this);
  }
  expm1(): Tensor {
    return op.expm1(this);
  }
  sqrt(): Tensor {
    return op.sqrt(this);
  }
  rsqrt(): Tensor {
    return op.rsqrt(this);
  }
  abs(): Tensor {
    return op.abs(this);
  }
  tanh(): Tensor {
    return op.tanh(this);
  }
  sigmoid(): Tensor {
    return op.sigmoid(this);
  }
  silu(): Tensor {
    return op.silu(this);
  }
  relu(): Tensor {
    return op.relu(this);
  }
  gelu(approximate: 'none' | 'tanh' = 'none'): Tensor {
    return op.gelu(this, approximate);
  }
  sin(): Tensor {
    return op.sin(this);
  }
  cos(): Tensor {
    return op.cos(this);
  }
  reciprocal(): Tensor {
    return op.reciprocal(this);
  }
  sign(): Tensor {
    return op.sign(this);
  }
  floor(): Tensor {
    return op.floor(this);
  }
  ceil(): Tensor {
    return op.ceil(this);
  }
  round(): Tensor {
    return op.round(this);
  }
  maximum(other: Tensor): Tensor {
    return op.maximum(this, other);
  }
  minimum(other: Tensor): Tensor {
    return op.minimum(this, other);
  }
  clamp(min?: number | null, max?: number | null): Tensor {
    return op.clamp(this, min ?? null, max ?? null);
  }
  clampTensor(min: Tensor | null, max: Tensor | null): Tensor {
    return op.clampT(this, min, max);
  }
  isnan(): Tensor {
    return op.isnan(this);
  }
  isfinite(): Tensor {
    return op.isfinite(this);
  }

  eq(other: TensorOrScalar): Tensor {
    return op.eq(this, other);
  }
  ne(other: TensorOrScalar): Tensor {
    return op.ne(this, other);
  }
  lt(other: TensorOrScalar): Tensor {
    return op.lt(this, other);
  }
  le(other: TensorOrScalar): Tensor {
    return op.le(this, other);
  }
  gt(other: TensorOrScalar): Tensor {
    return op.gt(this, other);
  }
  ge(other: TensorOrScalar): Tensor {
    return op.ge(this, other);
  }
  logicalNot(): Tensor {
    return op.logicalNot(this);
  }
  logicalAnd(other: Tensor): Tensor {
    return op.logicalAnd(this, other);
  }
  logicalOr(other: Tensor): Tensor {
    return op.logicalOr(this, other);
  }
  /** where(mask, value): value where mask is true, this elsewhere. */
  maskedFill(mask: Tensor, value: TensorOrScalar): Tensor {
    return value instanceof Tensor ? op.maskedFillT(this, mask, value) : op.maskedFillS(this, mask, value);
  }
  softmax(dim: number, dtype?: DType): Tensor {
    return op.softmax(this, dim, dtype ? dtypeCode(dtype) : null);
  }
  logSoftmax(dim: number, dtype?: DType): Tensor {
    return op.logSoftmax(this, dim, dtype ? dtypeCode(dtype) : null);
  }

  // ---- reductions ------------------------------------------------------------------------------
  sum(dim?: number | number[], keepdim = false, dtype?: DType): Tensor {
    const dt = dtype ? dtypeCode(dtype) : null;
    return dim === undefined ? op.sumAll(this, dt) : op.sumDim(this, dim, keepdim, dt);
  }
  mean(dim?: number | number[], keepdim = false, dtype?: DType): Tensor {
    const dt = dtype ? dtypeCode(dtype) : null;
    return dim === undefined ? op.meanAll(this, dt) : op.meanDim(this, dim, keepdim, dt);
  }
  /** The largest value (no dim), or [values, indices] along `dim`. */
  max(): Tensor;
  max(dim: number, keepdim?: boolean): [Tensor, Tensor];
  max(dim?: number, keepdim = false): Tensor | [Tensor, Tensor] {
    return dim === undefined ? op.maxAll(this) : op.maxDim(this, dim, keepdim);
  }
  min(): Tensor;
  min(dim: number, keepdim?: boolean): [Tensor, Tensor];
  min(dim?: number, keepdim = false): Tensor | [Tensor, Tensor] {
    return dim === undefined ? op.minAll(this) : op.minDim(this, dim, keepdim);
  }
  argmax(dim?: number, keepdim = false): Tensor {
    return op.argmax(this, dim ?? null, keepdim);
  }
  argmin(dim?: number, keepdim = false): Tensor {
    return op.argmin(this, dim ?? null, keepdim);
  }
  logsumexp(dim: number | number[], keepdim = false): Tensor {
    return op.logsumexp(this, dim, keepdim);
  }
  /** Standard deviation; `correction` 1 (default) is the unbiased N-1 estimator. */
  std(dim?: number | number[], opts: { correction?: number; keepdim?: boolean } = {}): Tensor {
    return op.std(this, dim ?? null, opts.correction ?? 1, !!opts.keepdim);
  }
  var(dim?: number | number[], opts: { correction?: number; keepdim?: boolean } = {}): Tensor {
    return op.var(this, dim ?? null, opts.correction ?? 1, !!opts.keepdim);
  }
  /** Vector p-norm over `dim` (all elements by default). */
  norm(ord = 2, dim?: number | number[], keepdim = false): Tensor {
    return op.norm(this, ord, dim ?? null, keepdim, null);
  }
  all(): Tensor {
    return op.all(this);
  }
  any(): Tensor {
    return op.any(this);
  }
  prod(): Tensor {
    return op.prod(this, null);
  }

  // ---- linear algebra -------------------------------------------------------------------------
  matmul(other: Tensor): Tensor {
    return op.matmul(this, other);
  }
  mm(other: Tensor): Tensor {
    return op.mm(this, other);
  }
  bmm(other: Tensor): Tensor {
    return op.bmm(this, other);
  }

  // ---- indexing ----------------------------------------------------------------------------------
  gather(dim: number, index: Tensor): Tensor {
    return op.gather(this, dim, index, false);
  }
  scatter(dim: number, index: Tensor, src: TensorOrScalar): Tensor {
    return src instanceof Tensor ? op.scatterT(this, dim, index, src) : op.scatterS(this, dim, index, src);
  }
  scatterAdd(dim: number, index: Tensor, src: Tensor): Tensor {
    return op.scatterAdd(this, dim, index, src);
  }
  indexSelect(dim: number, index: Tensor): Tensor {
    return op.indexSelect(this, dim, index);
  }
  /** Advanced indexing: one index tensor (or null for ':') per leading dimension. */
  index(indices: (Tensor | null)[]): Tensor {
    return op.index(this, indices);
  }
  indexPut(indices: (Tensor | null)[], values: Tensor, accumulate = false): Tensor {
    return op.indexPut(this, indices, values, accumulate);
  }
  narrow(dim: number, start: number, length: number): Tensor {
    return op.narrow(this, dim, start, length);
  }
  /** Python's t[..., start:end:step] along `dim` (negative bounds count from the end). */
  slice(dim: number, start?: number | null, end?: number | null, step = 1): Tensor {
    return op.slice(this, dim, start ?? null, end ?? null, step);
  }
  select(dim: number, index: number): Tensor {
    return op.select(this, dim, index);
  }

  // ---- shape --------------------------------------------------------------------------------------
  view(...shape: number[]): Tensor {
    return op.view(this, shape);
  }
  reshape(...shape: number[]): Tensor {
    return op.reshape(this, shape);
  }
  permute(...dims: number[]): Tensor {
    return op.permute(this, dims);
  }
  transpose(dim0: number, dim1: number): Tensor {
    return op.transpose(this, dim0, dim1);
  }
  get T(): Tensor {
    return this.transpose(-2, -1);
  }
  contiguous(): Tensor {
    return op.contiguous(this, 0);
  }
  expand(...shape: number[]): Tensor {
    return op.expand(this, shape, false);
  }
  unsqueeze(dim: number): Tensor {
    return op.unsqueeze(this, dim);
  }
  squeeze(dim?: number): Tensor {
    return dim === undefined ? op.squeezeAll(this) : op.squeezeDim(this, dim);
  }
  flatten(startDim = 0, endDim = -1): Tensor {
    return op.flatten(this, startDim, endDim);
  }
  /** Pieces of `size` along dim, or pieces of the given sizes. */
  split(sizes: number | number[], dim = 0): Tensor[] {
    return typeof sizes === 'number' ? op.split(this, sizes, dim) : op.splitSizes(this, sizes, dim);
  }
  chunk(chunks: number, dim = 0): Tensor[] {
    return op.chunk(this, chunks, dim);
  }
  repeat(...repeats: number[]): Tensor {
    return op.repeat(this, repeats);
  }
  flip(...dims: number[]): Tensor {
    return op.flip(this, dims);
  }
  triu(diagonal = 0): Tensor {
    return op.triu(this, diagonal);
  }
  tril(diagonal = 0): Tensor {
    return op.tril(this, diagonal);
  }

  // ---- sorting and sampling ----------------------------------------------------------------------
  topk(k: number, dim = -1, largest = true, sorted = true): [Tensor, Tensor] {
    return op.topk(this, k, dim, largest, sorted);
  }
  sort(dim = -1, descending = false): [Tensor, Tensor] {
    return op.sort(this, dim, descending);
  }
  cumsum(dim: number, dtype?: DType): Tensor {
    return op.cumsum(this, dim, dtype ? dtypeCode(dtype) : null);
  }
  /** Samples indices from the rows of this (non-negative) probability tensor. */
  multinomial(numSamples: number, replacement = false): Tensor {
    return op.multinomial(this, numSamples, replacement, null);
  }

  // ---- in place (return this) --------------------------------------------------------------------
  private inPlace(result: Tensor): this {
    result.dispose();
    this.meta = undefined;
    return this;
  }
  fill_(value: Scalar): this {
    return this.inPlace(op.fill_(this, value));
  }
  zero_(): this {
    return this.inPlace(op.zero_(this));
  }
  /**
   * Copies `src` into this tensor. `nonBlocking`: between pinned host memory and a CUDA device the
   * copy is queued on the stream and the call returns at once (the host must leave the pinned memory
   * alone until the stream has done it); otherwise it has no effect.
   */
  copy_(src: Tensor, opts: { nonBlocking?: boolean } = {}): this {
    return this.inPlace(op.copy_(this, src, opts.nonBlocking ?? false));
  }
  add_(other: TensorOrScalar, alpha = 1): this {
    return this.inPlace(op.add_(this, other, alpha));
  }
  mul_(other: TensorOrScalar): this {
    return this.inPlace(op.mul_(this, other));
  }
  maskedFill_(mask: Tensor, value: Scalar): this {
    return this.inPlace(op.maskedFill_(this, mask, value));
  }
}
