import { AgentR1Error } from '../errors.js';

export type TorchErrorKind =
  | 'shape'
  | 'dtype'
  | 'device'
  | 'index'
  | 'oom'
  | 'value'
  | 'argument'
  | 'unsupported'
  | 'disposed'
  | 'internal';

/** A libtorch failure (bad shape, dtype mismatch, out of memory...) carrying libtorch's own message. */
export class TorchError extends AgentR1Error {
  constructor(
    message: string,
    readonly kind: TorchErrorKind,
    readonly op?: string,
    readonly shapes?: number[][],
    /** The C++ exception libtorch threw ('c10::IndexError', 'c10::Error', 'std::bad_alloc'...), if any. */
    readonly exception?: string,
  ) {
    super(message);
  }
}

// The kind each typed libtorch exception stands for (c10/util/Exception.h; Python raises the
// same-named error). c10::TypeError comes from TORCH_CHECK_TYPE, libtorch's dtype checks;
// c10::NotImplementedError from a missing kernel for a dtype or backend.
const kindOfException: Record<string, TorchErrorKind> = {
  'c10::OutOfMemoryError': 'oom',
  'std::bad_alloc': 'oom',
  'c10::IndexError': 'index',
  'c10::ValueError': 'value',
  'c10::LinAlgError': 'value',
  'c10::EnforceFiniteError': 'value',
  'c10::TypeError': 'dtype',
  'c10::NotImplementedError': 'unsupported',
  'c10::AcceleratorError': 'device',
  'c10::BufferError': 'argument',
};

/**
 * The kind of a plain c10::Error (a TORCH_CHECK, Python's RuntimeError) or another untyped
 * exception: libtorch gives it no type, so its message is all there is to go on. The typed
 * exceptions above never come here.
 */
function kindOfUntypedMessage(m: string): TorchErrorKind {
  if (/same device|device type|CUDA|on device/.test(m)) return 'device';
  if (/dtype|scalar type|Expected object of scalar|ScalarType|not implemented for/.test(m)) return 'dtype';
  if (/size|shape|dimension|dim |mat1 and mat2|numel|broadcast/.test(m)) return 'shape';
  if (/index/.test(m)) return 'index';
  return 'internal';
}

function kindOf(e: Error & { kind?: string; exception?: string }): TorchErrorKind {
  // The binding's own errors say their kind (a disposed handle); argument conversion throws TypeError.
  if (e.kind) return e.kind as TorchErrorKind;
  if (e.exception) {
    return kindOfException[e.exception] ?? kindOfUntypedMessage(e.message ?? '');
  }
  return e instanceof TypeError ? 'argument' : 'internal';
}

/** Rethrows whatever the native side threw as a TorchError naming the op and the input shapes. */
export function toTorchError(error: unknown, op: string, shapes?: number[][]): TorchError {
  if (error instanceof TorchError) return error;
  const e = error as Error & { kind?: string; exception?: string };
  const where = shapes?.length ? ` (input shapes ${shapes.map((s) => `[${s.join(', ')}]`).join(', ')})` : '';
  return new TorchError(`${op}: ${e.message}${where}`, kindOf(e), op, shapes, e.exception);
}

/** `f()`, with whatever the native side throws rethrown as `toTorchError(error, op, shapes)`. */
export function withTorchError<T>(op: string, shapes: number[][], f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw toTorchError(e, op, shapes);
  }
}
