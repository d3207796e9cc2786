// Fused kernels for the engine's decode step on CUDA (src/engine/fused-decode.ts runs them). A decode
// step feeds one token per sequence, so each of a layer's elementwise ops is a tiny kernel whose
// cost is its launch and its pass over memory, not its arithmetic; libtorch runs about 24 kernels a
// layer, these bring it to 9 (with the matmuls and the attention):
//   addRmsNorm       residual += x (or residual = x), then rms_norm(residual) * weight: one kernel
//                    for the add, the norm (5 ops in libtorch) and the weight's multiply
//   qkNormRopeCache  per head of the stacked q/k/v projection: Qwen3's q/k norm, rotate-half RoPE
//                    at each token's position, k and v written to the cache at the token's slot,
//                    q written contiguous for the attention (about 12 ops in libtorch)
//   siluMul          silu(gate) * up of the stacked gate/up projection (2 ops)
// and gemvRows, the smaller matmuls of a step of at most 4 rows; for the sampling after the step, sampleRows: each row's token and logprob from its logits in
// one kernel (about 12 libtorch ops over [B, vocab], a cumulative sum among them).
// Each rounds to bf16 wherever the libtorch ops it replaces round (after the norm, after the
// weight's multiply, after each RoPE product and their sum, after silu, after the product), and
// computes in float32 where they do, so it gives libtorch's values up to the order of a sum.
// Sources compiled at run time by NVRTC (nvrtc.cc); bf16 only.
#include "handles.h"

#ifdef AGENT_R1_CUDA
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "decode_sources.h"
#include "nvrtc.h"
#endif

namespace agent_r1 {
namespace {

#ifdef AGENT_R1_CUDA

// The row kernels (any shape), one program per device.
const char* kRowKernels = R"CUDA(
// One block per row of H values (H even, read as bf16 pairs). With a residual: r = bf16(x +
// residual) is written to resOut (the next residual); without: r = x. out = bf16(bf16(r *
// rsqrt(mean(r^2) + eps)) * w), as rms_norm(r) (float32 inside, a bf16 result) then * w.
extern "C" __global__ void add_rms_norm(const unsigned int* __restrict__ x, const unsigned int* __restrict__ residual,
                                        const unsigned int* __restrict__ w, unsigned int* __restrict__ out,
                                        unsigned int* __restrict__ resOut, int H, float eps) {
  __shared__ float partial[32];
  const int pairs = H / 2;
  const size_t row = (size_t)blockIdx.x * pairs;
  depWait();
  depLaunchNext();
  float ss = 0.f;
  for (int i = threadIdx.x; i < pairs; i += blockDim.x) {
    unsigned int r = x[row + i];
    if (residual) {
      r = addPair(r, residual[row + i]);
      resOut[row + i] = r;
    }
    ss += lo(r) * lo(r) + hi(r) * hi(r);
  }
  ss = warpSum(ss);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = ss;
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = threadIdx.x < (blockDim.x >> 5) ? partial[threadIdx.x] : 0.f;
    v = warpSum(v);
    if (threadIdx.x == 0) partial[0] = v;
  }
  __syncthreads();
  const float inv = rsqrtf(partial[0] / (float)H + eps);
  const unsigned int* src = residual ? resOut : x;
  for (int i = threadIdx.x; i < pairs; i += blockDim.x) {
    out[row + i] = normPair(src[row + i], w[i], inv);
  }
}

// out [T, I] = bf16(bf16(silu(gate)) * up) of gu [T, 2 I] = [gate | up] (I even, as bf16 pairs).
extern "C" __global__ void silu_mul(const unsigned int* __restrict__ gu, unsigned int* __restrict__ out, int I,
                                    long long pairs) {
  const int half = I / 2;
  depWait();
  depLaunchNext();
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < pairs;
       e += (long long)gridDim.x * blockDim.x) {
    const long long t = e / half, i = e % half;
    out[e] = siluMulPair(gu[t * I + i], gu[t * I + half + i]);
  }
}

// dst[i] = src[i] for n 4-byte words, one side in pinned host memory reached through its device
// address (copyPinned): a step's inputs and its sampled tokens sent between host and device as a
// kernel rather than the copy engine's transfers, which start some microseconds after the work ahead
// of them in the stream ends. Each thread's first word is read before the wait: host memory the
// host wrote before the launch, or device memory that only the kernels ahead write, read again
// after the wait when it is device memory (readAfterWait).
extern "C" __global__ void copy_words(const unsigned int* __restrict__ src, unsigned int* __restrict__ dst,
                                      long long n, int readAfterWait) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int v = i < n && !readAfterWait ? src[i] : 0u;
  depWait();
  depLaunchNext();
  if (readAfterWait && i < n) v = src[i];
  for (; i < n; i += stride) {
    dst[i] = v;
    if (i + stride < n) v = src[i + stride];
  }
}

// a logit as float32: sample_rows reads float32 logits, sample_rows_bf16 an lm_head's bf16 output
// as it is (the cast to float32 it replaces is exact, so both draw the same tokens and logprobs)
__device__ __forceinline__ float logitAt(const float* __restrict__ row, int i) { return row[i]; }
__device__ __forceinline__ float logitAt(const bf16* __restrict__ row, int i) { return bf(row[i]); }

// f(i, row[i]) for the indices i of [lo, hi) that are lane's (lo + lane, lo + lane + 32, ...), in
// order, with LANE_LOADS of them loaded at once: else each load waits for the one before, behind the
// division's branch
#define LANE_LOADS 4
template <typename T, typename F>
__device__ __forceinline__ void forLaneIndices(const T* __restrict__ row, int lo, int hi, int lane, F f) {
  for (int i = lo + lane; i < hi; i += 32 * LANE_LOADS) {
    float v[LANE_LOADS];
#pragma unroll
    for (int j = 0; j < LANE_LOADS; j++) v[j] = i + 32 * j < hi ? logitAt(row, i + 32 * j) : 0.f;
#pragma unroll
    for (int j = 0; j < LANE_LOADS; j++)
      if (i + 32 * j < hi) f(i + 32 * j, v[j]);
  }
}

// The warp's sum of exp(row[i] / t - ref) over [lo, hi) (every lane gets it) and the last index
// there of nonzero probability (-1: none)
template <typename T>
__device__ __forceinline__ void expSumLast(const T* __restrict__ row, int lo, int hi, int lane, float t, float ref,
                                           float& sum, int& last) {
  sum = 0.f;
  last = -1;
  forLaneIndices(row, lo, hi, lane, [&](int i, float v) {
    const float e = expf(v / t - ref);
    sum += e;
    if (e > 0.f) last = i;
  });
  sum = warpSum(sum);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) last = max(last, __shfl_xor_sync(0xffffffffu, last, o));
}

// Of 32 shares sums[0..31] laid end to end in the running sum from `start`: the lanes whose share
// [laneStart, laneStart + sums[lane]) holds target (lane 0's also below its start), with laneStart
// each lane's start, added in order
__device__ __forceinline__ unsigned holdersOf(const float* sums, float start, float target, int lane,
                                              float& laneStart) {
  float run = start;
  laneStart = 0.f;
  for (int w = 0; w < 32; w++) {
    if (w == lane) laneStart = run;
    run += sums[w];
  }
  return __ballot_sync(0xffffffffu, target < laneStart + sums[lane] && (target >= laneStart || lane == 0));
}

// Each row's next token and its logprob from logits [B, V] (float32; bf16 in sample_rows_bf16), as
// sampling.ts's sampleTokens computes them over libtorch ops (scaled = logits / temperature, lse =
// logsumexp(scaled); a greedy row takes the first argmax, a sampled row the first token whose
// running sum of exp(scaled - lse) passes u * total, the last token of nonzero probability if
// rounding puts u * total at the total; logprob = scaled[token] - lse). uniforms == null: every row
// is greedy; greedy == null: every row is sampled (when uniforms are given).
// A row is spread over P blocks of 32 warps (gridDim.y; FusedSampleRows' sampleSlices: the same P at
// every batch, so that a row's sums do not depend on the rows beside it): with one block per row,
// batch 1 left the whole row to one SM, 92 us a step on an H200 (Nsight Compute) against a 1.05 ms
// step of Qwen3-0.6B; 32 blocks a row take 8 to 12 us.
// Block p takes the p-th slice of the row, warp w the w-th 32nd of the slice (its part; whole
// 32-token chunks, read coalesced). A block finds its slice's max and first argmax, then each
// part's sum of exp(scaled - the slice's max) and the slice's last token of nonzero probability;
// with P > 1 it leaves them in its SLICE_RECORD floats of `slices` [B, P], and the row's last block
// to arrive (arrivals[b] counts them; that block sets it back to 0, so every launch and CUDA-graph
// replay starts from 0) rescales them to the row's max M (lse = M + log(total)). P == 1 needs
// neither. The running sums are in exp(scaled - M) units, so for a sampled row that block locates
// u * total among the slices, then among the slice's parts, then among 32nds of that part (one per
// warp, summed afresh), and one warp walks that 32nd chunk by chunk with a warp scan: a few chunks
// one after another, where walking a whole part took up to 149 at P == 1. The sums of each level
// are added in another order than the level below's, so rounding can put u * total past the end of
// the sums of the slice, part or 32nd that holds it: then the token is that one's last of nonzero
// probability. At most 32 registers, so that an SM holds two blocks (batches of more rows than SMs).
// SLICE_RECORD (floats a slice's record takes: max, its first index, the last index of nonzero
// probability, the sum, the 32 parts' sums) and MAX_SLICES come in as -D defines (rowKernel)
template <typename T>
__device__ __forceinline__ void sampleRows(const T* __restrict__ logits, int V, const float* __restrict__ temperature,
                                           const float* __restrict__ uniforms, const bool* __restrict__ greedy,
                                           long long* __restrict__ tokens, float* __restrict__ logprobs,
                                           float* __restrict__ slices, int* __restrict__ arrivals) {
  __shared__ float sMax[32], sSum[32], sSub[32], sSliceSum[MAX_SLICES], sSliceScale[MAX_SLICES], sStart[MAX_SLICES + 1];
  __shared__ int sArg[32], sLast[32], sSubLast[32], sSliceLast[MAX_SLICES];
  __shared__ float sRowMax;
  __shared__ int sRowArg, sRowLast, sTicket, sSlice;
  const int b = blockIdx.x, P = gridDim.y, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const T* row = logits + (size_t)b * V;
  depWait();
  depLaunchNext();
  const float t = temperature[b];
  const bool isGreedy = !uniforms || (greedy && greedy[b]);
  const int sliceChunks = ((V + 31) / 32 + P - 1) / P, partChunks = (sliceChunks + 31) / 32;
  // [lo, hi): part w of slice p
  const auto partOf = [&](int p, int w, int& lo, int& hi) {
    const int sliceLo = min(V, p * sliceChunks * 32), sliceHi = min(V, sliceLo + sliceChunks * 32);
    lo = min(sliceHi, sliceLo + w * partChunks * 32);
    hi = min(sliceHi, lo + partChunks * 32);
  };
  int lo, hi;
  partOf(blockIdx.y, warp, lo, hi);
  // pass 1: the slice's max and its first index
  float m = NEG_INF;
  int arg = V;
  forLaneIndices(row, lo, hi, lane, [&](int i, float v) {
    const float x = v / t;
    if (x > m) { m = x; arg = i; }  // a lane's indices rise, so the first max wins within a lane
  });
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
    const int a2 = __shfl_xor_sync(0xffffffffu, arg, o);
    if (m2 > m || (m2 == m && a2 < arg)) { m = m2; arg = a2; }
  }
  if (lane == 0) { sMax[warp] = m; sArg[warp] = arg; }
  __syncthreads();
  float M = sMax[0];
  int A = sArg[0];
  for (int w = 1; w < 32; w++)
    if (sMax[w] > M || (sMax[w] == M && sArg[w] < A)) { M = sMax[w]; A = sArg[w]; }
  // pass 2: each part's sum of exp(scaled - M), and its last index of nonzero probability (a slice
  // of masked tokens alone, M = -inf, sums exp(-inf - 0) = 0 rather than NaN)
  const float ref = M == NEG_INF ? 0.f : M;
  float sum;
  int last;
  expSumLast(row, lo, hi, lane, t, ref, sum, last);
  if (lane == 0) { sSum[warp] = sum; sLast[warp] = last; }
  __syncthreads();
  float S = 0.f;
  int L = -1;
  for (int w = 0; w < 32; w++) { S += sSum[w]; L = max(L, sLast[w]); }
  int slice = 0;
  float sliceStart = 0.f;
  int sliceLast = L;
  const float* rowSlices = slices + (size_t)b * P * SLICE_RECORD;
  if (P > 1) {
    float* mine = slices + ((size_t)b * P + blockIdx.y) * SLICE_RECORD;
    if (warp == 0) {
      mine[4 + lane] = sSum[lane];
      if (lane == 0) {
        mine[0] = M;
        mine[1] = __int_as_float(A);
        mine[2] = __int_as_float(L);
        mine[3] = S;
      }
      __threadfence();  // the record is visible before the arrival that may let another block read it
    }
    __syncthreads();
    if (threadIdx.x == 0) sTicket = atomicAdd(arrivals + b, 1);
    __syncthreads();
    if (sTicket != P - 1) return;
    if (threadIdx.x == 0) arrivals[b] = 0;
    // the row's last block: the slices' records (read from L2: L1 may hold none of them, but is not coherent)
    __threadfence();
    if (warp == 0) {
      float sm[2], ss[2];
      int sl[2];
      m = NEG_INF;
      arg = V;
#pragma unroll
      for (int j = 0; j < 2; j++) {
        const int k = lane + 32 * j;
        sm[j] = NEG_INF;
        ss[j] = 0.f;
        sl[j] = -1;
        if (k < P) {
          const float* r = rowSlices + k * SLICE_RECORD;
          sm[j] = __ldcg(r);
          const int a = __float_as_int(__ldcg(r + 1));
          sl[j] = __float_as_int(__ldcg(r + 2));
          ss[j] = __ldcg(r + 3);
          if (sm[j] > m) { m = sm[j]; arg = a; }  // slice k's indices are below slice k + 32's
        }
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
        const int a2 = __shfl_xor_sync(0xffffffffu, arg, o);
        if (m2 > m || (m2 == m && a2 < arg)) { m = m2; arg = a2; }
      }
#pragma unroll
      for (int j = 0; j < 2; j++) {
        const int k = lane + 32 * j;
        if (k < P) {
          const float scale = expf(sm[j] - m);  // 0 for a slice of masked tokens
          sSliceScale[k] = scale;
          sSliceSum[k] = ss[j] * scale;
          sSliceLast[k] = sl[j];
        }
      }
      __syncwarp();
      if (lane == 0) {
        // each slice's start in the running sum, added in order so that slice k's [start, start + sum)
        // ends exactly where slice k + 1's starts
        float run = 0.f;
        int rowLast = -1;
        for (int k = 0; k < P; k++) {
          sStart[k] = run;
          run += sSliceSum[k];
          if (sSliceSum[k] > 0.f) rowLast = sSliceLast[k];
        }
        sStart[P] = run;
        sRowMax = m;
        sRowArg = arg;
        sRowLast = rowLast;
        sSlice = -1;
      }
    }
    __syncthreads();
    M = sRowMax;
    A = sRowArg;
    S = sStart[P];
    L = sRowLast;
  }
  const float lse = M + logf(S);
  const auto emit = [&](int j) {
    tokens[b] = j;
    logprobs[b] = logitAt(row, j) / t - lse;
  };
  if (isGreedy) {
    if (threadIdx.x == 0) { tokens[b] = A; logprobs[b] = M - lse; }
    return;
  }
  const float target = uniforms[b] * S;
  if (P > 1) {
    // the slice that holds the target, its start in the running sum and its parts' sums in exp(scaled - M) units
    const int k = threadIdx.x;
    if (k < P && target < sStart[k + 1] && (target >= sStart[k] || k == 0)) sSlice = k;
    __syncthreads();
    slice = sSlice;
    if (slice < 0) {  // rounding puts the target at the total
      if (threadIdx.x == 0) emit(L);
      return;
    }
    sliceStart = sStart[slice];
    sliceLast = sSliceLast[slice];
    if (warp == 0) sSum[lane] = __ldcg(rowSlices + slice * SLICE_RECORD + 4 + lane) * sSliceScale[slice];
    __syncthreads();
  }
  // the part of the slice that holds the target (every warp finds the same)
  float partStart;
  unsigned holders = holdersOf(sSum, sliceStart, target, lane, partStart);
  if (!holders) {  // past the slice's sum by rounding
    if (threadIdx.x == 0) emit(sliceLast);
    return;
  }
  const int part = __ffs(holders) - 1;
  partStart = __shfl_sync(0xffffffffu, partStart, part);
  partOf(slice, part, lo, hi);
  // warp w sums the w-th 32nd of the part (whole chunks), in the walk's units
  const int subChunks = ((hi - lo + 31) / 32 + 31) / 32;
  const int subLo = min(hi, lo + warp * subChunks * 32), subHi = min(hi, subLo + subChunks * 32);
  expSumLast(row, subLo, subHi, lane, t, M, sum, last);
  if (lane == 0) { sSub[warp] = sum; sSubLast[warp] = last; }
  __syncthreads();
  float subStart;
  holders = holdersOf(sSub, partStart, target, lane, subStart);
  int partLast = -1;
  for (int w = 0; w < 32; w++) partLast = max(partLast, sSubLast[w]);
  if (!holders) {  // past the part's sum by rounding
    if (threadIdx.x == 0) emit(partLast >= 0 ? partLast : sliceLast);
    return;
  }
  const int holder = __ffs(holders) - 1;
  float run = __shfl_sync(0xffffffffu, subStart, holder);
  if (warp != holder) return;
  // the walk of that 32nd in chunks of 32 with a warp scan; a token of probability 0 is never drawn,
  // though the scan's rounding may leave its running sum above the one before
  for (int base = subLo; base < subHi; base += 32) {
    const int i = base + lane;
    const float x = i < subHi ? expf(logitAt(row, i) / t - M) : 0.f;
    float e = x;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const float n = __shfl_up_sync(0xffffffffu, e, o);
      if (lane >= o) e += n;
    }
    const unsigned passed = __ballot_sync(0xffffffffu, x > 0.f && run + e > target);
    if (passed) {
      if (lane == 0) emit(base + __ffs(passed) - 1);
      return;
    }
    run += __shfl_sync(0xffffffffu, e, 31);
  }
  if (lane == 0) emit(sSubLast[warp]);  // past the 32nd's sum by rounding
}

extern "C" __global__ void __launch_bounds__(1024, 2)
    sample_rows(const float* __restrict__ logits, int V, const float* __restrict__ temperature,
                const float* __restrict__ uniforms, const bool* __restrict__ greedy, long long* __restrict__ tokens,
                float* __restrict__ logprobs, float* __restrict__ slices, int* __restrict__ arrivals) {
  sampleRows(logits, V, temperature, uniforms, greedy, tokens, logprobs, slices, arrivals);
}

extern "C" __global__ void __launch_bounds__(1024, 2)
    sample_rows_bf16(const bf16* __restrict__ logits, int V, const float* __restrict__ temperature,
                     const float* __restrict__ uniforms, const bool* __restrict__ greedy,
                     long long* __restrict__ tokens, float* __restrict__ logprobs, float* __restrict__ slices,
                     int* __restrict__ arrivals) {
  sampleRows(logits, V, temperature, uniforms, greedy, tokens, logprobs, slices, arrivals);
}

// y [M, N] = f(x) [M, K] W [N, K]^T (+ bias [N]) for a decode step of M <= 4 rows, where the step
// reads each weight once and so is bound by the weight's bytes. f(x), staged in shared memory by
// each block (stageInput, decode_sources.cc), is one of (`mode`):
//   0  x [M, K] itself;
//   1  silu(gate) * up of x = gu [M, 2 K] = [gate | up], as silu_mul rounds it (the down projection
//      reads the gate/up projection's output);
//   2  rms_norm(r) * normW with r = x + residual (or x when residual is null), as add_rms_norm
//      rounds it; block 0 writes r to resOut (the next residual). The q/k/v and gate/up
//      projections read the layer's residual stream.
// Each warp takes rows n, n + (grid warps), ...: its lanes read row n with 16-byte loads, BATCH of
// them in flight per lane, and keep M float32 sums, reduced across the warp; the sum plus bias is
// rounded to bf16 once, as a bf16 linear's float32 epilogue does. The warp's first loads are issued
// before depWait (weights are not written during a step), so they overlap the kernel before.
// K % 8 == 0. BATCH is 8 unless a -D define sets it (gemvKernel).
#ifndef BATCH
#define BATCH 8
#endif

// a weight chunk, streamed past L1 (each is read once); volatile keeps the first ones before depWait
__device__ __forceinline__ uint4 loadWeight(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// chunks c0, c0 + 32, ... (BATCH of them) of one weight row, zeros past its end
__device__ __forceinline__ void loadBatch(uint4 (&wv)[BATCH], const uint4* row, int c0, int chunks) {
#pragma unroll
  for (int u = 0; u < BATCH; u++) {
    const int c = c0 + 32 * u;
    wv[u] = c < chunks ? loadWeight(row + c) : make_uint4(0u, 0u, 0u, 0u);
  }
}

extern "C" __global__ void __launch_bounds__(256, BATCH > 8 ? 2 : 3) gemv_rows(
    const uint4* __restrict__ x, const uint4* __restrict__ residual, const uint4* __restrict__ normW,
    uint4* __restrict__ resOut, const uint4* __restrict__ W, const bf16* __restrict__ bias, bf16* __restrict__ out,
    int M, int N, int K, int mode, float eps) {
  extern __shared__ uint4 xs[];  // f(x) [M, K]
  __shared__ float partial[4][8];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int chunks = K >> 3, stride = gridDim.x * warps;
  int n = blockIdx.x * warps + warp;
  uint4 wv[BATCH];
  if (n < N) loadBatch(wv, W + (size_t)n * chunks, lane, chunks);
  depWait();
  depLaunchNext();
  stageInput<1>(xs, x, residual, normW, resOut, blockIdx.x == 0, M, chunks, mode, eps, threadIdx.x, blockDim.x, partial,
             [] { __syncthreads(); });
  for (; n < N; n += stride) {
    const uint4* row = W + (size_t)n * chunks;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    for (int c0 = lane;;) {
#pragma unroll
      for (int u = 0; u < BATCH; u++) {
        const int c = c0 + 32 * u;
        if (c < chunks) {
#pragma unroll
          for (int m = 0; m < 4; m++)
            if (m < M) acc[m] += dot8(wv[u], xs[m * chunks + c]);
        }
      }
      c0 += 32 * BATCH;
      if (c0 >= chunks) break;
      loadBatch(wv, row, c0, chunks);
    }
    // the next row's first loads go out before this row's sums are reduced
    if (n + stride < N) loadBatch(wv, W + (size_t)(n + stride) * chunks, lane, chunks);
#pragma unroll
    for (int m = 0; m < 4; m++) acc[m] = warpSum(acc[m]);
    if (lane == 0) {
      const float b = bias ? bf(bias[n]) : 0.f;
      for (int m = 0; m < M; m++) out[(size_t)m * N + n] = toBf16(acc[m] + b);
    }
  }
}
)CUDA";

// The per-head kernel, one program per device and head dim (after kHeadRope).
const char* kHeadKernel = R"CUDA(
// One warp per (token, head) of qkv [T, (Hq + 2 Hkv) * HEAD_DIM] (row stride `stride` values). q and
// k heads: normRopeHead (the per-head norm when `norm`, [Hq + Hkv, HEAD_DIM], then RoPE at the
// token's position), q to qOut [T, Hq, HEAD_DIM] and k to kc at the token's slot; v heads: copied to
// vc at the slot. Caches are [slots, Hkv, HEAD_DIM].
extern "C" __global__ void qk_norm_rope_cache(const bf16* __restrict__ qkv, const bf16* __restrict__ norm,
                                              const long long* __restrict__ positions,
                                              const float* __restrict__ invFreq, const long long* __restrict__ slots,
                                              bf16* __restrict__ qOut, bf16* __restrict__ kc, bf16* __restrict__ vc,
                                              int Hq, int Hkv, int stride, float eps) {
  const int lane = threadIdx.x & 31;
  const int head = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  const int t = blockIdx.y;
  depWait();
  depLaunchNext();
  if (head >= Hq + 2 * Hkv) return;  // a whole warp
  const bf16* src = qkv + (size_t)t * stride + (size_t)head * HEAD_DIM;
  const size_t slot = (size_t)slots[t];
  if (head >= Hq + Hkv) {
    bf16* dst = vc + (slot * Hkv + (head - Hq - Hkv)) * HEAD_DIM;
    for (int i = lane; i < HEAD_DIM; i += 32) dst[i] = src[i];
    return;
  }
  bf16* dst = head < Hq ? qOut + ((size_t)t * Hq + head) * HEAD_DIM : kc + (slot * Hkv + (head - Hq)) * HEAD_DIM;
  normRopeHead(src, norm ? norm + (size_t)head * HEAD_DIM : nullptr, (float)positions[t], invFreq, dst, lane, eps);
}
)CUDA";

const char* kWho = "fused decode kernels";

const char* rowSource() {
  static const std::string source = nvrtc::withBf16Helpers(decode_sources::kDecodeMath) + kRowKernels;
  return source.c_str();
}

const char* headSource() {
  static const std::string source = nvrtc::withBf16Helpers(decode_sources::kHeadRope) + kHeadKernel;
  return source.c_str();
}

// sample_rows' record of one slice of a row, in floats (its SLICE_RECORD: 4 + one sum per warp of a
// block), and the most slices a row takes (its MAX_SLICES)
constexpr int kSliceRecordFloats = 4 + 32;
constexpr int kMaxSlices = 64;

// the defines every compile of the row kernels takes
std::vector<std::string> rowDefines() {
  return {"SLICE_RECORD=" + std::to_string(kSliceRecordFloats), "MAX_SLICES=" + std::to_string(kMaxSlices)};
}

void* rowKernel(int device, const char* name, cudaStream_t stream) {
  return nvrtc::kernel(device, rowSource(), name, rowDefines(), stream, kWho);
}

// gemv_rows with BATCH weight loads in flight per lane: the source's default (one module with the
// other row kernels), or AGENT_R1_GEMV_BATCH=4|8|16 (to compare the choices in bench/decode-gemv.ts
// and bench/engine-decode.ts)
void* gemvKernel(int device, cudaStream_t stream) {
  static const std::string batch = nvrtc::tuningChoice("AGENT_R1_GEMV_BATCH", {"4", "8", "16"});
  std::vector<std::string> defines = rowDefines();
  if (!batch.empty()) defines.push_back("BATCH=" + batch);
  return nvrtc::kernel(device, rowSource(), "gemv_rows", defines, stream, kWho);
}

// gemv_rows' threads a block: 256 (8 warps), or AGENT_R1_GEMV_THREADS=32|64|128 (to compare in the
// benches: a block holds its place on the SM until its last warp ends, so smaller blocks hand the
// SM to the next kernel's blocks sooner, and each stages f(x) for fewer warps)
int gemvThreads() {
  static const std::string choice = nvrtc::tuningChoice("AGENT_R1_GEMV_THREADS", {"32", "64", "128", "256"});
  return choice.empty() ? 256 : std::stoi(choice);
}

void* headKernel(int device, int headDim, cudaStream_t stream) {
  return nvrtc::kernel(device, headSource(), "qk_norm_rope_cache", {"HEAD_DIM=" + std::to_string(headDim)}, stream,
                       kWho);
}

void checkBf16Cuda(const at::Tensor& t, const char* what) {
  TORCH_CHECK(t.is_cuda() && t.scalar_type() == at::kBFloat16 && t.is_contiguous(), kWho, ": ", what,
              " must be a contiguous bf16 CUDA tensor");
}

cudaStream_t streamOf(const at::Tensor& t) { return c10::cuda::getCurrentCUDAStream(t.get_device()).stream(); }

// fusedAddRmsNorm(x [T, H], residual [T, H] | null, weight [H], eps) -> [out, residualOut | null]
Napi::Value FusedAddRmsNorm(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const at::Tensor& x = unwrapTensor(env, info[0], "x");
  const at::Tensor* residual = unwrapOptionalTensor(env, info[1], "residual");
  const at::Tensor& w = unwrapTensor(env, info[2], "weight");
  const float eps = info[3].As<Napi::Number>().FloatValue();
  checkBf16Cuda(x, "x");
  checkBf16Cuda(w, "weight");
  TORCH_CHECK(x.dim() == 2 && x.size(1) % 2 == 0 && w.dim() == 1 && w.size(0) == x.size(1), kWho,
              ": addRmsNorm takes x [T, H] (H even) and weight [H]");
  if (residual) {
    checkBf16Cuda(*residual, "residual");
    TORCH_CHECK(residual->sizes() == x.sizes(), kWho, ": addRmsNorm's residual must have x's shape");
  }
  const int H = static_cast<int>(x.size(1));
  at::Tensor out = at::empty_like(x);
  at::Tensor resOut = residual ? at::empty_like(x) : at::Tensor();
  Napi::Array result = Napi::Array::New(env, 2);
  if (x.size(0) > 0) {
    cudaStream_t stream = streamOf(x);
    void* f = rowKernel(x.get_device(), "add_rms_norm", stream);
    const void* xp = x.data_ptr();
    const void* rp = residual ? residual->data_ptr() : nullptr;
    const void* wp = w.data_ptr();
    void* op = out.data_ptr();
    void* rop = residual ? resOut.data_ptr() : nullptr;
    float e = eps;
    int h = H;
    void* args[] = {&xp, &rp, &wp, &op, &rop, &h, &e};
    const int threads = H / 2 >= 512 ? 512 : (H / 2 >= 256 ? 256 : 128);
    nvrtc::launch(f, dim3(static_cast<unsigned>(x.size(0))), dim3(threads), 0, stream, args, kWho);
  }
  result.Set(0u, wrapTensor(env, out));
  result.Set(1u, residual ? wrapTensor(env, resOut) : env.Null());
  return result;
}

// fusedQkNormRopeCache(qkv [T, (Hq + 2 Hkv) D], norm [Hq + Hkv, D] | null, positions [T] int64,
//   invFreq [D / 2] f32, slots [T] int64, kCache, vCache [slots, Hkv, D], Hq, Hkv, D, eps) -> q [T, Hq, D]
Napi::Value FusedQkNormRopeCache(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const at::Tensor& qkv = unwrapTensor(env, info[0], "qkv");
  const at::Tensor* norm = unwrapOptionalTensor(env, info[1], "norm");
  const at::Tensor& positions = unwrapTensor(env, info[2], "positions");
  const at::Tensor& invFreq = unwrapTensor(env, info[3], "invFreq");
  const at::Tensor& slots = unwrapTensor(env, info[4], "slots");
  const at::Tensor& kc = unwrapTensor(env, info[5], "kCache");
  const at::Tensor& vc = unwrapTensor(env, info[6], "vCache");
  int Hq = info[7].As<Napi::Number>().Int32Value();
  int Hkv = info[8].As<Napi::Number>().Int32Value();
  const int D = info[9].As<Napi::Number>().Int32Value();
  float eps = info[10].As<Napi::Number>().FloatValue();
  TORCH_CHECK(D == 64 || D == 128 || D == 256, kWho, ": head dim must be 64, 128 or 256, got ", D);
  TORCH_CHECK(qkv.is_cuda() && qkv.scalar_type() == at::kBFloat16 && qkv.dim() == 2 && qkv.stride(1) == 1 &&
                  qkv.size(1) == static_cast<int64_t>(Hq + 2 * Hkv) * D,
              kWho, ": qkv must be bf16 [T, (Hq + 2 Hkv) * D] with unit column stride");
  if (norm) {
    checkBf16Cuda(*norm, "the q/k norm weight");
    TORCH_CHECK(norm->numel() == static_cast<int64_t>(Hq + Hkv) * D, kWho, ": the q/k norm weight must be [Hq + Hkv, D]");
  }
  TORCH_CHECK(positions.scalar_type() == at::kLong && slots.scalar_type() == at::kLong && positions.is_contiguous() &&
                  slots.is_contiguous() && positions.numel() == qkv.size(0) && slots.numel() == qkv.size(0),
              kWho, ": positions and slots must be contiguous int64 [T]");
  TORCH_CHECK(invFreq.is_cuda() && invFreq.scalar_type() == at::kFloat && invFreq.is_contiguous() &&
                  invFreq.numel() == D / 2,
              kWho, ": invFreq must be float32 [D / 2] on the device");
  checkBf16Cuda(kc, "kCache");
  checkBf16Cuda(vc, "vCache");
  TORCH_CHECK(kc.dim() == 3 && kc.sizes() == vc.sizes() && kc.size(1) == Hkv && kc.size(2) == D, kWho,
              ": the caches must be [slots, Hkv, D]");
  const int64_t T = qkv.size(0);
  at::Tensor q = at::empty({T, Hq, D}, qkv.options());
  if (T == 0) return wrapTensor(env, q);
  cudaStream_t stream = streamOf(qkv);
  void* f = headKernel(qkv.get_device(), D, stream);
  const void* a0 = qkv.data_ptr();
  const void* a1 = norm ? norm->data_ptr() : nullptr;
  const void* a2 = positions.data_ptr();
  const void* a3 = invFreq.data_ptr();
  const void* a4 = slots.data_ptr();
  void* a5 = q.data_ptr();
  void* a6 = kc.data_ptr();
  void* a7 = vc.data_ptr();
  int stride = static_cast<int>(qkv.stride(0));
  void* args[] = {&a0, &a1, &a2, &a3, &a4, &a5, &a6, &a7, &Hq, &Hkv, &stride, &eps};
  const int headsPerBlock = 4;
  const unsigned blocksX = static_cast<unsigned>((Hq + 2 * Hkv + headsPerBlock - 1) / headsPerBlock);
  nvrtc::launch(f, dim3(blocksX, static_cast<unsigned>(T)), dim3(32 * headsPerBlock), 0, stream, args, kWho);
  return wrapTensor(env, q);
}

// fusedSiluMul(gu [T, 2 I]) -> [T, I]
Napi::Value FusedSiluMul(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const at::Tensor& gu = unwrapTensor(env, info[0], "gateUp");
  checkBf16Cuda(gu, "gateUp");
  TORCH_CHECK(gu.dim() == 2 && gu.size(1) % 4 == 0, kWho, ": siluMul takes [T, 2 I] with I even");
  int I = static_cast<int>(gu.size(1) / 2);
  at::Tensor out = at::empty({gu.size(0), I}, gu.options());
  long long pairs = static_cast<long long>(gu.size(0)) * I / 2;
  if (pairs == 0) return wrapTensor(env, out);
  cudaStream_t stream = streamOf(gu);
  void* f = rowKernel(gu.get_device(), "silu_mul", stream);
  const void* a0 = gu.data_ptr();
  void* a1 = out.data_ptr();
  void* args[] = {&a0, &a1, &I, &pairs};
  const long long threads = 256;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((pairs + threads - 1) / threads, 4096));
  nvrtc::launch(f, dim3(blocks), dim3(threads), 0, stream, args, kWho);
  return wrapTensor(env, out);
}

// fusedCopyPinned(dst, src): dst.copy_(src) between a contiguous pinned host tensor and a contiguous
// CUDA tensor (either way) of one dtype and size (a multiple of 4 bytes), as one copy_words launch
// on the CUDA tensor's stream
Napi::Value FusedCopyPinned(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const at::Tensor& dst = unwrapTensor(env, info[0], "dst");
  const at::Tensor& src = unwrapTensor(env, info[1], "src");
  const bool upload = src.device().is_cpu();
  const at::Tensor& host = upload ? src : dst;
  const at::Tensor& device = upload ? dst : src;
  TORCH_CHECK(device.is_cuda() && device.is_contiguous() && host.device().is_cpu() && host.is_contiguous() &&
                  host.is_pinned(),
              kWho,
              ": copyPinned copies between a contiguous pinned host tensor (torch.empty(..., { pinMemory: true })) "
              "and a contiguous CUDA tensor, got ",
              src.device(), src.is_pinned() ? " (pinned)" : "", " into ", dst.device(), dst.is_pinned() ? " (pinned)" : "");
  TORCH_CHECK(src.scalar_type() == dst.scalar_type() && src.numel() == dst.numel(), kWho,
              ": copyPinned's tensors must have one dtype and size, got ", src.scalar_type(), " [", src.numel(),
              "] into ", dst.scalar_type(), " [", dst.numel(), "]");
  const size_t bytes = static_cast<size_t>(dst.numel()) * dst.element_size();
  TORCH_CHECK(bytes % 4 == 0, kWho, ": copyPinned copies 4-byte words, got ", bytes, " bytes");
  long long n = static_cast<long long>(bytes / 4);
  if (n == 0) return env.Undefined();
  void* mapped = nullptr;
  C10_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, host.data_ptr(), 0));
  cudaStream_t stream = streamOf(device);
  void* f = rowKernel(device.get_device(), "copy_words", stream);
  const void* a0 = upload ? mapped : src.data_ptr();
  void* a1 = upload ? dst.data_ptr() : mapped;
  int readAfterWait = upload ? 0 : 1;
  void* args[] = {&a0, &a1, &n, &readAfterWait};
  const long long threads = 256;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((n + threads - 1) / threads, 1024));
  nvrtc::launch(f, dim3(blocks), dim3(threads), 0, stream, args, kWho);
  return env.Undefined();
}

// fusedGemvRows(x, weight [N, K] bf16, bias [N] bf16 | null, mode, residual | null, normWeight | null, eps)
//   -> [out [M, N], residualOut | null], M <= 4, K % 8 == 0; x by mode (gemv_rows): 0 x [M, K];
//   1 gu [M, 2 K] (silu(gate) * up is multiplied); 2 x [M, K] with residual [M, K] | null and
//   normWeight [K] (rms_norm(x + residual) * normWeight is multiplied; residualOut = x + residual)
Napi::Value FusedGemvRows(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const at::Tensor& x = unwrapTensor(env, info[0], "x");
  const at::Tensor& w = unwrapTensor(env, info[1], "weight");
  const at::Tensor* bias = unwrapOptionalTensor(env, info[2], "bias");
  int mode = info[3].As<Napi::Number>().Int32Value();
  const at::Tensor* residual = unwrapOptionalTensor(env, info[4], "residual");
  const at::Tensor* normW = unwrapOptionalTensor(env, info[5], "normWeight");
  float eps = info[6].As<Napi::Number>().FloatValue();
  TORCH_CHECK(mode >= 0 && mode <= 2, kWho, ": gemvRows' mode must be 0, 1 or 2, got ", mode);
  checkBf16Cuda(x, "x");
  checkBf16Cuda(w, "weight");
  const int64_t K = w.dim() == 2 ? w.size(1) : -1;
  TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && K % 8 == 0 && x.size(0) <= 4 && x.size(1) == (mode == 1 ? 2 * K : K),
              kWho, ": gemvRows takes weight [N, K] (K a multiple of 8) and x [M <= 4, ",
              mode == 1 ? "2 K] (gate | up)" : "K]");
  if (bias) {
    checkBf16Cuda(*bias, "bias");
    TORCH_CHECK(bias->numel() == w.size(0), kWho, ": gemvRows' bias must be [N]");
  }
  TORCH_CHECK((mode == 2) == (normW != nullptr), kWho, ": gemvRows takes a norm weight in mode 2 only");
  TORCH_CHECK(mode == 2 || !residual, kWho, ": gemvRows takes a residual in mode 2 only");
  if (normW) {
    checkBf16Cuda(*normW, "normWeight");
    TORCH_CHECK(normW->numel() == K, kWho, ": gemvRows' norm weight must be [K]");
  }
  if (residual) {
    checkBf16Cuda(*residual, "residual");
    TORCH_CHECK(residual->sizes() == x.sizes(), kWho, ": gemvRows' residual must have x's shape");
  }
  int M = static_cast<int>(x.size(0)), N = static_cast<int>(w.size(0)), k = static_cast<int>(K);
  at::Tensor out = at::empty({M, N}, x.options());
  at::Tensor resOut = residual ? at::empty_like(x) : at::Tensor();
  // wrapped last: a new handle may move the handle table, which x, w, bias, residual and normW point into
  const auto result = [&] {
    Napi::Array r = Napi::Array::New(env, 2);
    r.Set(0u, wrapTensor(env, out));
    r.Set(1u, residual ? wrapTensor(env, resOut) : env.Null());
    return r;
  };
  if (M == 0 || N == 0) return result();
  cudaStream_t stream = streamOf(x);
  const int device = x.get_device();
  void* f = gemvKernel(device, stream);
  const void* a0 = x.data_ptr();
  const void* a1 = residual ? residual->data_ptr() : nullptr;
  const void* a2 = normW ? normW->data_ptr() : nullptr;
  void* a3 = residual ? resOut.data_ptr() : nullptr;
  const void* a4 = w.data_ptr();
  const void* a5 = bias ? bias->data_ptr() : nullptr;
  void* a6 = out.data_ptr();
  void* args[] = {&a0, &a1, &a2, &a3, &a4, &a5, &a6, &M, &N, &k, &mode, &eps};
  // f(x) staged in shared memory: up to 4 rows of K bf16 (78 KB at K 9728), above the default 48 KB
  const int shared = M * k * 2;
  static const int maxShared = nvrtc::maxSharedBytes(device) - 1024;  // less the kernel's static shared memory
  TORCH_CHECK(shared <= maxShared, kWho, ": gemvRows' x (", shared, " bytes) does not fit in shared memory");
  nvrtc::allowMaxSharedBytes(f, device, kWho);
  // one warp per row while the rows fit on the device at once, else as many blocks as fit (each
  // stages f(x) once, so more blocks would only read it again)
  const int threads = gemvThreads(), warps = threads / 32;
  static const int sms = nvrtc::smCount(device);
  const int64_t resident = static_cast<int64_t>(sms) * nvrtc::residentBlocksPerSm(f, threads, shared, kWho);
  const int64_t blocks = std::min<int64_t>((N + warps - 1) / warps, resident);
  nvrtc::launch(f, dim3(static_cast<unsigned>(blocks)), dim3(threads), static_cast<unsigned>(shared), stream, args,
                kWho);
  return result();
}

// The rows sample_rows' arrival counters cover; a larger batch takes one block per row, which
// fills the SMs anyway
constexpr int kArrivalRows = 4096;

// sample_rows' per-row arrival counters on `device`: zeros, which every launch leaves as it found
// them, allocated once (fusedSamplingPrepare, or the first call outside a CUDA graph capture) and
// never freed, as the graphs captured with them keep their address. Null when they are not
// allocated yet and `stream` is being captured. Calls on one device share them, so they must not
// run at the same time (the engine samples on one stream).
int* sampleArrivals(int device, cudaStream_t stream) {
  static std::mutex mutex;
  // never destroyed: at exit it would outlive libtorch's allocator
  static auto* byDevice = new std::map<int, at::Tensor>();
  std::lock_guard<std::mutex> lock(mutex);
  auto found = byDevice->find(device);
  if (found != byDevice->end()) return found->second.data_ptr<int>();
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (stream) C10_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  if (status != cudaStreamCaptureStatusNone) return nullptr;
  const auto index = static_cast<c10::DeviceIndex>(device);
  at::Tensor counters = at::zeros({kArrivalRows}, at::TensorOptions().dtype(at::kInt).device(at::kCUDA, index));
  c10::cuda::getCurrentCUDAStream(index).synchronize();  // zero for every stream
  return byDevice->emplace(device, counters).first->second.data_ptr<int>();
}

// Blocks per row of sample_rows: 8 (fewer for a short row: at least 8 chunks of 32 tokens a
// block), whatever the batch, so that a row's sums are added in the same order, and the same request
// with the same seed draws the same token, whatever else is in the batch (issue 10: seeds honoured per
// request). On the H200 (bench/results/h200-sampling.log, sampled rows, microseconds a call in a CUDA
// graph) one block a row took 50 at batch 1, 55 at 64 and 105 at 256; 32 blocks a row 11.5, 76
// and 280; 64 blocks 11.7, 118 and 456: a block costs its share of the row plus a fixed part, so a
// few blocks a row should win at every batch. 8 is chosen between those points and was not run
// on the GPU itself (no device time was left). Past kArrivalRows rows, one block a row.
// AGENT_R1_SAMPLE_SLICES sets the number (to compare in bench/sampling.ts; 1: one block per row).
constexpr int kSampleSlices = 8;
static_assert(kSampleSlices <= kMaxSlices, "sample_rows holds MAX_SLICES records a row");
int sampleSlices(int64_t B, int V) {
  static const std::string forced =
      nvrtc::tuningChoice("AGENT_R1_SAMPLE_SLICES", {"1", "2", "4", "8", "16", "32", "64"});
  if (B > kArrivalRows) return 1;
  const int64_t P = std::min<int64_t>(forced.empty() ? kSampleSlices : std::stoi(forced), (V + 31) / 32 / 8);
  return static_cast<int>(std::max<int64_t>(P, 1));
}

// fusedSampleRows(logits [B, V] f32 or bf16, temperature [B] f32, uniforms [B] f32 | null, greedy [B] bool | null)
//   -> [tokens [B] int64, logprobs [B] f32]
Napi::Value FusedSampleRows(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const at::Tensor& logits = unwrapTensor(env, info[0], "logits");
  const at::Tensor& temperature = unwrapTensor(env, info[1], "temperature");
  const at::Tensor* uniforms = unwrapOptionalTensor(env, info[2], "uniforms");
  const at::Tensor* greedy = unwrapOptionalTensor(env, info[3], "greedy");
  const bool bf16Logits = logits.scalar_type() == at::kBFloat16;
  TORCH_CHECK(logits.is_cuda() && (logits.scalar_type() == at::kFloat || bf16Logits) && logits.dim() == 2 &&
                  logits.is_contiguous(),
              kWho, ": sampleRows takes contiguous float32 or bf16 CUDA logits [B, V]");
  const int64_t B = logits.size(0);
  const auto row = [&](const at::Tensor* t, at::ScalarType type, const char* what) {
    TORCH_CHECK(t->device() == logits.device() && t->scalar_type() == type && t->is_contiguous() && t->numel() == B,
                kWho, ": sampleRows' ", what, " must be contiguous [B] on the logits' device");
  };
  row(&temperature, at::kFloat, "temperature (float32)");
  if (uniforms) row(uniforms, at::kFloat, "uniforms (float32)");
  if (greedy) row(greedy, at::kBool, "greedy mask (bool)");
  at::Tensor tokens = at::empty({B}, logits.options().dtype(at::kLong));
  const auto floats = logits.options().dtype(at::kFloat);
  at::Tensor logprobs = at::empty({B}, floats);
  Napi::Array result = Napi::Array::New(env, 2);
  if (B > 0) {
    cudaStream_t stream = streamOf(logits);
    const int device = logits.get_device();
    void* f = rowKernel(device, bf16Logits ? "sample_rows_bf16" : "sample_rows", stream);
    int V = static_cast<int>(logits.size(1));
    const int P = sampleSlices(B, V);
    int* arrivals = sampleArrivals(device, stream);
    TORCH_CHECK(P == 1 || arrivals, kWho,
                ": sampleRows' counters are not allocated yet and cannot be while a CUDA graph is captured; call "
                "fusedSamplingPrepare first");
    at::Tensor slices = P > 1 ? at::empty({B, P, kSliceRecordFloats}, floats) : at::Tensor();
    const void* a0 = logits.data_ptr();
    const void* a2 = temperature.data_ptr();
    const void* a3 = uniforms ? uniforms->data_ptr() : nullptr;
    const void* a4 = greedy ? greedy->data_ptr() : nullptr;
    void* a5 = tokens.data_ptr();
    void* a6 = logprobs.data_ptr();
    void* a7 = P > 1 ? slices.data_ptr() : nullptr;
    void* a8 = P > 1 ? arrivals : nullptr;
    void* args[] = {&a0, &V, &a2, &a3, &a4, &a5, &a6, &a7, &a8};
    nvrtc::launch(f, dim3(static_cast<unsigned>(B), static_cast<unsigned>(P)), dim3(1024), 0, stream, args, kWho);
  }
  result.Set(0u, wrapTensor(env, tokens));
  result.Set(1u, wrapTensor(env, logprobs));
  return result;
}

// fusedSamplingPrepare(device): compiles and loads sample_rows and sample_rows_bf16 (their program holds
// the other row kernels too) and allocates their arrival counters now, as neither can be while a CUDA
// graph is captured.
Napi::Value FusedSamplingPrepare(const Napi::CallbackInfo& info) {
  const int device = info[0].As<Napi::Number>().Int32Value();
  rowKernel(device, "sample_rows", nullptr);
  rowKernel(device, "sample_rows_bf16", nullptr);
  rowKernel(device, "copy_words", nullptr);
  sampleArrivals(device, nullptr);
  return info.Env().Undefined();
}

// fusedDecodePrepare(device, headDim): compiles and loads the decode trunk's kernels now (not while a
// CUDA graph is captured); sampleRows has its own (fusedSamplingPrepare), as every CUDA engine samples with it.
Napi::Value FusedDecodePrepare(const Napi::CallbackInfo& info) {
  const int device = info[0].As<Napi::Number>().Int32Value();
  const int headDim = info[1].As<Napi::Number>().Int32Value();
  TORCH_CHECK(headDim == 64 || headDim == 128 || headDim == 256, kWho, ": head dim must be 64, 128 or 256, got ",
              headDim);
  for (const char* name : {"add_rms_norm", "silu_mul"}) rowKernel(device, name, nullptr);
  gemvKernel(device, nullptr);
  headKernel(device, headDim, nullptr);
  return info.Env().Undefined();
}

// setDependentLaunches(on): programmatic dependent launches of the engine's kernels on or off (nvrtc.h)
Napi::Value SetDependentLaunches(const Napi::CallbackInfo& info) {
  nvrtc::setDependentLaunches(info[0].As<Napi::Boolean>().Value());
  return info.Env().Undefined();
}

Napi::Value DependentLaunches(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), nvrtc::dependentLaunchesOn());
}

#else

[[noreturn]] void noCuda(Napi::Env env) {
  throw Napi::Error::New(env,
                         "the fused decode kernels need the native addon built against a CUDA libtorch (npm run "
                         "build:native)");
}
Napi::Value FusedAddRmsNorm(const Napi::CallbackInfo& info) { noCuda(info.Env()); }
Napi::Value FusedQkNormRopeCache(const Napi::CallbackInfo& info) { noCuda(info.Env()); }
Napi::Value FusedSiluMul(const Napi::CallbackInfo& info) { noCuda(info.Env()); }
Napi::Value FusedCopyPinned(const Napi::CallbackInfo& info) { noCuda(info.Env()); }
Napi::Value FusedDecodePrepare(const Napi::CallbackInfo& info) { noCuda(info.Env()); }
Napi::Value FusedSampleRows(const Napi::CallbackInfo& info) { noCuda(info.Env()); }
Napi::Value FusedGemvRows(const Napi::CallbackInfo& info) { noCuda(info.Env()); }
Napi::Value FusedSamplingPrepare(const Napi::CallbackInfo& info) { noCuda(info.Env()); }
Napi::Value SetDependentLaunches(const Napi::CallbackInfo& info) { noCuda(info.Env()); }
Napi::Value DependentLaunches(const Napi::CallbackInfo& info) { noCuda(info.Env()); }

#endif

}  // namespace

void registerFusedDecode(Napi::Env env, Napi::Object exports) {
  exportFunction<FusedAddRmsNorm>(env, exports, "fusedAddRmsNorm");
  exportFunction<FusedQkNormRopeCache>(env, exports, "fusedQkNormRopeCache");
  exportFunction<FusedSiluMul>(env, exports, "fusedSiluMul");
  exportFunction<FusedCopyPinned>(env, exports, "fusedCopyPinned");
  exportFunction<FusedDecodePrepare>(env, exports, "fusedDecodePrepare");
  exportFunction<FusedSampleRows>(env, exports, "fusedSampleRows");
  exportFunction<FusedGemvRows>(env, exports, "fusedGemvRows");
  exportFunction<FusedSamplingPrepare>(env, exports, "fusedSamplingPrepare");
  exportFunction<SetDependentLaunches>(env, exports, "setDependentLaunches");
  exportFunction<DependentLaunches>(env, exports, "dependentLaunches");
}

}  // namespace agent_r1
