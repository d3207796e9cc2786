// Gradient mode and gradient computation. libtorch's grad mode is per thread and all
// our calls run on the JS main thread, so mode scopes must stay synchronous.
import { native } from './native.js';
import { type Tensor, wrap } from './tensor.js';
import { toTorchError } from './errors.js';

export function isGradEnabled(): boolean {
  return native.isGradEnabled();
}
export function setGradEnabled(on: boolean): void {
  native.setGradEnabled(on);
}

function withGradMode<T>(on: boolean, fn: () => T): T {
  const previous = native.isGradEnabled();
  native.setGradEnabled(on);
  try {
    const result = fn();
    if (result instanceof Promise) {
      throw new TypeError(
        'noGrad/enableGrad take a synchronous function (grad mode is per thread; an await would leak it)',
      );
    }
    return result;
  } finally {
    native.setGradEnabled(previous);
  }
}

/** Runs fn with gradient tracking off, then restores the previous mode. */
export function noGrad<T>(fn: () => T): T {
  return withGradMode(false, fn);
}
/** Runs fn with gradient tracking on, then restores the previous mode. */
export function enableGrad<T>(fn: () => T): T {
  return withGradMode(true, fn);
}

/** `using _ = noGradGuard()`: gradient tracking off until the end of the block. */
export function noGradGuard(): Disposable {
  const previous = native.isGradEnabled();
  native.setGradEnabled(false);
  return { [Symbol.dispose]: () => native.setGradEnabled(previous) };
}

/** Backpropagates from several outputs at once (gradients default to ones for scalars). */
export function backward(outputs: Tensor[], grads?: (Tensor | null)[], opts: { retainGraph?: boolean } = {}): void {
  try {
    native.backward(
      outputs.map((t) => t.handle$),
      grads ? grads.map((g) => (g ? g.handle$ : null)) : null,
      !!opts.retainGraph,
      false,
    );
  } catch (e) {
    throw toTorchError(e, 'backward');
  }
}

/** torch.autograd.grad: gradients of outputs with respect to inputs, without touching .grad. */
export function grad(
  outputs: Tensor[],
  inputs: Tensor[],
  opts: { gradOutputs?: (Tensor | null)[]; retainGraph?: boolean; allowUnused?: boolean } = {},
): (Tensor | null)[] {
  try {
    return wrap(
      native.gradOf(
        outputs.map((t) => t.handle$),
        inputs.map((t) => t.handle$),
        opts.gradOutputs ? opts.gradOutputs.map((g) => (g ? g.handle$ : null)) : null,
        !!opts.retainGraph,
        !!opts.allowUnused,
      ),
    );
  } catch (e) {
    throw toTorchError(e, 'grad');
  }
}
