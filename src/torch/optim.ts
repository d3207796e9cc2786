// Optimizers over libtorch's own fused kernels (_fused_adamw_, _fused_sgd_): one
// native call per device/dtype group per step, not one per parameter. State is
// plain tensors, saved and loaded as safetensors.
import { aten } from './op.js';
import { Tensor } from './tensor.js';
import { zerosLike, zeros, full } from './factory.js';
import { stack } from './nn.js';
import { noGrad } from './autograd.js';
import { readSafetensors, writeSafetensors } from './safetensors.js';
import { keep } from './scope.js';
import { UserError } from '../errors.js';

const op = {
  fusedAdamw: aten('_fused_adamw_'),
  fusedSgd: aten('_fused_sgd_'),
  foreachNorm: aten('_foreach_norm', 'Scalar'),
  foreachMul: aten('_foreach_mul_', 'Tensor'),
  foreachAdd: aten('_foreach_add_', 'Scalar'),
};

export type NamedParams = [string, Tensor][];

function named(params: Tensor[] | NamedParams): NamedParams {
  return params.map((p, i) => (p instanceof Tensor ? [String(i), p] : p)) as NamedParams;
}

/** Items grouped by a key, in first-seen order (fused kernels take one device and dtype per call). */
function groupBy<T>(items: T[], key: (item: T) => string): T[][] {
  const byKey = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    (byKey.get(k) ?? byKey.set(k, []).get(k)!).push(it);
  }
  return [...byKey.values()];
}

function groups<T extends { param: Tensor }>(items: T[]): T[][] {
  return groupBy(items, (it) => `${it.param.device}/${it.param.dtype}`);
}

function disposeAll(ts: (Tensor | null)[]): void {
  for (const t of ts) t?.dispose();
}

export abstract class Optimizer {
  protected readonly params: NamedParams;
  lr: number;
  constructor(params: Tensor[] | NamedParams, lr: number) {
    this.params = named(params);
    if (this.params.length === 0) throw new UserError('optimizer got no parameters');
    this.lr = lr;
  }
  /** Drops every gradient (frees its memory, as PyTorch's set_to_none). */
  zeroGrad(): void {
    for (const [, p] of this.params) p.grad = null;
  }
  abstract step(): void;
  abstract stateTensors(): Map<string, Tensor>;
  abstract loadStateTensors(state: Map<string, Tensor>): void;
  /** Saves the optimizer state (moments, steps) as safetensors, keyed by parameter name. */
  saveState(path: string): void {
    writeSafetensors(path, this.stateTensors(), { lr: String(this.lr) });
  }
  /** Frees the state tensors. */
  dispose(): void {
    disposeAll([...new Set(this.stateTensors().values())]);
  }
  loadState(path: string): void {
    const state = readSafetensors(path);
    try {
      this.loadStateTensors(state);
    } finally {
      for (const t of state.values()) t.dispose();
    }
  }
}

export interface AdamWOptions {
  lr: number;
  betas?: [number, number];
  eps?: number;
  weightDecay?: number;
}

interface AdamState {
  param: Tensor;
  name: string;
  expAvg: Tensor;
  expAvgSq: Tensor;
  step: Tensor;
}

/** AdamW (decoupled weight decay), PyTorch defaults: betas (0.9, 0.999), eps 1e-8, weight decay 0.01. */
export class AdamW extends Optimizer {
  readonly betas: [number, number];
  readonly eps: number;
  readonly weightDecay: number;
  private state = new Map<Tensor, AdamState>();

  constructor(params: Tensor[] | NamedParams, opts: AdamWOptions) {
    super(params, opts.lr);
    this.betas = opts.betas ?? [0.9, 0.999];
    this.eps = opts.eps ?? 1e-8;
    this.weightDecay = opts.weightDecay ?? 0.01;
  }

  private stateFor(name: string, param: Tensor): AdamState {
    let s = this.state.get(param);
    if (!s) {
      s = noGrad(() => ({
        param,
        name,
        expAvg: zerosLike(param),
        expAvgSq: zerosLike(param),
        step: zeros([], { dtype: 'float32', device: param.device }),
      }));
      for (const t of [s.expAvg, s.expAvgSq, s.step]) keep(t);
      this.state.set(param, s);
    }
    return s;
  }

  step(): void {
    const withGrad: (AdamState & { grad: Tensor })[] = [];
    for (const [name, p] of this.params) {
      const g = p.grad;
      if (g) withGrad.push({ ...this.stateFor(name, p), grad: g });
    }
    try {
      for (const group of groups(withGrad)) {
        // The fused kernel reads the step count for bias correction; the caller advances it.
        op.foreachAdd(
          group.map((s) => s.step),
          1,
        );
        op.fusedAdamw(
          group.map((s) => s.param),
          group.map((s) => s.grad),
          group.map((s) => s.expAvg),
          group.map((s) => s.expAvgSq),
          [],
          group.map((s) => s.step),
          this.lr,
          this.betas[0],
          this.betas[1],
          this.weightDecay,
          this.eps,
          false,
          false,
          null,
          null,
        );
      }
    } finally {
      disposeAll(withGrad.map((s) => s.grad));
    }
  }

  stateTensors(): Map<string, Tensor> {
    const out = new Map<string, Tensor>();
    for (const s of this.state.values()) {
      out.set(`${s.name}.exp_avg`, s.expAvg);
      out.set(`${s.name}.exp_avg_sq`, s.expAvgSq);
      out.set(`${s.name}.step`, s.step);
    }
    return out;
  }

  loadStateTensors(state: Map<string, Tensor>): void {
    for (const [name, p] of this.params) {
      const m = state.get(`${name}.exp_avg`);
      if (!m) continue;
      const v = state.get(`${name}.exp_avg_sq`);
      const st = state.get(`${name}.step`);
      if (!v || !st)
        throw new UserError(`optimizer state for '${name}' is incomplete (needs exp_avg, exp_avg_sq, step)`);
      if (m.shape.join() !== p.shape.join()) {
        throw new UserError(`optimizer state for '${name}' has shape [${m.shape}], the parameter [${p.shape}]`);
      }
      const s = this.stateFor(name, p);
      noGrad(() => {
        s.expAvg.copy_(m);
        s.expAvgSq.copy_(v);
        s.step.copy_(st);
      });
    }
  }
}

export interface SGDOptions {
  lr: number;
  momentum?: number;
  weightDecay?: number;
  dampening?: number;
  nesterov?: boolean;
}

/** SGD with optional momentum, PyTorch semantics. */
export class SGD extends Optimizer {
  private buffers = new Map<Tensor, Tensor>();
  private firstStep = true;
  constructor(
    params: Tensor[] | NamedParams,
    readonly opts: SGDOptions,
  ) {
    super(params, opts.lr);
  }

  step(): void {
    const items: { param: Tensor; grad: Tensor; buf: Tensor | null }[] = [];
    const momentum = this.opts.momentum ?? 0;
    for (const [, p] of this.params) {
      const g = p.grad;
      if (!g) continue;
      let buf = this.buffers.get(p) ?? null;
      if (momentum !== 0 && !buf) {
        buf = keep(noGrad(() => zerosLike(p)));
        this.buffers.set(p, buf);
      }
      items.push({ param: p, grad: g, buf });
    }
    try {
      for (const group of groups(items)) {
        op.fusedSgd(
          group.map((i) => i.param),
          group.map((i) => i.grad),
          // every buffer exists when momentum is not 0 (made above)
          momentum !== 0 ? group.map((i) => i.buf!) : [],
          this.opts.weightDecay ?? 0,
          momentum,
          this.lr,
          this.opts.dampening ?? 0,
          !!this.opts.nesterov,
          false,
          this.firstStep,
          null,
          null,
        );
      }
      this.firstStep = false;
    } finally {
      disposeAll(items.map((i) => i.grad));
    }
  }

  stateTensors(): Map<string, Tensor> {
    const out = new Map<string, Tensor>();
    for (const [name, p] of this.params) {
      const b = this.buffers.get(p);
      if (b) out.set(`${name}.momentum_buffer`, b);
    }
    return out;
  }

  loadStateTensors(state: Map<string, Tensor>): void {
    for (const [name, p] of this.params) {
      const b = state.get(`${name}.momentum_buffer`);
      if (!b) continue;
      let buf = this.buffers.get(p);
      if (!buf) {
        buf = keep(noGrad(() => zerosLike(p)));
        this.buffers.set(p, buf);
      }
      noGrad(() => buf!.copy_(b));
      this.firstStep = false;
    }
  }
}

/**
 * Scales all gradients so that their global L2 norm is at most maxNorm; returns the
 * norm before clipping (Infinity/NaN reported as is, gradients then left untouched).
 */
export function clipGradNorm(params: Tensor[] | NamedParams, maxNorm: number): number {
  const grads = named(params)
    .map(([, p]) => p.grad)
    .filter((g): g is Tensor => g !== null);
  if (grads.length === 0) return 0;
  try {
    return noGrad(() => {
      // Norms per device, then summed on the CPU-visible scalar (one sync).
      const byDevice = groupBy(grads, (g) => g.device);
      let totalSq = 0;
      const norms: Tensor[] = [];
      for (const gs of byDevice) {
        const ns = op.foreachNorm(gs, 2, null) as Tensor[];
        const st = stack(ns.map((n) => n.double()));
        const sq = st.pow(2).sum();
        totalSq += sq.item();
        norms.push(...ns, st, sq);
      }
      disposeAll(norms);
      const total = Math.sqrt(totalSq);
      if (!Number.isFinite(total)) return total;
      const coef = maxNorm / (total + 1e-6);
      if (coef < 1) {
        for (const gs of byDevice) {
          const c = full([], coef, { dtype: gs[0].dtype, device: gs[0].device });
          op.foreachMul(gs, c);
          c.dispose();
        }
      }
      return total;
    });
  } finally {
    disposeAll(grads);
  }
}

/** Learning-rate schedules as functions of the step (0-based). */
export function constantLr(lr: number): (step: number) => number {
  return () => lr;
}

/** Linear warmup from 0 to `lr`, then cosine decay to `lr * minRatio` at `totalSteps`. */
export function warmupCosineLr(o: {
  lr: number;
  warmupSteps: number;
  totalSteps: number;
  minRatio?: number;
  numCycles?: number;
}): (step: number) => number {
  const minLr = o.lr * (o.minRatio ?? 0);
  // verl's get_cosine_schedule_with_warmup: cos(pi * 2 * num_cycles * progress), floored at min_lr_ratio
  const cycles = o.numCycles ?? 0.5;
  return (step) => {
    if (o.warmupSteps > 0 && step < o.warmupSteps) return (o.lr * (step + 1)) / o.warmupSteps;
    const span = Math.max(1, o.totalSteps - o.warmupSteps);
    const progress = Math.min(1, (step - o.warmupSteps) / span);
    return Math.max(minLr, minLr + 0.5 * (o.lr - minLr) * (1 + Math.cos(Math.PI * 2 * cycles * progress)));
  };
}
