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
// unnormalised sums with their maximum and denominator; a second kernel merges the splits.
#include "handles.h"

#ifdef AGENT_R1_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <vector>

#include "decode_sources.h"
#include "nvrtc.h"
#include "paged_attention.h"
#endif

namespace agent_r1 {

#ifdef AGENT_R1_CUDA
// HEAD_DIM, GROUP (query heads per KV head), BLOCK_SIZE (tokens a cache block) and STAGES come in
// as -D defines. Each half-warp (16 lanes) takes UNROLL consecutive tokens at a time, a lane PER =
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
const char* const decode_sources::kPagedAttention = R"CUDA(
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

// The attention of query heads [h * GROUP, (h + 1) * GROUP) of sequence b over its tokens of split
// `split` of `splits` (all of them when splits == 1), by `threads` threads (tid in [0, threads),
// whole warps) that `sync` (a barrier of them) orders; shared: their rings and the merge of their
// partial sums (paged_attention::sharedBytes on the host). q: the group's query rows [GROUP,
// HEAD_DIM]; tables [B, W]: the sequences' block ids; positions [B]: their newest tokens'. splits ==
// 1: the result goes to out [B, Hq, HEAD_DIM]; else this split's unnormalised sums to partSums [B, Hq, splits, HEAD_DIM]
// and its maximum and denominator to partStats [B, Hq, splits, 2], for mergeSplit.
// ready(holdsNewest) comes between what may be read before the query and the newest token's row
// are written and what may not (holdsNewest: this split attends over the newest token): the
// paged_decode_attention kernel's depWait, the decode trunk's wait for its q/k/v matmul (nvrtc.h,
// decode_trunk.cc). Before it, only the older tokens' rows are copied (the positions and the block
// table are the step's inputs): the first STAGES - 1 steps' copies overlap what comes before, and
// the newest row is copied after it.
template <typename Ready, typename Sync>
__device__ __forceinline__ void attendPart(const bf16* q, const bf16* kc, const bf16* vc, const long long* tables,
                                           const long long* positions, int W, int b, int h, int Hkv, float scale,
                                           int split, int splits, bf16* out, float* partSums, float* partStats,
                                           float* shared, unsigned tid, unsigned threads, Ready ready, Sync sync) {
  const int lane = tid & 31, warp = tid >> 5, warps = threads >> 5;
  const int half = lane >> 4, sub = lane & 15;  // which half-warp, and the lane within it
  const int halves = 2 * warps, me = 2 * warp + half;
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
  // step i's rows into its place in the ring, as one cp.async group (empty past the last step);
  // the row of token `skip` is left as zeros
  const auto issue = [&](int i, int skip) {
    char* dst = ring + (i % STAGES) * STEP_BYTES + lane * ROW_BYTES;
    // the half-warp's UNROLL tokens start at a multiple of UNROLL: in blocks of a multiple of UNROLL
    // tokens, all lie in one block, and one look-up of the table serves them
    const int t0 = start + i * stride + half * UNROLL;
    const long long block0 = ALIGNED && i < steps && t0 < len ? table[t0 / BLOCK_SIZE] : 0;
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      const int t = t0 + u;
      const bool ok = i < steps && t < len && t != skip;
      const long long block = ALIGNED ? block0 : ok ? table[t / BLOCK_SIZE] : 0;
      const size_t slot = ok ? (size_t)block * BLOCK_SIZE + t % BLOCK_SIZE : 0;
      copyRow(dst + (2 * u) * 32 * ROW_BYTES, kc + slot * rowStride + headOffset, ok);
      copyRow(dst + (2 * u + 1) * 32 * ROW_BYTES, vc + slot * rowStride + headOffset, ok);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  const int newest = seqLen - 1;
#pragma unroll
  for (int i = 0; i < STAGES - 1; i++) issue(i, newest);
  ready(newest >= first && newest < len);
  // the newest token's row, where one of those steps holds it (in this lane's half-warp): once the
  // zeros copied in its place have landed, a plain copy (each lane reads back only what it wrote)
  if (newest >= start && newest < len) {
    const int i = (newest - start) / stride, o = newest - start - i * stride;
    if (i < STAGES - 1 && o < 2 * UNROLL && o / UNROLL == half) {
      asm volatile("cp.async.wait_all;" ::: "memory");
      const int u = o % UNROLL;
      const size_t slot = (size_t)table[newest / BLOCK_SIZE] * BLOCK_SIZE + newest % BLOCK_SIZE;
      char* dst = ring + (i % STAGES) * STEP_BYTES + lane * ROW_BYTES;
      const bf16* kSrc = kc + slot * rowStride + headOffset;
      const bf16* vSrc = vc + slot * rowStride + headOffset;
#if ROW_BYTES == 8
      *reinterpret_cast<uint2*>(dst + (2 * u) * 32 * ROW_BYTES) = *reinterpret_cast<const uint2*>(kSrc);
      *reinterpret_cast<uint2*>(dst + (2 * u + 1) * 32 * ROW_BYTES) = *reinterpret_cast<const uint2*>(vSrc);
#else
#pragma unroll
      for (int j = 0; j < ROW_BYTES / 16; j++) {
        reinterpret_cast<uint4*>(dst + (2 * u) * 32 * ROW_BYTES)[j] = reinterpret_cast<const uint4*>(kSrc)[j];
        reinterpret_cast<uint4*>(dst + (2 * u + 1) * 32 * ROW_BYTES)[j] = reinterpret_cast<const uint4*>(vSrc)[j];
      }
#endif
    }
  }
  // scores in base 2 (q scaled by log2(e) too), so an exponential is one ex2
  const float qScale = scale * 1.4426950408889634f;
  // the running maximum and denominator of the one head this lane owns
  const int own = sub >> OWNER_SHIFT;
  float mOwn = NEG_INF, lOwn = 0.f;
  float qr[GROUP][PER], acc[GROUP][PER];
#pragma unroll
  for (int g = 0; g < GROUP; g++) {
    const Raw qraw = loadRaw(q + (size_t)g * HEAD_DIM + sub * PER);
#pragma unroll
    for (int i = 0; i < PER; i++) {
      qr[g][i] = at(qraw, i) * qScale;
      acc[g][i] = 0.f;
    }
  }
  for (int i = 0; i < steps; i++) {
    issue(i + STAGES - 1, -1);
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
  sync();
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
  sync();
  for (int e = tid; e < GROUP * HEAD_DIM; e += threads) {
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
}

// The splits of one (sequence, query head) merged, at value d: stats, the head's splits' maxima and
// denominators [splits, 2]; sums, their unnormalised sums [splits, HEAD_DIM]. Up to
// MERGE_AT_ONCE splits, a thread loads every split's maximum, denominator and sum at once, then
// adds them: a loop over the splits waited on their loads a few at a time, and the merge sits
// between the attention and the o matmul on the decode step's critical path (4B batch 1: 5.2 us
// of an 81 us layer, h200-kernel-timeline.log). The same sums in the same order either way.
#define MERGE_AT_ONCE 16

// split s's share of the merged sums (maximum m, denominator l, sum a) under the splits' maximum M;
// a split with no tokens (m = -inf) has none
__device__ __forceinline__ void addSplit(float m, float l, float a, float M, float& L, float& A) {
  if (m == NEG_INF) return;
  const float f = ex2(m - M);
  L += l * f;
  A += a * f;
}

__device__ __forceinline__ float mergeSplit(const float* stats, const float* sums, int splits, int d) {
  sums += d;
  float M = NEG_INF, L = 0.f, A = 0.f;
  if (splits <= MERGE_AT_ONCE) {
    float m[MERGE_AT_ONCE], l[MERGE_AT_ONCE], a[MERGE_AT_ONCE];
#pragma unroll
    for (int s = 0; s < MERGE_AT_ONCE; s++) {
      // a split with no tokens wrote sums of 0 and a maximum of -inf
      m[s] = s < splits ? stats[2 * s] : NEG_INF;
      l[s] = s < splits ? stats[2 * s + 1] : 0.f;
      a[s] = s < splits ? sums[s * HEAD_DIM] : 0.f;
    }
#pragma unroll
    for (int s = 0; s < MERGE_AT_ONCE; s++) M = fmaxf(M, m[s]);
#pragma unroll
    for (int s = 0; s < MERGE_AT_ONCE; s++) addSplit(m[s], l[s], a[s], M, L, A);  // past the splits: m = -inf
  } else {
    for (int s = 0; s < splits; s++) M = fmaxf(M, stats[2 * s]);
    for (int s = 0; s < splits; s++) addSplit(stats[2 * s], stats[2 * s + 1], sums[s * HEAD_DIM], M, L, A);
  }
  return A / L;
}
)CUDA";

namespace {

// The most splits of one sequence's tokens (pagedDecodeAttention's `splits`).
constexpr int kMaxSplits = 64;

// The two kernels over those functions (after kPagedAttention).
const char* kKernels = R"CUDA(
// (MAX_THREADS, 1): with the bound on threads alone, ptxas held GROUP 2 to 64 registers and spilled.
// MAX_THREADS (a define: the host caps the warps of a block at it) is 512, or 256 where GROUP *
// HEAD_DIM passes 512 and a thread's sums and queries need more than the 128 registers 512 threads
// leave (GROUP 8 at head dim 128 takes 217; at 256, 255 and some spill). One block per (KV head,
// sequence, split).
extern "C" __global__ void __launch_bounds__(MAX_THREADS, 1) paged_decode_attention(
    const bf16* __restrict__ q,                  // [B, Hkv * GROUP, HEAD_DIM]
    const bf16* __restrict__ kc,                 // [numBlocks * BLOCK_SIZE, Hkv, HEAD_DIM]
    const bf16* __restrict__ vc,                 // same
    const long long* __restrict__ tables,        // [B, W] block ids
    const long long* __restrict__ positions,     // [B]: attend over [0, position]
    bf16* __restrict__ out,                      // [B, Hkv * GROUP, HEAD_DIM] (splits == 1)
    int W, int Hkv, float scale,
    int splits,                                  // blockIdx.z's range
    float* __restrict__ partSums,                // [B, Hkv * GROUP, splits, HEAD_DIM] (splits > 1)
    float* __restrict__ partStats) {             // [B, Hkv * GROUP, splits, 2]: maximum, denominator
  extern __shared__ float shared[];
  const int h = blockIdx.x, b = blockIdx.y;
  // the kernel before (qk_norm_rope_cache) writes q and the newest token's cache row; the older
  // tokens' rows were written before this layer's q/k/v matmul began, and that matmul had ended
  // when the kernel before let this one start (it does so past its own depWait)
  attendPart(q + ((size_t)b * Hkv + h) * GROUP * HEAD_DIM, kc, vc, tables, positions, W, b, h, Hkv, scale, blockIdx.z,
             splits, out, partSums, partStats, shared, threadIdx.x, blockDim.x,
             [](bool) {
               depWait();
               depLaunchNext();
             },
             [] { __syncthreads(); });
}

// The splits merged: grid (Hq, B), HEAD_DIM threads.
extern "C" __global__ void paged_decode_merge(const float* __restrict__ partSums, const float* __restrict__ partStats,
                                              bf16* __restrict__ out, int splits) {
  const size_t head = (size_t)blockIdx.y * gridDim.x + blockIdx.x;
  const float* stats = partStats + 2 * head * splits;
  const float* sums = partSums + head * splits * HEAD_DIM;
  depWait();
  depLaunchNext();
  out[head * HEAD_DIM + threadIdx.x] = toBf16(mergeSplit(stats, sums, splits, threadIdx.x));
}
)CUDA";

// The kernels for (device, head dim, group size, block size), the attention allowed the most shared
// memory the device has (the merge of up to 32 half-warps' partial sums). `stream`: see nvrtc::kernel.
struct Kernels {
  void* attention;
  void* merge;
};
// Steps of the ring (kPagedAttention): 2, or AGENT_R1_PAGED_ATTENTION_STAGES=2|3|4 (to compare the choices in
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

// Tokens a half-warp takes a step (kPagedAttention's UNROLL), and the bytes of one step of a warp's ring
// (kPagedAttention's STEP_BYTES: keys and values of 2 * UNROLL tokens, a lane's 16th of each row).
constexpr int kUnroll = 4;
size_t ringStepBytes(int headDim) { return static_cast<size_t>(kUnroll) * 2 * 32 * (headDim / 16) * 2; }

// The most threads a block of the kernel takes (kPagedAttention's MAX_THREADS).
int maxThreads(int headDim, int group) { return group * headDim > 512 ? 256 : 512; }

}  // namespace

std::vector<std::string> paged_attention::defines(int headDim, int group, int blockSize) {
  return {"HEAD_DIM=" + std::to_string(headDim), "GROUP=" + std::to_string(group),
          "BLOCK_SIZE=" + std::to_string(blockSize), "STAGES=" + std::to_string(stages()),
          "UNROLL=" + std::to_string(kUnroll)};
}

size_t paged_attention::sharedBytes(int headDim, int group, int warps) {
  const size_t rings = static_cast<size_t>(warps) * stages() * ringStepBytes(headDim);
  return std::max(rings, static_cast<size_t>(2 * warps * group * (headDim + 2)) * sizeof(float));
}

namespace {

Kernels kernelsFor(int device, int headDim, int group, int blockSize, cudaStream_t stream) {
  static const std::string source = nvrtc::withBf16Helpers(decode_sources::kPagedAttention) + kKernels;
  std::vector<std::string> defines = paged_attention::defines(headDim, group, blockSize);
  defines.push_back("MAX_THREADS=" + std::to_string(maxThreads(headDim, group)));
  void* attention =
      nvrtc::kernel(device, source.c_str(), "paged_decode_attention", defines, stream, "pagedDecodeAttention");
  nvrtc::allowMaxSharedBytes(attention, device, "pagedDecodeAttention");
  void* merge = nvrtc::kernel(device, source.c_str(), "paged_decode_merge", defines, stream, "pagedDecodeAttention");
  return {attention, merge};
}

void checkArgs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& tables,
               const at::Tensor& positions) {
  TORCH_CHECK(q.is_cuda() && q.scalar_type() == at::kBFloat16 && q.dim() == 3 && q.is_contiguous(),
              "pagedDecodeAttention: q must be a contiguous bf16 CUDA tensor [B, Hq, D]");
  TORCH_CHECK(k.dim() == 3 && k.sizes() == v.sizes() && k.scalar_type() == at::kBFloat16 &&
                  v.scalar_type() == at::kBFloat16 && k.is_contiguous() && v.is_contiguous(),
              "pagedDecodeAttention: the cache's k and v must be contiguous bf16 [slots, Hkv, D] tensors of one shape");
  TORCH_CHECK(k.device() == q.device() && v.device() == q.device() && tables.device() == q.device() &&
                  positions.device() == q.device(),
              "pagedDecodeAttention: every tensor must be on q's device");
  TORCH_CHECK(tables.scalar_type() == at::kLong && tables.dim() == 2 && tables.is_contiguous() &&
                  tables.size(0) == q.size(0),
              "pagedDecodeAttention: block tables must be contiguous int64 [B, W]");
  TORCH_CHECK(positions.scalar_type() == at::kLong && positions.dim() == 1 && positions.size(0) == q.size(0) &&
                  positions.is_contiguous(),
              "pagedDecodeAttention: positions must be contiguous int64 [B]");
  const int64_t D = q.size(2);
  TORCH_CHECK(k.size(2) == D && (D == 64 || D == 128 || D == 256),
              "pagedDecodeAttention: head dim must be 64, 128 or 256 and the same in q and the cache, got ", D);
  TORCH_CHECK(q.size(1) % k.size(1) == 0 && q.size(1) / k.size(1) <= 8,
              "pagedDecodeAttention: query heads must be a multiple (at most 8) of KV heads");
}

// pagedDecodeAttention(q, kCache, vCache, blockTables, positions, blockSize, scale, splits) -> out [B, Hq, D]
// (splits: of each sequence's tokens, 0 for the choice below)
Napi::Value PagedDecodeAttention(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const at::Tensor& q = unwrapTensor(env, info[0], "q");
  const at::Tensor& k = unwrapTensor(env, info[1], "kCache");
  const at::Tensor& v = unwrapTensor(env, info[2], "vCache");
  const at::Tensor& tables = unwrapTensor(env, info[3], "blockTables");
  const at::Tensor& positions = unwrapTensor(env, info[4], "positions");
  int blockSize = info[5].As<Napi::Number>().Int32Value();
  float scale = info[6].As<Napi::Number>().FloatValue();
  int splits = info[7].IsUndefined() ? 0 : info[7].As<Napi::Number>().Int32Value();
  TORCH_CHECK(splits >= 0 && splits <= kMaxSplits, "pagedDecodeAttention: splits must be 0 (the default choice) to ",
              kMaxSplits, ", got ", splits);
  checkArgs(q, k, v, tables, positions);
  TORCH_CHECK(blockSize > 0 && k.size(0) % blockSize == 0, "pagedDecodeAttention: bad block size ", blockSize);
  const int B = static_cast<int>(q.size(0)), Hq = static_cast<int>(q.size(1)), D = static_cast<int>(q.size(2));
  int Hkv = static_cast<int>(k.size(1)), W = static_cast<int>(tables.size(1));
  const int G = Hq / Hkv;
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(q.get_device()).stream();
  const Kernels kernels = kernelsFor(q.get_device(), D, G, blockSize, stream);
  at::Tensor out = at::empty_like(q);
  if (B == 0) return wrapTensor(env, out);
  // Few (KV head, sequence) blocks: more warps per block to split each sequence's tokens, until about 8
  // warps per SM are busy in all, within shared memory. More than that costs more in the merge of the
  // warps' partial sums than it gains (H200, bench/results/h200-paged-attention-warps.log: at 512 blocks,
  // 4 warps beat 8 and 16 at both the 0.6B and the 4B shape).
  static const std::pair<int, int> limits = [] {
    const int device = c10::cuda::current_device();
    return std::make_pair(nvrtc::smCount(device), nvrtc::maxSharedBytes(device));
  }();
  const auto sharedFor = [&](int w) { return paged_attention::sharedBytes(D, G, w); };
  // AGENT_R1_PAGED_ATTENTION_WARPS=4|8|16 fixes it (to compare the choices in bench/engine-decode.ts)
  static const int forcedWarps = [] {
    const std::string v = nvrtc::tuningChoice("AGENT_R1_PAGED_ATTENTION_WARPS", {"4", "8", "16"});
    return v.empty() ? 0 : std::stoi(v);
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
  while (warps > 1 && sharedFor(warps) > static_cast<size_t>(limits.second)) warps /= 2;
  const unsigned shared = static_cast<unsigned>(sharedFor(warps));
  const void* qp = q.data_ptr();
  const void* kp = k.data_ptr();
  const void* vp = v.data_ptr();
  const void* tp = tables.data_ptr();
  const void* pp = positions.data_ptr();
  void* op = out.data_ptr();
  at::Tensor partSums, partStats;
  if (splits > 1) {
    partSums = at::empty({B, Hq, splits, D}, q.options().dtype(at::kFloat));
    partStats = at::empty({B, Hq, splits, 2}, q.options().dtype(at::kFloat));
  }
  void* sp = splits > 1 ? partSums.data_ptr() : nullptr;
  void* stp = splits > 1 ? partStats.data_ptr() : nullptr;
  void* args[] = {&qp, &kp, &vp, &tp, &pp, &op, &W, &Hkv, &scale, &splits, &sp, &stp};
  nvrtc::launch(kernels.attention, dim3(Hkv, B, splits), dim3(32 * warps), shared, stream, args,
                "pagedDecodeAttention");
  if (splits > 1) {
    void* mergeArgs[] = {&sp, &stp, &op, &splits};
    nvrtc::launch(kernels.merge, dim3(Hq, B), dim3(D), 0, stream, mergeArgs, "pagedDecodeAttention");
  }
  return wrapTensor(env, out);
}

// pagedDecodeAttentionPrepare(device, headDim, group, blockSize): compiles and loads the kernel now
// (not during a CUDA graph capture, where loading a module is not allowed).
Napi::Value PagedDecodeAttentionPrepare(const Napi::CallbackInfo& info) {
  kernelsFor(info[0].As<Napi::Number>().Int32Value(), info[1].As<Napi::Number>().Int32Value(),
             info[2].As<Napi::Number>().Int32Value(), info[3].As<Napi::Number>().Int32Value(), /*stream=*/nullptr);
  return info.Env().Undefined();
}

#else
namespace {

[[noreturn]] void noCuda(Napi::Env env) {
  throw Napi::Error::New(env,
                         "paged decode attention needs the native addon built against a CUDA libtorch (npm run "
                         "build:native)");
}
Napi::Value PagedDecodeAttention(const Napi::CallbackInfo& info) { noCuda(info.Env()); }
Napi::Value PagedDecodeAttentionPrepare(const Napi::CallbackInfo& info) { noCuda(info.Env()); }

#endif

}  // namespace

void registerPagedAttention(Napi::Env env, Napi::Object exports) {
  exportFunction<PagedDecodeAttention>(env, exports, "pagedDecodeAttention");
  exportFunction<PagedDecodeAttentionPrepare>(env, exports, "pagedDecodeAttentionPrepare");
}

}  // namespace agent_r1
