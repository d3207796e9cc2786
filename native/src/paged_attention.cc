// Decode attention over the engine's paged KV cache, read in place: for each sequence b and KV
// head h, the G query heads of h's group attend over the tokens [0, positions[b]] that b's block
// table places in the cache's blocks. libtorch's own kernels cannot do this without a copy: the
// flash kernel of PyTorch 2.11 takes no block table (2.13's does, for blocks of 256 tokens), so
// the engine used to gather every row's keys and values into a dense copy each step, three
// passes over the cache instead of one.
//
// The kernel is CUDA C compiled at run time by NVRTC for the device it runs on (nvrtc.cc: no CUDA
// compiler is needed to build the addon) and launched on the current stream, so it can be captured
// in a CUDA graph. One thread block per (KV head, sequence, split): its half-warps split the
// tokens, each keeping an online softmax per query head (float32), and their partial results are
// merged in shared memory. bf16 only.
//
// Splits (flash-decoding): with few sequences, (KV head, sequence) blocks alone leave most SMs
// idle (8 blocks at batch 1 of Qwen3: 8 of 132 SMs, about 130 GB/s of the cache read). Each
// sequence's tokens are then cut into `splits` equal ranges, one block each, which write their
// unnormalised sums with their maximum and denominator; the last of a (sequence, KV head)'s split
// blocks to finish (a counter per pair, which it resets) merges them for its query heads. That
// merge was a second kernel, paged_decode_merge: 4.9 us a layer in Nsight Compute at batch 1 of
// the 4B shape on the H200 (the attention 6.8) to merge a few KB, a launch and a drain more on
// the layer's chain even with dependent launches. The same arithmetic in the same order, so the
// same bits.
//
// qkNormRopePagedAttention: the decode step's per-head q/k norms, RoPE and cache write
// (fused_decode.cc's qk_norm_rope_cache, 3.9 us a layer there) folded into the kernel as well
// (its FUSED_QKV variant, from the stacked q/k/v projection): each block computes its query heads
// itself, and the one split block whose tokens hold the new one writes its key and value to the
// cache before any of its copies reads them. The layer's chain qk_norm_rope_cache -> attention ->
// merge (15.6 us of latency for about 2.4 MB) becomes one launch; both compute the heads through
// nvrtc.cc's normRopeHead, so the values are those kernels', bit for bit.
#include "handles.h"

#ifdef AGENT_R1_CUDA
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "nvrtc.h"
#endif

namespace agent_r1 {
namespace {

#ifdef AGENT_R1_CUDA

// The most splits of one sequence's tokens (pagedDecodeAttention's `splits`).
constexpr int kMaxSplits = 64;

// HEAD_DIM, GROUP (query heads per KV head), BLOCK_SIZE (tokens a cache block) and STAGES come in
// as -D defines, and FUSED_QKV=1 for qkNormRopePagedAttention's variant. Each half-warp (16 lanes) takes UNROLL consecutive tokens at a time, a lane PER =
// HEAD_DIM / 16 of each row's values (16 bytes at head dim 128), so a warp reads 2 * UNROLL cache
// rows per step.
//
// Measured on the H200 (bench/results/h200-paged-attention-variants.log, the 4B shape's batch 64:
// 41.6 us a call, 3.6 TB/s, against 54.3 us, 2.8 TB/s, at 1005cfe), the kernel was bound by its
// instructions:
// - The block size compiled in: a division by a number known only at run time is some 20
//   instructions, and the token -> slot look-up took two a token (54.3 -> 44.7 us). A half-warp's
//   tokens of a step then also share one look-up of the block table.
// - The scores reduce-scattered: of a half-warp's GROUP dot products, each lane ends with one head's
//   full sum (GROUP - 1 + 4 - log2(GROUP) shuffles, 5 at GROUP 4, against 4 a head), takes that
//   head's exponentials alone, and hands the factors to the other lanes (44.7 -> 41.6 us).
// - Scores in base 2 (q scaled by log2(e)): an exponential is one ex2.
//
// The rows come in through a ring of STAGES steps per warp in shared memory, copied with cp.async:
// while a warp computes one step, the next STAGES - 1 are in flight. Loaded into registers instead,
// a warp waited out the memory's latency at every step, and with GROUP 4 (128 registers a thread)
// too few warps fit on an SM to hide it: the 4B shape's batch 64 read the cache at 2.5 TB/s of 4.2,
// 2.8 TB/s through the ring, and the 0.6B shape's batch 256 at 3.2 TB/s, 3.6 through it
// (bench/results/h200-paged-attention.log, against that file at 115fa08). Each lane reads back
// only what it copied itself, so cp.async.wait_group alone orders the two, without a barrier.
// UNROLL comes in as a -D define too: the host sizes the rings from it (kUnroll).
const char* kSource = R"CUDA(
#define LANES 16
#define PER (HEAD_DIM / LANES)
// one lane's share of a cache row, and a warp's step of the ring: UNROLL tokens of each half-warp,
// keys and values, laid out [u][key, value][lane] so a warp's reads of one row are contiguous
#define ROW_BYTES (PER * 2)
#define STEP_BYTES (UNROLL * 2 * 32 * ROW_BYTES)
// whether a half-warp's UNROLL tokens of a step (which start at a multiple of UNROLL) lie in one block
#define ALIGNED (BLOCK_SIZE % UNROLL == 0)

// PER bf16 values as PER / 2 32-bit words, loaded with 8- or 16-byte loads and kept packed in
// registers until used (half the registers of floats: more warps fit on an SM).
struct Raw {
  unsigned int w[PER / 2];
};

__device__ __forceinline__ Raw loadRaw(const bf16* p) {
  Raw r;
#if PER == 4
  const uint2 x = *reinterpret_cast<const uint2*>(p);
  r.w[0] = x.x;
  r.w[1] = x.y;
#else
#pragma unroll
  for (int j = 0; j < PER / 8; j++) {
    const uint4 x = reinterpret_cast<const uint4*>(p)[j];
    r.w[4 * j] = x.x;
    r.w[4 * j + 1] = x.y;
    r.w[4 * j + 2] = x.z;
    r.w[4 * j + 3] = x.w;
  }
#endif
  return r;
}

// value i of a row: element 0 is the low half of word 0
__device__ __forceinline__ float at(const Raw& r, int i) {
  const unsigned int w = r.w[i >> 1];
  return (i & 1) ? hi(w) : lo(w);
}

// ROW_BYTES from src to shared dst without waiting; zeros (and no read) when !ok
__device__ __forceinline__ void copyRow(char* dst, const bf16* src, bool ok) {
  const unsigned int d = (unsigned int)__cvta_generic_to_shared(dst);
#if ROW_BYTES == 8
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(d), "l"(src), "r"(ok ? 8 : 0) : "memory");
#else
#pragma unroll
  for (int j = 0; j < ROW_BYTES / 16; j++)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d + 16 * j), "l"(src + 8 * j), "r"(ok ? 16 : 0)
                 : "memory");
#endif
}

// A half-warp's scores of its GROUP query heads are reduce-scattered in LOG2G halving steps over
// GPAD = 2^LOG2G heads (GROUP rounded up to a power of two: Qwen2.5's 7 query heads a KV head, 14
// of 2, take 8, the last a head of zeros), after which lane sub holds the full score of head
// sub >> OWNER_SHIFT alone
#if GROUP == 1
#define LOG2G 0
#elif GROUP == 2
#define LOG2G 1
#elif GROUP <= 4
#define LOG2G 2
#else
#define LOG2G 3
#endif
#define GPAD (1 << LOG2G)
#define OWNER_SHIFT (4 - LOG2G)

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// d[g]: this lane's partial dot products with the GPAD query heads; returns the half-warp's full
// sum for the head this lane owns (sub >> OWNER_SHIFT). At each halving step a lane keeps half its
// heads and sends the other half to its partner: GPAD - 1 shuffles, then 4 - LOG2G for the one sum
// left, 5 at GROUP 4 against 16 for reducing each head on its own.
__device__ __forceinline__ float reduceScatter(float (&d)[GPAD], int sub) {
#pragma unroll
  for (int level = 0; level < LOG2G; level++) {
    const int o = 8 >> level, n = GPAD >> level;
    const bool upper = sub & o;
#pragma unroll
    for (int j = 0; j < n / 2; j++) {
      const float send = upper ? d[j] : d[j + n / 2];
      const float keep = upper ? d[j + n / 2] : d[j];
      d[j] = keep + __shfl_xor_sync(0xffffffffu, send, o);
    }
  }
  float v = d[0];
#pragma unroll
  for (int o = 8 >> LOG2G; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}


// (MAX_THREADS, 1): with the bound on threads alone, ptxas held GROUP 2 to 64 registers and spilled.
// MAX_THREADS (a define: the host caps the warps of a block at it) is 512, or 256 where GROUP *
// HEAD_DIM passes 512 and a thread's sums and queries need more than the 128 registers 512 threads
// leave (GROUP 8 at head dim 128 takes 217; at 256, 255 and some spill).
extern "C" __global__ void __launch_bounds__(MAX_THREADS, 1) paged_decode_attention(
    const bf16* __restrict__ q,                  // [B, Hkv * GROUP, HEAD_DIM] (not FUSED_QKV)
    bf16* __restrict__ kc,                       // [numBlocks * BLOCK_SIZE, Hkv, HEAD_DIM]
    bf16* __restrict__ vc,                       // same (both written only by FUSED_QKV)
    const long long* __restrict__ tables,        // [B, W] block ids
    const long long* __restrict__ positions,     // [B]: attend over [0, position]
    bf16* __restrict__ out,                      // [B, Hkv * GROUP, HEAD_DIM] (splits == 1)
    int W, int Hkv, float scale,
    int splits,                                  // blockIdx.z's range
    float* __restrict__ partSums,                // [B, Hkv * GROUP, splits, HEAD_DIM] (splits > 1)
    float* __restrict__ partStats,               // [B, Hkv * GROUP, splits, 2]: maximum, denominator
    int* __restrict__ counters,                  // [>= B * Hkv]: split blocks done, zero between launches
    // FUSED_QKV only:
    const bf16* __restrict__ qkv,                // [B, qkvStride]: (Hkv * GROUP + 2 Hkv) heads of HEAD_DIM
    const bf16* __restrict__ norm,               // [Hkv * GROUP + Hkv, HEAD_DIM] or null
    const float* __restrict__ invFreq,           // [HEAD_DIM / 2]
    const long long* __restrict__ slots,         // [B]: each sequence's new token's slot
    int qkvStride, float eps) {
  extern __shared__ float shared[];
  const int h = blockIdx.x, b = blockIdx.y, split = blockIdx.z;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int half = lane >> 4, sub = lane & 15;  // which half-warp, and the lane within it
  const int halves = 2 * warps, me = 2 * warp + half;
  depWait();  // q (or qkv) and the cache come from the kernel before (nvrtc.h)
  depLaunchNext();
  // this block's tokens [first, len): the split's share of the sequence (all of it when splits == 1)
  const int seqLen = (int)positions[b] + 1;
  // a multiple of UNROLL, so a half-warp's UNROLL tokens of a step start at one too
  const int chunk = ((seqLen + splits - 1) / splits + UNROLL - 1) / UNROLL * UNROLL;
  const int first = split * chunk;
  const int len = min(seqLen, first + chunk);
  const int Hq = Hkv * GROUP;
  const long long* table = tables + (size_t)b * W;
  const size_t rowStride = (size_t)Hkv * HEAD_DIM;
  const size_t headOffset = (size_t)h * HEAD_DIM + sub * PER;
  // the warp's steps: tokens [start + i * stride, + 2 * UNROLL) for i < steps (the same for both
  // halves, so every shuffle is convergent)
  const int start = first + warp * 2 * UNROLL, stride = warps * 2 * UNROLL;
  const int steps = start < len ? (len - start + stride - 1) / stride : 0;
  char* ring = reinterpret_cast<char*>(shared) + (size_t)warp * STAGES * STEP_BYTES;
  // step i's rows into its place in the ring, as one cp.async group (empty past the last step)
  const auto issue = [&](int i) {
    char* dst = ring + (i % STAGES) * STEP_BYTES + lane * ROW_BYTES;
    // the half-warp's UNROLL tokens start at a multiple of UNROLL: in blocks of a multiple of UNROLL
    // tokens, all lie in one block, and one look-up of the table serves them
    const int t0 = start + i * stride + half * UNROLL;
    const long long block0 = ALIGNED && i < steps && t0 < len ? table[t0 / BLOCK_SIZE] : 0;
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      const int t = t0 + u;
      const bool ok = i < steps && t < len;
      const long long block = ALIGNED ? block0 : ok ? table[t / BLOCK_SIZE] : 0;
      const size_t slot = ok ? (size_t)block * BLOCK_SIZE + t % BLOCK_SIZE : 0;
      copyRow(dst + (2 * u) * 32 * ROW_BYTES, kc + slot * rowStride + headOffset, ok);
      copyRow(dst + (2 * u + 1) * 32 * ROW_BYTES, vc + slot * rowStride + headOffset, ok);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
#if FUSED_QKV
  // The new token (position seqLen - 1, the sequence's last) lies in exactly one split: its owner,
  // whose tokens run to seqLen, computes its key and copies its value into the cache, and reads
  // them back from there as every other token. No other block reads the slot: the other splits'
  // tokens all lie before it (or none is theirs), and other sequences' blocks are not b's.
  const int newPos = seqLen - 1;
  const bool owner = newPos / chunk == split;
  // whether this warp's first STAGES - 1 steps, issued before the loop, hold the new token: the
  // warp's step i copies tokens [start + i * stride, + 2 * UNROLL) (both halves; issue below), and
  // later steps are issued in the loop, past the barrier. Such a warp issues them past the barrier
  // too; every other warp before the heads' work, to overlap it.
  const int dNew = newPos - start;
  const bool late = owner && dNew >= 0 && dNew < (STAGES - 1) * stride && dNew % stride < 2 * UNROLL;
  if (!late) {
#pragma unroll
    for (int i = 0; i < STAGES - 1; i++) issue(i);
  }
  // The GROUP query heads' norm and RoPE (every split block computes them: no kernel before writes
  // them), to shared memory past the rings [GROUP][HEAD_DIM]; the owner also the key and the value
  // of KV head h. A warp a head, warp-uniform.
  bf16* qs = reinterpret_cast<bf16*>(reinterpret_cast<char*>(shared) + (size_t)warps * STAGES * STEP_BYTES);
  {
    const bf16* row = qkv + (size_t)b * qkvStride;
    const float pos = (float)positions[b];
    const int jobs = GROUP + (owner ? 2 : 0);
    for (int j = warp; j < jobs; j += warps) {
      if (j < GROUP) {
        const int head = h * GROUP + j;
        normRopeHead<HEAD_DIM>(row + (size_t)head * HEAD_DIM, norm ? norm + (size_t)head * HEAD_DIM : nullptr, pos,
                               invFreq, eps, lane, qs + j * HEAD_DIM);
      } else {
        const size_t slot = (size_t)slots[b];
        if (j == GROUP) {
          const int head = Hq + h;
          normRopeHead<HEAD_DIM>(row + (size_t)head * HEAD_DIM, norm ? norm + (size_t)head * HEAD_DIM : nullptr,
                                 pos, invFreq, eps, lane, kc + (slot * Hkv + h) * HEAD_DIM);
        } else {
          const bf16* src = row + (size_t)(Hq + Hkv + h) * HEAD_DIM;
          bf16* dst = vc + (slot * Hkv + h) * HEAD_DIM;
          for (int i = lane; i < HEAD_DIM; i += 32) dst[i] = src[i];
        }
      }
    }
  }
  // the key, the value and the query heads written before any copy that reads them is issued
  __threadfence_block();
  __syncthreads();
  if (late) {
#pragma unroll
    for (int i = 0; i < STAGES - 1; i++) issue(i);
  }
#else
#pragma unroll
  for (int i = 0; i < STAGES - 1; i++) issue(i);
#endif
  // scores in base 2 (q scaled by log2(e) too), so an exponential is one ex2
  const float qScale = scale * 1.4426950408889634f;
  // the running maximum and denominator of the one head this lane owns
  const int own = sub >> OWNER_SHIFT;
  float mOwn = NEG_INF, lOwn = 0.f;
  float qr[GROUP][PER], acc[GROUP][PER];
#pragma unroll
  for (int g = 0; g < GROUP; g++) {
#if FUSED_QKV
    const Raw qraw = loadRaw(qs + g * HEAD_DIM + sub * PER);
#else
    const Raw qraw = loadRaw(q + ((size_t)b * Hq + h * GROUP + g) * HEAD_DIM + sub * PER);
#endif
#pragma unroll
    for (int i = 0; i < PER; i++) {
      qr[g][i] = at(qraw, i) * qScale;
      acc[g][i] = 0.f;
    }
  }
  for (int i = 0; i < steps; i++) {
    issue(i + STAGES - 1);
    asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 1) : "memory");  // step i has landed
    const char* rows = ring + (i % STAGES) * STEP_BYTES + lane * ROW_BYTES;
    const int base = start + i * stride + half * UNROLL;
    // the owned head's scores of the step's UNROLL tokens, then one rescale of the running sums per
    // step (not per token)
    float s[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      const Raw kr = loadRaw(reinterpret_cast<const bf16*>(rows + (2 * u) * 32 * ROW_BYTES));
      float d[GPAD];
#pragma unroll
      for (int g = 0; g < GPAD; g++) {
        d[g] = 0.f;
        if (g < GROUP) {
#pragma unroll
          for (int e = 0; e < PER; e++) d[g] += qr[g][e] * at(kr, e);
        }
      }
      const float sum = reduceScatter(d, sub);
      s[u] = base + u < len ? sum : NEG_INF;
    }
    // Both half-warps go through this, past the end too, so every shuffle is the whole warp's: a
    // half-warp whose tokens all lie past the end has every score -inf, and its maximum is taken
    // as 0 while it has seen none, so each factor below is exp2(-inf) = 0, never exp2(-inf + inf).
    // (A token past the end was copied as zeros: p * 0, never p * garbage.)
    float mNew = mOwn;
#pragma unroll
    for (int u = 0; u < UNROLL; u++) mNew = fmaxf(mNew, s[u]);
    const float mSafe = mNew == NEG_INF ? 0.f : mNew;
    const float cOwn = ex2(mOwn - mSafe);  // mOwn = -inf before the first token: 0
    lOwn *= cOwn;
    float p[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      p[u] = ex2(s[u] - mSafe);  // a token past the end: 0
      lOwn += p[u];
    }
    mOwn = mNew;
    // every lane's sums of every head take the owners' factors
#pragma unroll
    for (int g = 0; g < GROUP; g++) {
      const float c = __shfl_sync(0xffffffffu, cOwn, g << OWNER_SHIFT, LANES);
#pragma unroll
        for (int e = 0; e < PER; e++) acc[g][e] *= c;
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      const Raw vr = loadRaw(reinterpret_cast<const bf16*>(rows + (2 * u + 1) * 32 * ROW_BYTES));
#pragma unroll
      for (int g = 0; g < GROUP; g++) {
        const float pg = __shfl_sync(0xffffffffu, p[u], g << OWNER_SHIFT, LANES);
#pragma unroll
        for (int e = 0; e < PER; e++) acc[g][e] += pg * at(vr, e);
      }
    }
  }
  // the ring's memory is the merge's below: every copy landed and every warp done with its ring
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  // shared: [halves][GROUP][HEAD_DIM] partial sums, then [halves][GROUP] maxima and [halves][GROUP] sums
  float* sAcc = shared;
  float* sM = shared + halves * GROUP * HEAD_DIM;
  float* sL = sM + halves * GROUP;
#pragma unroll
  for (int g = 0; g < GROUP; g++) {
#pragma unroll
    for (int i = 0; i < PER; i++) sAcc[(me * GROUP + g) * HEAD_DIM + sub * PER + i] = acc[g][i];
  }
  // (a head past GROUP, of a group rounded up to GPAD, is no head at all)
  if ((sub & ((1 << OWNER_SHIFT) - 1)) == 0 && own < GROUP) {
    sM[me * GROUP + own] = mOwn;
    sL[me * GROUP + own] = lOwn;
  }
  __syncthreads();
  for (int e = threadIdx.x; e < GROUP * HEAD_DIM; e += blockDim.x) {
    const int g = e / HEAD_DIM, d = e % HEAD_DIM;
    float M = NEG_INF;
    for (int w = 0; w < halves; w++) M = fmaxf(M, sM[w * GROUP + g]);
    float L = 0.f, A = 0.f;
    // M = -inf only in a split past a short sequence's end (no tokens at all): its sums stay 0
    if (M != NEG_INF) {
      for (int w = 0; w < halves; w++) {
        const float f = ex2(sM[w * GROUP + g] - M);  // a half-warp with no tokens: exp2(-inf) = 0
        L += sL[w * GROUP + g] * f;
        A += sAcc[(w * GROUP + g) * HEAD_DIM + d] * f;
      }
    }
    const size_t head = (size_t)b * Hq + h * GROUP + g;
    if (splits == 1) {
      out[head * HEAD_DIM + d] = toBf16(A / L);
    } else {
      const size_t part = head * splits + split;
      partSums[part * HEAD_DIM + d] = A;
      if (d == 0) {
        partStats[2 * part] = M;
        partStats[2 * part + 1] = L;
      }
    }
  }
  if (splits == 1) return;  // (the whole block)
  // The last of the (sequence, KV head)'s split blocks to get here merges the splits of its GROUP
  // heads: each thread's partials are made visible device-wide before one thread counts the block
  // in; the block that counts the last split in sees every other block's partials (their fences came
  // before their counts), and leaves the counter at zero for the next launch (or graph replay).
  __threadfence();
  __syncthreads();
  int* counter = counters + (size_t)b * Hkv + h;
  int last = 0;
  if (threadIdx.x == 0) last = atomicAdd(counter, 1) == splits - 1;
  if (!__syncthreads_or(last)) return;
  if (threadIdx.x == 0) *counter = 0;  // every other block of this launch has counted already
  __threadfence();
  // the maxima and denominators of the GROUP heads' splits, [GROUP][splits][2], into shared memory
  // (read back by every thread of a head), past every thread's reads of the sums above; the other
  // blocks' partials come from L2 (__ldcg): L1 is not coherent across SMs
  float* sStats = shared;
  const float* stats = partStats + ((size_t)b * Hq + h * GROUP) * splits * 2;
  for (int i = threadIdx.x; i < GROUP * splits * 2; i += blockDim.x) sStats[i] = __ldcg(stats + i);
  __syncthreads();
  for (int e = threadIdx.x; e < GROUP * HEAD_DIM; e += blockDim.x) {
    const int g = e / HEAD_DIM, d = e % HEAD_DIM;
    const size_t head = (size_t)b * Hq + h * GROUP + g;
    const float* st = sStats + g * splits * 2;
    const float* sums = partSums + head * splits * HEAD_DIM + d;
    float M = NEG_INF;
    for (int s = 0; s < splits; s++) M = fmaxf(M, st[2 * s]);
    float L = 0.f, A = 0.f;
    // the sums of 8 splits loaded at a time, then taken in order
    for (int s0 = 0; s0 < splits; s0 += 8) {
      float v[8];
#pragma unroll
      for (int j = 0; j < 8; j++) v[j] = s0 + j < splits ? __ldcg(sums + (size_t)(s0 + j) * HEAD_DIM) : 0.f;
#pragma unroll
      for (int j = 0; j < 8; j++) {
        const int s = s0 + j;
        if (s < splits && st[2 * s] != NEG_INF) {  // (a split with no tokens is skipped)
          const float f = ex2(st[2 * s] - M);
          L += st[2 * s + 1] * f;
          A += v[j] * f;
        }
      }
    }
    out[head * HEAD_DIM + d] = toBf16(A / L);
  }
}
)CUDA";

// Steps of the ring (kSource): 2, or AGENT_R1_PAGED_ATTENTION_STAGES=2|3|4 (to compare the choices in
// bench/paged-attention.ts and bench/engine-decode.ts). Measured on the H200 (bench/results/
// h200-paged-attention-stages.log, the engine's decode at batch 64): 2 and 3 within 2.5% of each
// other (the 4B shape 12,348 and 11,973 tokens/s, 0.6B 34,728 and 35,582), 4 worse by 9-13%: its
// rings (64 KiB a block of 4 warps) leave room for 3 blocks an SM and take most of the L1 cache.
int stages() {
  static const int n = [] {
    const std::string v = nvrtc::tuningChoice("AGENT_R1_PAGED_ATTENTION_STAGES", {"2", "3", "4"});
    return v.empty() ? 2 : std::stoi(v);
  }();
  return n;
}

// Tokens a half-warp takes a step (kSource's UNROLL), and the bytes of one step of a warp's ring
// (kSource's STEP_BYTES: keys and values of 2 * UNROLL tokens, a lane's 16th of each row).
constexpr int kUnroll = 4;
size_t ringStepBytes(int headDim) { return static_cast<size_t>(kUnroll) * 2 * 32 * (headDim / 16) * 2; }

// The most threads a block of the kernel takes (kSource's MAX_THREADS).
int maxThreads(int headDim, int group) { return group * headDim > 512 ? 256 : 512; }

// The kernel for (device, head dim, group size, block size), allowed the most shared memory the
// device has (the merge of up to 32 half-warps' partial sums); `fused`: its FUSED_QKV variant
// (qkNormRopePagedAttention). `stream`: see nvrtc::kernel.
void* kernelFor(int device, int headDim, int group, int blockSize, bool fused, cudaStream_t stream) {
  static const std::string source = nvrtc::withBf16Helpers(kSource);
  std::vector<std::string> defines = {"HEAD_DIM=" + std::to_string(headDim),
                                      "GROUP=" + std::to_string(group),
                                      "BLOCK_SIZE=" + std::to_string(blockSize),
                                      "STAGES=" + std::to_string(stages()),
                                      "UNROLL=" + std::to_string(kUnroll),
                                      "MAX_THREADS=" + std::to_string(maxThreads(headDim, group))};
  if (fused) defines.push_back("FUSED_QKV=1");
  const char* who = fused ? "qkNormRopePagedAttention" : "pagedDecodeAttention";
  void* attention = nvrtc::kernel(device, source.c_str(), "paged_decode_attention", defines, stream, who);
  nvrtc::allowMaxSharedBytes(attention, device, who);
  return attention;
}

// The most (sequence, KV head) pairs of a split launch: the size of a device's counters below. The
// kernel's own choice splits only below a quarter of the SMs in pairs (32 at most on an H200); a caller's
// `splits` may split any batch (the tests and bench/paged-attention.ts split up to 256 x 8).
constexpr int64_t kMaxSplitPairs = 1 << 16;

// A device's counters of the split blocks done per (sequence, KV head) (kSource): int32
// [kMaxSplitPairs], allocated and zeroed once per device, outside any CUDA graph capture (a capture
// cannot allocate; the kernel leaves them zero, so every launch and every replay starts clean).
// Launches that split must not run at once on two streams of one device: they would share them.
// `stream`: the launch that needs them, or null when preparing ahead.
int* splitCounters(int device, cudaStream_t stream) {
  static std::mutex mutex;
  static std::map<int, int*> counters;  // never freed: captured graphs hold the pointer
  std::lock_guard<std::mutex> lock(mutex);
  const auto found = counters.find(device);
  if (found != counters.end()) return found->second;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (stream) C10_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  TORCH_CHECK(status == cudaStreamCaptureStatusNone,
              "pagedDecodeAttention: the split blocks' counters of device ", device,
              " are not allocated yet and cannot be while a CUDA graph is captured; call "
              "pagedDecodeAttentionPrepare (torch.preparePagedDecodeAttention) before capturing");
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
  int* p = nullptr;
  C10_CUDA_CHECK(cudaMalloc(&p, kMaxSplitPairs * sizeof(int)));
  C10_CUDA_CHECK(cudaMemset(p, 0, kMaxSplitPairs * sizeof(int)));
  C10_CUDA_CHECK(cudaDeviceSynchronize());  // zero before any stream's launch reads them
  counters.emplace(device, p);
  return p;
}

// The cache, block tables and positions of B sequences of Hq query heads of head dim D on `device`.
void checkCache(const char* who, int64_t B, int64_t Hq, int64_t D, const c10::Device& device, const at::Tensor& k,
                const at::Tensor& v, const at::Tensor& tables, const at::Tensor& positions) {
  TORCH_CHECK(k.dim() == 3 && k.sizes() == v.sizes() && k.scalar_type() == at::kBFloat16 &&
                  v.scalar_type() == at::kBFloat16 && k.is_contiguous() && v.is_contiguous(),
              who, ": the cache's k and v must be contiguous bf16 [slots, Hkv, D] tensors of one shape");
  TORCH_CHECK(k.device() == device && v.device() == device && tables.device() == device &&
                  positions.device() == device,
              who, ": every tensor must be on one CUDA device");
  TORCH_CHECK(tables.scalar_type() == at::kLong && tables.dim() == 2 && tables.is_contiguous() && tables.size(0) == B,
              who, ": block tables must be contiguous int64 [B, W]");
  TORCH_CHECK(positions.scalar_type() == at::kLong && positions.dim() == 1 && positions.size(0) == B &&
                  positions.is_contiguous(),
              who, ": positions must be contiguous int64 [B]");
  TORCH_CHECK(k.size(2) == D && (D == 64 || D == 128 || D == 256), who,
              ": head dim must be 64, 128 or 256 and the same in q and the cache, got ", D);
  TORCH_CHECK(k.size(1) > 0 && Hq % k.size(1) == 0 && Hq / k.size(1) <= 8, who,
              ": query heads must be a multiple (at most 8) of KV heads");
}

// A launch's splits of each sequence's tokens, warps a block and dynamic shared memory, from the
// shapes alone (so a CUDA graph replays it). `splits`: the caller's, 0 for the choice below.
struct Shape {
  int splits, warps;
  unsigned shared;
};
// `fused`: the FUSED_QKV variant, which stages its query heads past the rings: the same splits and
// warps as the plain kernel (the same partial sums, so the same bits), more shared memory.
Shape launchShape(int B, int Hkv, int G, int D, int W, int blockSize, int splits, bool fused) {
  // Few (KV head, sequence) blocks: more warps per block to split each sequence's tokens, until about 8
  // warps per SM are busy in all, within shared memory. More than that costs more in the merge of the
  // warps' partial sums than it gains (H200, bench/results/h200-paged-attention-warps.log: at 512 blocks,
  // 4 warps beat 8 and 16 at both the 0.6B and the 4B shape).
  static const std::pair<int, int> limits = [] {
    const int device = c10::cuda::current_device();
    return std::make_pair(nvrtc::smCount(device), nvrtc::maxSharedBytes(device));
  }();
  // Splits only where (KV head, sequence) blocks would leave most SMs idle (fewer than a quarter of
  // them): then about one block per SM, each split at least 64 of the longest sequence's tokens (W
  // blocks). Fixed by the shapes, so a CUDA graph replays it. Measured in CUDA graphs on the H200
  // (bench/results/h200-paged-attention.log): at 8 blocks (batch 1 of Qwen3's 8 KV heads), 850
  // tokens, 16 splits take 8.1 us against 16.1 us unsplit; at 64 blocks and more, splits only add.
  if (splits == 0) {
    const int64_t blocks = static_cast<int64_t>(B) * Hkv;
    splits = 1;
    if (4 * blocks < limits.first) {
      const int64_t wanted = (limits.first + blocks - 1) / blocks;
      const int64_t byLength = (static_cast<int64_t>(W) * blockSize + 63) / 64;
      splits = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({wanted, byLength, kMaxSplits})));
    }
  }
  TORCH_CHECK(splits == 1 || static_cast<int64_t>(B) * Hkv <= kMaxSplitPairs, "pagedDecodeAttention: ", splits,
              " splits of ", B, " sequences of ", Hkv, " KV heads: more (sequence, KV head) pairs than the ",
              kMaxSplitPairs, " a split launch counts; take splits 1 (or 0, the default choice)");
  // AGENT_R1_PAGED_ATTENTION_WARPS=4|8|16 fixes it (to compare the choices in bench/engine-decode.ts)
  static const int forcedWarps = [] {
    const std::string v = nvrtc::tuningChoice("AGENT_R1_PAGED_ATTENTION_WARPS", {"4", "8", "16"});
    return v.empty() ? 0 : std::stoi(v);
  }();
  int warps = 4;
  while (splits == 1 && warps < 16 && static_cast<int64_t>(B) * Hkv * warps < 8 * limits.first) warps *= 2;
  const int maxWarps = maxThreads(D, G) / 32;
  warps = std::min(warps, maxWarps);
  if (forcedWarps) {
    TORCH_CHECK(forcedWarps <= maxWarps, "pagedDecodeAttention: AGENT_R1_PAGED_ATTENTION_WARPS=", forcedWarps,
                " is more than the ", maxWarps, " warps a block takes at ", G, " query heads a KV head and head dim ",
                D, "; unset it or set at most ", maxWarps);
    warps = forcedWarps;
  }
  // the largest of the warps' rings, the merge of their half-warps' partial sums, which reuses the
  // rings' memory, and the last split block's merge of the splits' maxima and denominators
  const auto sharedFor = [&](int w) {
    const size_t rings = static_cast<size_t>(w) * stages() * ringStepBytes(D);
    const size_t halves = static_cast<size_t>(2 * w * G * (D + 2)) * sizeof(float);
    const size_t stats = splits > 1 ? static_cast<size_t>(G * splits * 2) * sizeof(float) : 0;
    return std::max({rings, halves, stats});
  };
  while (warps > 1 && sharedFor(warps) > static_cast<size_t>(limits.second)) warps /= 2;
  size_t shared = sharedFor(warps);
  if (fused) {
    const size_t rings = static_cast<size_t>(warps) * stages() * ringStepBytes(D);
    shared = std::max(shared, rings + static_cast<size_t>(G * D) * 2);
    TORCH_CHECK(shared <= static_cast<size_t>(limits.second), "qkNormRopePagedAttention: ", warps,
                " warps' rings and query heads (", shared, " bytes) do not fit in a block's ", limits.second,
                " bytes of shared memory; unset AGENT_R1_PAGED_ATTENTION_STAGES or take qkNormRopeCache and "
                "pagedDecodeAttention");
  }
  return {splits, warps, static_cast<unsigned>(shared)};
}

// The kernel's arguments other than its tensors' pointers, and its launch: every tensor checked,
// out [B, Hq, D] allocated (B > 0).
struct Launch {
  int device, B, Hq, Hkv, D, W, blockSize, splits;
  float scale;
  bool fused;
};
void launchAttention(const Launch& l, const void* q, void* kc, void* vc, const void* tables, const void* positions,
                     void* out, const void* qkv, const void* norm, const void* invFreq, const void* slots,
                     int qkvStride, float eps, const at::TensorOptions& options) {
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(l.device).stream();
  const int G = l.Hq / l.Hkv;
  void* kernel = kernelFor(l.device, l.D, G, l.blockSize, l.fused, stream);
  const Shape shape = launchShape(l.B, l.Hkv, G, l.D, l.W, l.blockSize, l.splits, l.fused);
  int splits = shape.splits, W = l.W, Hkv = l.Hkv;
  float scale = l.scale;
  at::Tensor partSums, partStats;
  if (splits > 1) {
    partSums = at::empty({l.B, l.Hq, splits, l.D}, options.dtype(at::kFloat));
    partStats = at::empty({l.B, l.Hq, splits, 2}, options.dtype(at::kFloat));
  }
  void* sp = splits > 1 ? partSums.data_ptr() : nullptr;
  void* stp = splits > 1 ? partStats.data_ptr() : nullptr;
  void* cp = splits > 1 ? splitCounters(l.device, stream) : nullptr;
  void* args[] = {&q,  &kc, &vc,   &tables, &positions, &out,  &W,     &Hkv,      &scale,    &splits,
                  &sp, &stp, &cp, &qkv,    &norm,      &invFreq, &slots, &qkvStride, &eps};
  nvrtc::launch(kernel, dim3(Hkv, l.B, splits), dim3(32 * shape.warps), shape.shared, stream, args,
                l.fused ? "qkNormRopePagedAttention" : "pagedDecodeAttention");
}

// pagedDecodeAttention(q, kCache, vCache, blockTables, positions, blockSize, scale, splits) -> out [B, Hq, D]
// (splits: of each sequence's tokens, 0 for the choice in launchShape)
Napi::Value PagedDecodeAttention(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const at::Tensor& q = unwrapTensor(env, info[0], "q");
  const at::Tensor& k = unwrapTensor(env, info[1], "kCache");
  const at::Tensor& v = unwrapTensor(env, info[2], "vCache");
  const at::Tensor& tables = unwrapTensor(env, info[3], "blockTables");
  const at::Tensor& positions = unwrapTensor(env, info[4], "positions");
  const int blockSize = info[5].As<Napi::Number>().Int32Value();
  const float scale = info[6].As<Napi::Number>().FloatValue();
  const int splits = info[7].IsUndefined() ? 0 : info[7].As<Napi::Number>().Int32Value();
  const char* who = "pagedDecodeAttention";
  TORCH_CHECK(splits >= 0 && splits <= kMaxSplits, who, ": splits must be 0 (the default choice) to ", kMaxSplits,
              ", got ", splits);
  TORCH_CHECK(q.is_cuda() && q.scalar_type() == at::kBFloat16 && q.dim() == 3 && q.is_contiguous(), who,
              ": q must be a contiguous bf16 CUDA tensor [B, Hq, D]");
  checkCache(who, q.size(0), q.size(1), q.size(2), q.device(), k, v, tables, positions);
  TORCH_CHECK(blockSize > 0 && k.size(0) % blockSize == 0, who, ": bad block size ", blockSize);
  const Launch l{q.get_device(),
                 static_cast<int>(q.size(0)),
                 static_cast<int>(q.size(1)),
                 static_cast<int>(k.size(1)),
                 static_cast<int>(q.size(2)),
                 static_cast<int>(tables.size(1)),
                 blockSize,
                 splits,
                 scale,
                 /*fused=*/false};
  at::Tensor out = at::empty_like(q);
  if (l.B > 0) {
    launchAttention(l, q.data_ptr(), k.data_ptr(), v.data_ptr(), tables.data_ptr(), positions.data_ptr(),
                    out.data_ptr(), nullptr, nullptr, nullptr, nullptr, 0, 0.f, q.options());
  }
  return wrapTensor(env, out);
}

// qkNormRopePagedAttention(qkv [B, (Hq + 2 Hkv) D], norm [Hq + Hkv, D] | null, positions [B] int64,
//   invFreq [D / 2] f32, slots [B] int64, kCache, vCache [slots, Hkv, D], blockTables [B, W] int64,
//   blockSize, scale, eps, Hq, Hkv, splits) -> out [B, Hq, D]: fusedQkNormRopeCache (fused_decode.cc)
//   then pagedDecodeAttention in one launch (the FUSED_QKV kernel), bit for bit.
Napi::Value QkNormRopePagedAttention(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const at::Tensor& qkv = unwrapTensor(env, info[0], "qkv");
  const at::Tensor* norm = unwrapOptionalTensor(env, info[1], "norm");
  const at::Tensor& positions = unwrapTensor(env, info[2], "positions");
  const at::Tensor& invFreq = unwrapTensor(env, info[3], "invFreq");
  const at::Tensor& slots = unwrapTensor(env, info[4], "slots");
  const at::Tensor& k = unwrapTensor(env, info[5], "kCache");
  const at::Tensor& v = unwrapTensor(env, info[6], "vCache");
  const at::Tensor& tables = unwrapTensor(env, info[7], "blockTables");
  const int blockSize = info[8].As<Napi::Number>().Int32Value();
  const float scale = info[9].As<Napi::Number>().FloatValue();
  const float eps = info[10].As<Napi::Number>().FloatValue();
  const int Hq = info[11].As<Napi::Number>().Int32Value();
  const int Hkv = info[12].As<Napi::Number>().Int32Value();
  const int splits = info[13].IsUndefined() ? 0 : info[13].As<Napi::Number>().Int32Value();
  const char* who = "qkNormRopePagedAttention";
  TORCH_CHECK(splits >= 0 && splits <= kMaxSplits, who, ": splits must be 0 (the default choice) to ", kMaxSplits,
              ", got ", splits);
  TORCH_CHECK(Hq > 0 && Hkv > 0, who, ": Hq and Hkv must be positive, got ", Hq, " and ", Hkv);
  TORCH_CHECK(k.dim() == 3 && k.size(1) == Hkv, who, ": the caches must be [slots, Hkv, D] with Hkv = ", Hkv);
  const int64_t D = k.size(2);
  TORCH_CHECK(qkv.is_cuda() && qkv.scalar_type() == at::kBFloat16 && qkv.dim() == 2 && qkv.stride(1) == 1 &&
                  qkv.size(1) == (Hq + 2 * Hkv) * D && (qkv.size(0) <= 1 || qkv.stride(0) >= qkv.size(1)),
              who, ": qkv must be bf16 CUDA [B, (Hq + 2 Hkv) * D] with unit column stride (D ", D, " from the cache)");
  const int64_t B = qkv.size(0);
  checkCache(who, B, Hq, D, qkv.device(), k, v, tables, positions);
  TORCH_CHECK(blockSize > 0 && k.size(0) % blockSize == 0, who, ": bad block size ", blockSize);
  if (norm) {
    TORCH_CHECK(norm->device() == qkv.device() && norm->scalar_type() == at::kBFloat16 && norm->is_contiguous() &&
                    norm->numel() == (Hq + Hkv) * D,
                who, ": the q/k norm weight must be contiguous bf16 [Hq + Hkv, D] on qkv's device");
  }
  TORCH_CHECK(slots.device() == qkv.device() && slots.scalar_type() == at::kLong && slots.is_contiguous() &&
                  slots.numel() == B,
              who, ": slots must be contiguous int64 [B] on qkv's device");
  TORCH_CHECK(invFreq.device() == qkv.device() && invFreq.scalar_type() == at::kFloat && invFreq.is_contiguous() &&
                  invFreq.numel() == D / 2,
              who, ": invFreq must be float32 [D / 2] on qkv's device");
  // (one row's stride is never used: any may be reported)
  const int64_t qkvStride = B <= 1 ? qkv.size(1) : qkv.stride(0);
  TORCH_CHECK(qkvStride <= INT32_MAX, who, ": qkv's row stride is too large");
  const Launch l{qkv.get_device(),
                 static_cast<int>(B),
                 Hq,
                 Hkv,
                 static_cast<int>(D),
                 static_cast<int>(tables.size(1)),
                 blockSize,
                 splits,
                 scale,
                 /*fused=*/true};
  at::Tensor out = at::empty({B, Hq, D}, qkv.options());
  if (B > 0) {
    launchAttention(l, nullptr, k.data_ptr(), v.data_ptr(), tables.data_ptr(), positions.data_ptr(), out.data_ptr(),
                    qkv.data_ptr(), norm ? norm->data_ptr() : nullptr, invFreq.data_ptr(), slots.data_ptr(),
                    static_cast<int>(qkvStride), eps, qkv.options());
  }
  return wrapTensor(env, out);
}

// pagedDecodeAttentionPrepare(device, headDim, group, blockSize, fused): compiles and loads the kernel
// (and with `fused` its FUSED_QKV variant, qkNormRopePagedAttention's) and allocates the device's
// split counters now (not during a CUDA graph capture, where neither is allowed).
Napi::Value PagedDecodeAttentionPrepare(const Napi::CallbackInfo& info) {
  const int device = info[0].As<Napi::Number>().Int32Value();
  const int headDim = info[1].As<Napi::Number>().Int32Value();
  const int group = info[2].As<Napi::Number>().Int32Value();
  const int blockSize = info[3].As<Napi::Number>().Int32Value();
  const bool fused = info[4].IsBoolean() && info[4].As<Napi::Boolean>().Value();
  kernelFor(device, headDim, group, blockSize, /*fused=*/false, /*stream=*/nullptr);
  if (fused) kernelFor(device, headDim, group, blockSize, /*fused=*/true, /*stream=*/nullptr);
  splitCounters(device, /*stream=*/nullptr);
  return info.Env().Undefined();
}

#else

[[noreturn]] void noCuda(Napi::Env env) {
  throw Napi::Error::New(env,
                         "paged decode attention needs the native addon built against a CUDA libtorch (npm run "
                         "build:native)");
}
Napi::Value PagedDecodeAttention(const Napi::CallbackInfo& info) { noCuda(info.Env()); }
Napi::Value QkNormRopePagedAttention(const Napi::CallbackInfo& info) { noCuda(info.Env()); }
Napi::Value PagedDecodeAttentionPrepare(const Napi::CallbackInfo& info) { noCuda(info.Env()); }

#endif

}  // namespace

void registerPagedAttention(Napi::Env env, Napi::Object exports) {
  exportFunction<PagedDecodeAttention>(env, exports, "pagedDecodeAttention");
  exportFunction<QkNormRopePagedAttention>(env, exports, "qkNormRopePagedAttention");
  exportFunction<PagedDecodeAttentionPrepare>(env, exports, "pagedDecodeAttentionPrepare");
}

}  // namespace agent_r1
