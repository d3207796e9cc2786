// Masked reductions and whitening over (B, L) tensors (verl's torch_functional helpers), with
// ALGORITHMS.md's "ours" edge-case rules.
import * as torch from '../torch/index.js';
import type { Tensor } from '../torch/index.js';
import type { SumAcrossRanks } from './types.js';

/** sum(x * m) over `dim` (all elements when omitted). x, m: same shape (or broadcastable). */
export function maskedSum(x: Tensor, mask: Tensor, dim?: number): Tensor {
  return torch.scope(() => x.mul(mask).sum(dim));
}

/**
 * mean_m(x) = sum(x * m) / (sum(m) + 1e-8), over `dim` (all elements when omitted).
 * x, m: (B, L); result: a scalar, or (B,) with dim = -1. An empty mask gives 0.
 */
export function maskedMean(x: Tensor, mask: Tensor, dim?: number): Tensor {
  return torch.scope(() => x.mul(mask).sum(dim).div(mask.sum(dim).add(1e-8)));
}

/**
 * Masked variance over all elements: mean_m((x - mean_m(x))^2), times N/(N-1) when `unbiased`
 * (N = sum(m)). The references throw for N <= 1; here the unbiased form gives 0 then (a scalar).
 */
export function maskedVar(x: Tensor, mask: Tensor, unbiased = true): Tensor {
  return torch.scope(() => {
    const mu = maskedMean(x, mask);
    const variance = maskedMean(x.sub(mu).square(), mask);
    if (!unbiased) return variance;
    const n = mask.sum().item();
    return n <= 1 ? variance.mul(0) : variance.mul(n / (n - 1));
  });
}

/**
 * `maskedWhiten` with the count of valid elements N and whether the N <= 1 rule applied. With
 * `sumAcrossRanks` the sums behind N, the mean and the variance are taken over every rank's
 * x and m (the global batch's statistics); each rank whitens its own elements with them.
 */
export function maskedWhitenWithInfo(
  x: Tensor,
  mask: Tensor,
  sumAcrossRanks?: SumAcrossRanks,
): { whitened: Tensor; count: number; degenerate: boolean } {
  const across = sumAcrossRanks ?? ((v: readonly number[]) => [...v]);
  return torch.scope(() => {
    const [count, total] = across([mask.sum().item(), x.mul(mask).sum().item()]);
    const centered = x.sub(total / (count + 1e-8));
    // every rank reaches this with the same count, so all take the same branch (and collectives)
    if (count <= 1) return { whitened: centered.mul(mask), count, degenerate: true };
    const [squares] = across([centered.square().mul(mask).sum().item()]);
    const variance = (squares / (count + 1e-8)) * (count / (count - 1));
    return { whitened: centered.mul(1 / Math.sqrt(variance + 1e-8)).mul(mask), count, degenerate: false };
  });
}

/**
 * masked_whiten(x, m) over all elements: mu = mean_m(x); var = mean_m((x - mu)^2) * N/(N-1)
 * with N = sum(m); out = (x - mu) / sqrt(var + 1e-8) * m. Ours (ALGORITHMS.md section 0):
 * positions with m = 0 come out 0, and with N <= 1 the result is (x - mu) * m, unscaled
 * (the references throw). x, m: (B, L) -> (B, L).
 */
export function maskedWhiten(x: Tensor, mask: Tensor): Tensor {
  return maskedWhitenWithInfo(x, mask).whitened;
}
