// Calls ATen operators by schema name through the native dispatcher entry point.
// Ops are resolved on first use and cached by id; their types come from aten-ops.ts,
// generated from the same schemas (scripts/gen-op-types.ts).
import { native, type Handle } from './native.js';
import { toTorchError } from './errors.js';
import { Tensor, wrap, type Scalar } from './tensor.js';
import type { AtenOps } from './aten-ops.js';

/** What an op not in aten-ops.ts takes and gives; every op the code calls is typed there. */
export type UntypedOp = (
  ...args: (Tensor | Scalar | string | null | undefined | (Tensor | number | null)[])[]
) => unknown;
type OpKey<N extends string, O extends string> = O extends '' ? N : `${N}.${O}`;
export type AtenOp<N extends string, O extends string = ''> =
  OpKey<N, O> extends keyof AtenOps ? AtenOps[OpKey<N, O>] : UntypedOp;

/**
 * Any ATen operator by schema name: `aten('cumprod')(x, 0, null)`. Arguments in schema order
 * (keyword-only ones too; tensors, numbers, arrays; null for None; undefined for the default);
 * tensors come back as Tensors, several results as an array.
 */
export function aten<N extends string, O extends string = ''>(name: N, overload?: O): AtenOp<N, O> {
  let id = -1;
  const full = `aten::${name}${overload ? `.${overload}` : ''}`;
  const call = (...args: unknown[]): unknown => {
    // Tensors travel as their handles (also inside Tensor[] arguments); the rest as is.
    for (let i = 0; i < args.length; i++) {
      const a = args[i];
      if (a instanceof Tensor) args[i] = a.handle$;
      else if (Array.isArray(a)) args[i] = a.map(handleOrValue);
    }
    let raw: unknown;
    try {
      if (id < 0) id = native.resolveOp(`aten::${name}`, overload ?? '');
      raw = native.callOp(id, ...args);
    } catch (e) {
      throw toTorchError(e, full, shapesOf(args));
    }
    return wrap(raw);
  };
  return call as AtenOp<N, O>;
}

/** An ATen operator's schema as this libtorch has it (e.g. to see whether it takes an argument that other versions lack). */
export function atenSchema(name: string, overload = ''): string {
  return native.opSchema(native.resolveOp(`aten::${name}`, overload));
}

function handleOrValue(x: unknown): unknown {
  return x instanceof Tensor ? x.handle$ : x;
}

function shapesOf(args: unknown[]): number[][] {
  const shapes: number[][] = [];
  for (const a of args) {
    if (typeof a === 'object' && a !== null && !Array.isArray(a) && native.isTensor(a)) {
      shapes.push(native.meta(a as Handle).slice(4));
    }
  }
  return shapes;
}
