// The device functions the decode kernels share (decode_sources.h).
#include "decode_sources.h"

#ifdef AGENT_R1_CUDA
namespace agent_r1 {
namespace decode_sources {

const char* const kDecodeMath = R"CUDA(
// bf16(a + b) and bf16(bf16(r * inv) * g) of bf16 pairs: the residual add and the norm's scale and
// weight, rounded as libtorch's add, rms_norm and multiply round them
__device__ __forceinline__ unsigned int addPair(unsigned int a, unsigned int b) {
  return pack(lo(a) + lo(b), hi(a) + hi(b));
}

__device__ __forceinline__ unsigned int normPair(unsigned int r, unsigned int g, float inv) {
  return pack(round16(lo(r) * inv) * lo(g), round16(hi(r) * inv) * hi(g));
}

// bf16(bf16(silu(gate)) * up) of one gate and one up value, as silu_mul rounds it
__device__ __forceinline__ bf16 siluMul(bf16 g, bf16 u) {
  const float x = bf(g);
  return toBf16(round16(x / (1.f + expf(-x))) * bf(u));
}

// the same of a pair of gate and a pair of up values
__device__ __forceinline__ unsigned int siluMulPair(unsigned int g, unsigned int u) {
  return (unsigned int)siluMul((bf16)(g & 0xffffu), (bf16)(u & 0xffffu)) |
         ((unsigned int)siluMul((bf16)(g >> 16), (bf16)(u >> 16)) << 16);
}

__device__ __forceinline__ float dot8(const uint4& a, const uint4& b) {
  return lo(a.x) * lo(b.x) + hi(a.x) * hi(b.x) + lo(a.y) * lo(b.y) + hi(a.y) * hi(b.y) + lo(a.z) * lo(b.z) +
         hi(a.z) * hi(b.z) + lo(a.w) * lo(b.w) + hi(a.w) * hi(b.w);
}

__device__ __forceinline__ uint4 siluMul8(const uint4& g, const uint4& u) {
  return make_uint4(siluMulPair(g.x, u.x), siluMulPair(g.y, u.y), siluMulPair(g.z, u.z), siluMulPair(g.w, u.w));
}

__device__ __forceinline__ float squares8(const uint4& a) {
  return lo(a.x) * lo(a.x) + hi(a.x) * hi(a.x) + lo(a.y) * lo(a.y) + hi(a.y) * hi(a.y) + lo(a.z) * lo(a.z) +
         hi(a.z) * hi(a.z) + lo(a.w) * lo(a.w) + hi(a.w) * hi(a.w);
}

__device__ __forceinline__ uint4 addPairs(const uint4& a, const uint4& b) {
  return make_uint4(addPair(a.x, b.x), addPair(a.y, b.y), addPair(a.z, b.z), addPair(a.w, b.w));
}

// the norm's scale s and weight g applied to 8 values
__device__ __forceinline__ uint4 normPairs(const uint4& r, const uint4& g, float s) {
  return make_uint4(normPair(r.x, g.x, s), normPair(r.y, g.y, s), normPair(r.z, g.z, s), normPair(r.w, g.w, s));
}

// ss[m] += the squares of 8 values of row m (m < 4)
__device__ __forceinline__ void addSquares(float (&ss)[4], const uint4& v, int m) {
  const float sq = squares8(v);
#pragma unroll
  for (int q = 0; q < 4; q++)
    if (q == m) ss[q] += sq;
}

// An rms norm's 1 / rms of each of 4 rows of n values, from each thread's sums of squares ss of the
// entries it took: each warp's sum, then the warps' in order through shared partial [4][8]; `sync`
// a barrier of the threads (whole warps, `warps` of them)
template <typename Sync>
__device__ __forceinline__ void rmsInverses(const float (&ss)[4], float (&inv)[4], float (*partial)[8], int tid,
                                            int warps, int n, float eps, Sync sync) {
#pragma unroll
  for (int j = 0; j < 4; j++) {
    const float v = warpSum(ss[j]);
    if ((tid & 31) == 0) partial[j][tid >> 5] = v;
  }
  sync();
#pragma unroll
  for (int j = 0; j < 4; j++) {
    float t = 0.f;
    for (int w = 0; w < warps; w++) t += partial[j][w];
    inv[j] = rsqrtf(t / (float)n + eps);
  }
}

// A matmul's input f(x) [M, K] (M <= 4) staged into shared xs [M, chunks] (chunks = K / 8, 8 bf16
// values a uint4) by threads tid of [0, threads) (at most 8 warps), which `sync` (a barrier of those
// threads) orders; it returns after one, xs written. f by `mode`:
//   0  x [M, K] itself;
//   1  silu(gate) * up of x = gu [M, 2 K] = [gate | up], as silu_mul rounds it;
//   2  rms_norm(r) * normW with r = x + residual (or x when residual is null), as add_rms_norm rounds
//      it; with writeRes, r also goes to resOut (the next residual). partial: shared [4][8] floats.
// Plain loads of x and residual: the trunk reads what other blocks wrote earlier in its launch. A
// thread loads LOADS of its entries before it uses any: global reads the copy engine's weight stream
// queues behind take a microsecond or more each, and the compiler does not hoist the next entry's
// loads above the last entry's shared store by itself (it cannot tell the two apart), so one entry
// at a time costs a round trip an entry (LOADS 1: gemv_rows', whose registers are its occupancy). Not
// named BATCH: that is gemv_rows' macro, which AGENT_R1_GEMV_BATCH sets with -D for the whole source.
template <int LOADS, typename Sync>
__device__ __forceinline__ void stageInput(uint4* xs, const uint4* x, const uint4* residual, const uint4* normW,
                                           uint4* resOut, bool writeRes, int M, int chunks, int mode, float eps,
                                           int tid, int threads, float (*partial)[8], Sync sync) {
  const int warps = threads >> 5, total = M * chunks;
  if (mode == 1) {
    for (int base = tid; base < total; base += LOADS * threads) {
      uint4 g[LOADS], u[LOADS];
#pragma unroll
      for (int j = 0; j < LOADS; j++) {
        const int i = base + j * threads, m = i / chunks, c = i - m * chunks;
        if (i < total) {
          g[j] = x[(size_t)m * 2 * chunks + c];
          u[j] = x[(size_t)m * 2 * chunks + chunks + c];
        }
      }
#pragma unroll
      for (int j = 0; j < LOADS; j++)
        if (base + j * threads < total) xs[base + j * threads] = siluMul8(g[j], u[j]);
    }
  } else if (mode == 2) {
    float ss[4] = {0.f, 0.f, 0.f, 0.f};
    for (int base = tid; base < total; base += LOADS * threads) {
      uint4 r[LOADS], b[LOADS];
#pragma unroll
      for (int j = 0; j < LOADS; j++) {
        const int i = base + j * threads;
        if (i < total) {
          r[j] = x[i];
          if (residual) b[j] = residual[i];
        }
      }
#pragma unroll
      for (int j = 0; j < LOADS; j++) {
        const int i = base + j * threads;
        if (i >= total) continue;
        uint4 v = r[j];
        if (residual) {
          v = addPairs(v, b[j]);
          if (writeRes) resOut[i] = v;
        }
        xs[i] = v;
        addSquares(ss, v, i / chunks);
      }
    }
    float inv[4];
    rmsInverses(ss, inv, partial, tid, warps, chunks * 8, eps, sync);
    // each thread rewrites the entries it staged
    for (int base = tid; base < total; base += LOADS * threads) {
      uint4 g[LOADS];
#pragma unroll
      for (int j = 0; j < LOADS; j++) {
        const int i = base + j * threads;
        if (i < total) g[j] = normW[i % chunks];
      }
#pragma unroll
      for (int j = 0; j < LOADS; j++) {
        const int i = base + j * threads, m = i / chunks;
        if (i >= total) continue;
        xs[i] = normPairs(xs[i], g[j], m == 0 ? inv[0] : m == 1 ? inv[1] : m == 2 ? inv[2] : inv[3]);
      }
    }
  } else {
    for (int base = tid; base < total; base += LOADS * threads) {
      uint4 v[LOADS];
#pragma unroll
      for (int j = 0; j < LOADS; j++)
        if (base + j * threads < total) v[j] = x[base + j * threads];
#pragma unroll
      for (int j = 0; j < LOADS; j++)
        if (base + j * threads < total) xs[base + j * threads] = v[j];
    }
  }
  sync();
}
)CUDA";

const char* const kHeadRope = R"CUDA(
// A lane holds ROPE_PER = HEAD_DIM / 64 values of each half of a head, so rotate-half pairs value i
// with i + HEAD_DIM / 2 in the same lane.
#define HALF (HEAD_DIM / 2)
#define ROPE_PER (HEAD_DIM / 64)
// One warp: the head src [HEAD_DIM] (bf16), normed by w [HEAD_DIM] when w is not null (Qwen3's
// q/k norm, float32 inside as rms_norm), then rotated by RoPE at `pos` with cos and sin of pos *
// invFreq (float32, rounded to bf16 as libtorch's tables are), to dst [HEAD_DIM].
__device__ __forceinline__ void normRopeHead(const bf16* src, const bf16* w, float pos, const float* invFreq,
                                             bf16* dst, int lane, float eps) {
  float x1[ROPE_PER], x2[ROPE_PER];
  float ss = 0.f;
#pragma unroll
  for (int j = 0; j < ROPE_PER; j++) {
    x1[j] = bf(src[lane * ROPE_PER + j]);
    x2[j] = bf(src[HALF + lane * ROPE_PER + j]);
    ss += x1[j] * x1[j] + x2[j] * x2[j];
  }
  if (w) {
    const float inv = rsqrtf(warpSum(ss) / (float)HEAD_DIM + eps);
#pragma unroll
    for (int j = 0; j < ROPE_PER; j++) {
      x1[j] = round16(round16(x1[j] * inv) * bf(w[lane * ROPE_PER + j]));
      x2[j] = round16(round16(x2[j] * inv) * bf(w[HALF + lane * ROPE_PER + j]));
    }
  }
#pragma unroll
  for (int j = 0; j < ROPE_PER; j++) {
    const float f = pos * invFreq[lane * ROPE_PER + j];
    const float c = round16(cosf(f)), s = round16(sinf(f));
    // x * cos + rotate_half(x) * sin, rotate_half(x) = [-x2, x1]
    dst[lane * ROPE_PER + j] = toBf16(round16(x1[j] * c) - round16(x2[j] * s));
    dst[HALF + lane * ROPE_PER + j] = toBf16(round16(x2[j] * c) + round16(x1[j] * s));
  }
}
)CUDA";

}  // namespace decode_sources
}  // namespace agent_r1
#endif
