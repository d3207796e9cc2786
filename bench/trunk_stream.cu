// The decode trunk's weight stream alone (native/src/decode_trunk.cc), to find what holds its
// consumers at some 2,800 cycles a 5 KiB row a warp where their instructions take some 500
// (bench/results/h200-decode-trunk.log). One persistent block per SM streams its share of the
// Qwen3-4B shape's 36 layers of weights (q/k/v, o, gate/up, down) through a ring of shared memory
// with the copy engine, as the trunk's producer does, and its consumer warps multiply each row by
// a staged input, as the trunk's do; no attention, no norms. Variants, each timed against the
// device-to-device copy bandwidth measured in the same run:
//   math    none (the consumers only wait for each stage and free it: the stream's own ceiling),
//           bf16 (the trunk's arithmetic: the input staged as bf16), f32 (the input staged as f32:
//           the same products in the same order, without unpacking the input's bf16 values), mma
//           (the same dot products on the tensor cores: mmaDot), and parts of the math alone (the
//           MATH list at the kernel)
//   warps   consumer warps: 2 to 16 (the trunk's 8)
//   nocopy  no producer: the consumers read the ring's stages without waiting (their own pace alone)
//   sync    the trunk's phases: after each matmul every block counts itself done (a fence and an
//           atomic add) and waits for all the others, then stages the next matmul's input from
//           global memory (what the matmul before wrote)
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/trunk_stream bench/trunk_stream.cu && /tmp/trunk_stream
// (an argument names one variant, as printed, to run it alone: for Nsight Compute).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(x)                                                                            \
  do {                                                                                      \
    cudaError_t e = (x);                                                                    \
    if (e != cudaSuccess) {                                                                 \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

typedef unsigned short bf16;
constexpr int kHidden = 2560, kHeads = 32, kKvHeads = 8, kHeadDim = 128, kInter = 9728, kLayers = 36;
constexpr int kQkvN = (kHeads + 2 * kKvHeads) * kHeadDim;
constexpr int kStageBytes = 19456;  // the trunk's at this shape: the longest row (down's 9728 values)
constexpr int kMaxK = kInter;
constexpr long long kSpinLimitNs = 4000000000ll;

// The four matmuls of a layer: [N, K]
__host__ __device__ constexpr int matN(int t) { return t == 0 ? kQkvN : t == 2 ? 2 * kInter : kHidden; }
__host__ __device__ constexpr int matK(int t) { return t == 1 ? kHeads * kHeadDim : t == 3 ? kInter : kHidden; }

struct Args {
  const uint4* w[4];  // [layers, N, K] each
  bf16* out[4];       // [N] each: the last layer's outputs (every layer writes them)
  int* counters;      // [layers * 4], zeros
  long long* clocks;  // block 0's SM clock and global timer at its start and end
  int ringStages;
};

__device__ __forceinline__ float lo(unsigned w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float hi(unsigned w) { return __uint_as_float(w & 0xffff0000u); }
__device__ __forceinline__ bf16 toBf16(float f) {
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (bf16)0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return (bf16)(u >> 16);
}
__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
// the trunk's dot8 (decode_sources.cc), and the same sum with the input already in f32
__device__ __forceinline__ float dot8(const uint4& a, const uint4& b) {
  return lo(a.x) * lo(b.x) + hi(a.x) * hi(b.x) + lo(a.y) * lo(b.y) + hi(a.y) * hi(b.y) + lo(a.z) * lo(b.z) +
         hi(a.z) * hi(b.z) + lo(a.w) * lo(b.w) + hi(a.w) * hi(b.w);
}
__device__ __forceinline__ float dot8f(const uint4& a, const float4& b0, const float4& b1) {
  return lo(a.x) * b0.x + hi(a.x) * b0.y + lo(a.y) * b0.z + hi(a.y) * b0.w + lo(a.z) * b1.x + hi(a.z) * b1.y +
         lo(a.w) * b1.z + hi(a.w) * b1.w;
}

__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// The trunk's tensor-core dot product (decode_trunk.cc's rowDots, one input row): a warp takes 256
// values of the weight row and of the input at a time as two 16 x 16 matrices whose product's
// diagonal sums to their dot product
__device__ __forceinline__ void ldsTrans4(unsigned addr, unsigned (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// this lane's share of the dot product of K values at shared addresses w and x (K % 256 == 0)
__device__ __forceinline__ float mmaDot(unsigned w, unsigned x, int K, int lane) {
  const unsigned bOffset = ((lane >> 3) & 1) * 256 + ((lane >> 4) & 1) * 128 + (lane & 7) * 16;
  float d1[4] = {0.f, 0.f, 0.f, 0.f}, d2[4] = {0.f, 0.f, 0.f, 0.f};
  const int tiles = K / 256;
  int t = 0;
  for (; t + 2 <= tiles; t += 2) {
    unsigned a[2][4], b[2][4];
#pragma unroll
    for (int u = 0; u < 2; u++) {
      ldsTrans4(w + (t + u) * 512 + 16 * lane, a[u]);
      ldsTrans4(x + (t + u) * 512 + bOffset, b[u]);
    }
#pragma unroll
    for (int u = 0; u < 2; u++) {
      mma16816(d1, a[u], b[u][0], b[u][1]);
      mma16816(d2, a[u], b[u][2], b[u][3]);
    }
  }
  if (t < tiles) {
    unsigned a[4], b[4];
    ldsTrans4(w + t * 512 + 16 * lane, a);
    ldsTrans4(x + t * 512 + bOffset, b);
    mma16816(d1, a, b[0], b[1]);
    mma16816(d2, a, b[2], b[3]);
  }
  const int g = lane >> 2, q = lane & 3;
  return g == 2 * q ? d1[0] + d2[2] : g == 2 * q + 1 ? d1[1] + d2[3] : 0.f;
}
__device__ __forceinline__ long long nowNs() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ bool mbarTryWait(unsigned bar, unsigned parity) {
  unsigned done;
  asm volatile(
      "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done;
}
__device__ __forceinline__ void mbarWait(unsigned bar, unsigned parity) {
  if (mbarTryWait(bar, parity)) return;
  const long long t0 = nowNs();
  while (!mbarTryWait(bar, parity))
    if (nowNs() - t0 > kSpinLimitNs) __trap();
}
__device__ __forceinline__ void mbarArrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void spinUntil(const int* count, int target) {
  const long long t0 = nowNs();
  for (;;) {
    int v;
    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(count) : "memory");
    if (v >= target) return;
    if (nowNs() - t0 > kSpinLimitNs) __trap();
  }
}

// matmul t of layer l: this block's rows [r0, r1), rps of them a stage
struct Mat {
  const uint4* w;
  int K, r0, r1, rps;
};
__device__ __forceinline__ Mat matOf(const Args& a, int l, int t) {
  Mat m;
  const int N = matN(t);
  m.K = matK(t);
  m.w = a.w[t] + (size_t)l * N * (m.K / 8);
  m.r0 = (int)((long long)N * blockIdx.x / gridDim.x);
  m.r1 = (int)((long long)N * (blockIdx.x + 1) / gridDim.x);
  m.rps = kStageBytes / (m.K * 2);
  return m;
}

template <int WARPS>
__device__ __forceinline__ void consumerSync() {
  asm volatile("bar.sync 1, %0;" ::"n"(WARPS * 32) : "memory");
}

// Parts of mmaDot alone, to tell which of them sets the consumers' pace: its shared-memory loads
// (ldmatrix, into a running xor), its MMAs (on the first tile's operands, loaded once a row), and
// the scalar loop's loads (16-byte loads of weights and input, into a running xor)
__device__ __forceinline__ float ldsmOnly(unsigned w, unsigned x, int K, int lane) {
  const unsigned bOffset = ((lane >> 3) & 1) * 256 + ((lane >> 4) & 1) * 128 + (lane & 7) * 16;
  unsigned acc = 0;
  for (int t = 0; t < K / 256; t++) {
    unsigned a[4], b[4];
    ldsTrans4(w + t * 512 + 16 * lane, a);
    ldsTrans4(x + t * 512 + bOffset, b);
    acc ^= a[0] ^ a[1] ^ a[2] ^ a[3] ^ b[0] ^ b[1] ^ b[2] ^ b[3];
  }
  return __uint_as_float(acc & 0x3fffffffu);
}
__device__ __forceinline__ float hmmaOnly(unsigned w, unsigned x, int K, int lane) {
  const unsigned bOffset = ((lane >> 3) & 1) * 256 + ((lane >> 4) & 1) * 128 + (lane & 7) * 16;
  float d1[4] = {0.f, 0.f, 0.f, 0.f}, d2[4] = {0.f, 0.f, 0.f, 0.f};
  unsigned a[4], b[4];
  ldsTrans4(w + 16 * lane, a);
  ldsTrans4(x + bOffset, b);
  for (int t = 0; t < K / 256; t++) {
    mma16816(d1, a, b[0], b[1]);
    mma16816(d2, a, b[2], b[3]);
  }
  return d1[0] + d2[2] + d1[1] + d2[3];
}
__device__ __forceinline__ float ldsOnly(const uint4* w, const uint4* x, int chunks, int lane) {
  unsigned acc = 0;
#pragma unroll 4
  for (int c = lane; c < chunks; c += 32) {
    const uint4 a = w[c], b = x[c];
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w;
  }
  return __uint_as_float(acc & 0x3fffffffu);
}

// MATH: 0 none, 1 bf16 input, 2 f32 input, 3 bf16 input on the tensor cores; 4 mmaDot's loads alone,
// 5 its MMAs alone, 6 the scalar loop's loads alone; 7 as 5 without the warp's sum and the store
// (what a row costs beyond its tiles), 8 as 6 over the first half of each row (per byte or per row)
template <int MATH, int WARPS, bool NOCOPY, bool SYNC>
__global__ void __launch_bounds__(WARPS * 32 + 32, 1) stream(const __grid_constant__ Args a) {
  extern __shared__ __align__(128) char shared[];
  char* ring = shared;
  char* xs = shared + (size_t)a.ringStages * kStageBytes;
  const int xsBytes = MATH == 2 ? kMaxK * 4 : kMaxK * 2;
  unsigned long long* bars = reinterpret_cast<unsigned long long*>(xs + xsBytes);
  const unsigned full = smem(bars), empty = smem(bars + a.ringStages);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, G = gridDim.x;
  if (threadIdx.x == 0) {
    for (int s = 0; s < a.ringStages; s++) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(full + 8 * s) : "memory");
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(empty + 8 * s), "r"(WARPS) : "memory");
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  // the input, some values: staged once when SYNC is off
  for (int i = threadIdx.x; i < kMaxK; i += blockDim.x) {
    const float v = (float)((i * 37) % 101 - 50) / 256.f;
    if (MATH == 2)
      reinterpret_cast<float*>(xs)[i] = __uint_as_float(__float_as_uint(v) & 0xffff0000u);
    else
      reinterpret_cast<bf16*>(xs)[i] = (bf16)(__float_as_uint(v) >> 16);
  }
  __syncthreads();
  if (warp == WARPS) {  // the producer, as the trunk's
    if (lane != 0 || NOCOPY) return;
    unsigned long long policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    unsigned k = 0;
    for (int l = 0; l < kLayers; l++)
      for (int t = 0; t < 4; t++) {
        const Mat m = matOf(a, l, t);
        for (int r = m.r0; r < m.r1; r += m.rps, k++) {
          const unsigned slot = k % a.ringStages, use = k / a.ringStages;
          if (use > 0) mbarWait(empty + 8 * slot, (use - 1) & 1);
          const unsigned bytes = (unsigned)(min(m.rps, m.r1 - r) * m.K * 2);
          asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(full + 8 * slot), "r"(bytes)
                       : "memory");
          asm volatile(
              "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], "
              "%4;" ::"r"(smem(ring + (size_t)slot * kStageBytes)),
              "l"(m.w + (size_t)r * (m.K / 8)), "r"(bytes), "r"(full + 8 * slot), "l"(policy)
              : "memory");
        }
      }
    return;
  }
  long long c0 = 0, t0 = 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    c0 = clock64();
    t0 = nowNs();
  }
  unsigned k = 0;
  for (int l = 0; l < kLayers; l++)
    for (int t = 0; t < 4; t++) {
      const Mat m = matOf(a, l, t);
      const int chunks = m.K / 8;
      if (SYNC) {  // wait for the matmul before in every block, then stage its output as this one's input
        const int before = l * 4 + t - 1;
        if (before >= 0) {
          if (threadIdx.x == 0) spinUntil(a.counters + before, G);
          consumerSync<WARPS>();
        }
        const bf16* in = a.out[(t + 3) % 4];
        for (int i = threadIdx.x; i < chunks; i += WARPS * 32) {
          const uint4 v = reinterpret_cast<const uint4*>(in)[i];
          if (MATH == 2) {
            float4* f = reinterpret_cast<float4*>(xs);
            f[i] = make_float4(lo(v.x), hi(v.x), lo(v.y), hi(v.y));
            f[chunks + i] = make_float4(lo(v.z), hi(v.z), lo(v.w), hi(v.w));
          } else {
            reinterpret_cast<uint4*>(xs)[i] = v;
          }
        }
        consumerSync<WARPS>();
      }
      for (int r = m.r0; r < m.r1; r += m.rps, k++) {
        const unsigned slot = k % a.ringStages, use = k / a.ringStages;
        if (!NOCOPY) mbarWait(full + 8 * slot, use & 1);
        const int rows = min(m.rps, m.r1 - r);
        if (MATH != 0)
          for (int i = 0; i < rows; i++) {
            if ((r - m.r0 + i) % WARPS != warp) continue;
            const uint4* w = reinterpret_cast<const uint4*>(ring + (size_t)slot * kStageBytes) + (size_t)i * chunks;
            float acc = 0.f;
            if (MATH == 1) {
              const uint4* x = reinterpret_cast<const uint4*>(xs);
#pragma unroll 4
              for (int c = lane; c < chunks; c += 32) acc += dot8(w[c], x[c]);
            } else if (MATH == 2) {
              const float4* x = reinterpret_cast<const float4*>(xs);
#pragma unroll 4
              for (int c = lane; c < chunks; c += 32) acc += dot8f(w[c], x[c], x[chunks + c]);
            } else if (MATH == 3) {
              acc = mmaDot(smem(w), smem(xs), m.K, lane);
            } else if (MATH == 4) {
              acc = ldsmOnly(smem(w), smem(xs), m.K, lane);
            } else if (MATH == 5 || MATH == 7) {
              acc = hmmaOnly(smem(w), smem(xs), m.K, lane);
            } else if (MATH == 8) {
              acc = ldsOnly(w, reinterpret_cast<const uint4*>(xs), chunks / 2, lane);
            } else {
              acc = ldsOnly(w, reinterpret_cast<const uint4*>(xs), chunks, lane);
            }
            if (MATH == 7) {  // kept alive, never stored
              if (acc == 1234.5f) a.out[t][r + i] = toBf16(acc);
              continue;
            }
            acc = warpSum(acc);
            if (lane == 0) a.out[t][r + i] = toBf16(acc);
          }
        __syncwarp();
        if (!NOCOPY && lane == 0) mbarArrive(empty + 8 * slot);
      }
      if (SYNC) {  // count this block done, as the trunk's countDone
        consumerSync<WARPS>();
        if (threadIdx.x == 0) {
          asm volatile("fence.acq_rel.gpu;" ::: "memory");
          asm volatile("red.relaxed.gpu.global.add.s32 [%0], 1;" ::"l"(a.counters + l * 4 + t) : "memory");
        }
      }
    }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    a.clocks[0] = clock64() - c0;
    a.clocks[1] = nowNs() - t0;
  }
}

__global__ void fill(uint4* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned v[4];
    for (int j = 0; j < 4; j++) {
      unsigned h = (unsigned)(i * 4 + j) * 2654435761u ^ seed;
      h ^= h >> 15;
      h *= 2246822519u;
      h ^= h >> 13;
      // two bf16 values in [-1/16, 1/16)
      const float a = ((float)(h & 0xffff) / 65536.f - 0.5f) / 8.f, b = ((float)(h >> 16) / 65536.f - 0.5f) / 8.f;
      v[j] = (__float_as_uint(a) >> 16) | (__float_as_uint(b) & 0xffff0000u);
    }
    p[i] = make_uint4(v[0], v[1], v[2], v[3]);
  }
}

struct Variant {
  std::string name;
  void (*kernel)(Args);
  int warps, math;
  bool nocopy, sync;
};

template <int MATH, int WARPS, bool NOCOPY, bool SYNC>
Variant variant(const char* name) {
  return {name, stream<MATH, WARPS, NOCOPY, SYNC>, WARPS, MATH, NOCOPY, SYNC};
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  int device = 0, sms = 0, maxShared = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK(cudaDeviceGetAttribute(&maxShared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));

  // the copy bandwidth: bytes read and written by a device-to-device copy of 2 GiB
  const size_t copyBytes = 2ull << 30;
  void *src, *dst;
  CHECK(cudaMalloc(&src, copyBytes));
  CHECK(cudaMalloc(&dst, copyBytes));
  std::vector<float> copyMs;
  for (int i = 0; i < 8; i++) {
    CHECK(cudaEventRecord(e0, s));
    CHECK(cudaMemcpyAsync(dst, src, copyBytes, cudaMemcpyDeviceToDevice, s));
    CHECK(cudaEventRecord(e1, s));
    CHECK(cudaEventSynchronize(e1));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (i >= 2) copyMs.push_back(ms);
  }
  CHECK(cudaFree(src));
  CHECK(cudaFree(dst));
  const double copyGBs = 2.0 * copyBytes / (median(copyMs) * 1e-3) / 1e9;

  Args a{};
  size_t weightBytes = 0;
  for (int t = 0; t < 4; t++) {
    const size_t n = (size_t)kLayers * matN(t) * matK(t) / 8;
    uint4* w;
    CHECK(cudaMalloc(&w, n * 16));
    fill<<<1024, 256, 0, s>>>(w, n, 17u + t);
    a.w[t] = w;
    weightBytes += n * 16;
    CHECK(cudaMalloc(&a.out[t], (size_t)matN(t) * 2));
    CHECK(cudaMemsetAsync(a.out[t], 0, (size_t)matN(t) * 2, s));
  }
  CHECK(cudaMalloc(&a.counters, kLayers * 4 * sizeof(int)));
  CHECK(cudaMalloc(&a.clocks, 2 * sizeof(long long)));

  std::vector<Variant> variants = {
      variant<0, 8, false, false>("none-8"),
      variant<1, 8, false, false>("bf16-8"),
      variant<1, 8, true, false>("bf16-8-nocopy"),
      variant<1, 16, false, false>("bf16-16"),
      variant<1, 16, true, false>("bf16-16-nocopy"),
      variant<2, 8, false, false>("f32-8"),
      variant<2, 8, true, false>("f32-8-nocopy"),
      variant<2, 16, false, false>("f32-16"),
      variant<0, 8, false, true>("none-8-sync"),
      variant<1, 8, false, true>("bf16-8-sync"),
      variant<1, 16, false, true>("bf16-16-sync"),
      variant<2, 16, false, true>("f32-16-sync"),
      variant<3, 8, false, false>("mma-8"),
      variant<3, 8, true, false>("mma-8-nocopy"),
      variant<3, 4, false, false>("mma-4"),
      variant<3, 8, false, true>("mma-8-sync"),
      variant<3, 16, false, true>("mma-16-sync"),
      variant<0, 8, true, false>("none-8-nocopy"),
      variant<3, 2, true, false>("mma-2-nocopy"),
      variant<3, 4, true, false>("mma-4-nocopy"),
      variant<3, 16, true, false>("mma-16-nocopy"),
      variant<4, 8, true, false>("ldsm-8-nocopy"),
      variant<4, 16, true, false>("ldsm-16-nocopy"),
      variant<5, 8, true, false>("hmma-8-nocopy"),
      variant<6, 8, true, false>("lds-8-nocopy"),
      variant<6, 16, true, false>("lds-16-nocopy"),
      variant<7, 8, true, false>("hmma-quiet-8-nocopy"),
      variant<8, 8, true, false>("lds-half-8-nocopy"),
  };
  // the last layer's outputs on the host, for the variants without `sync` (whose input is fixed)
  const auto bfFloat = [](bf16 v) {
    unsigned u = (unsigned)v << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  };
  std::vector<float> x(kMaxK);
  for (int i = 0; i < kMaxK; i++) x[i] = (float)((i * 37) % 101 - 50) / 256.f;
  std::vector<std::vector<double>> expected(4);
  for (int t = 0; t < 4; t++) {
    const int N = matN(t), K = matK(t);
    std::vector<bf16> w((size_t)N * K);
    CHECK(cudaMemcpy(w.data(), a.w[t] + (size_t)(kLayers - 1) * N * (K / 8), w.size() * 2, cudaMemcpyDeviceToHost));
    expected[t].resize(N);
    for (int n = 0; n < N; n++) {
      double acc = 0;
      for (int k = 0; k < K; k++) acc += (double)bfFloat(w[(size_t)n * K + k]) * x[k];
      expected[t][n] = acc;
    }
  }
  // the largest difference from the host's outputs, over the largest output
  const auto outputError = [&]() {
    double worst = 0, scale = 0;
    for (int t = 0; t < 4; t++) {
      std::vector<bf16> out(matN(t));
      CHECK(cudaMemcpy(out.data(), a.out[t], out.size() * 2, cudaMemcpyDeviceToHost));
      for (int n = 0; n < matN(t); n++) {
        worst = std::max(worst, std::fabs(bfFloat(out[n]) - expected[t][n]));
        scale = std::max(scale, std::fabs(expected[t][n]));
      }
    }
    return worst / scale;
  };
  const char* only = argc > 1 ? argv[1] : nullptr;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, device));
  printf("# %s, %d SMs; weights %.1f MB a step (%d layers); copy bandwidth %.0f GB/s (read + written)\n", prop.name,
         sms, weightBytes / 1e6, kLayers, copyGBs);
  printf("%-16s %6s %9s %8s %9s %8s %9s %10s\n", "variant", "stages", "us/step", "us/layer", "GB/s", "of copy", "SM MHz",
         "max error");
  for (const Variant& v : variants) {
    if (only && v.name != only) continue;
    for (int t = 0; t < 4; t++) CHECK(cudaMemsetAsync(a.out[t], 0, (size_t)matN(t) * 2, s));
    const int xsBytes = v.math == 2 ? kMaxK * 4 : kMaxK * 2;
    const int ringStages = (maxShared - xsBytes - 1024) / (kStageBytes + 16);
    const int sharedBytes = ringStages * kStageBytes + xsBytes + 16 * ringStages;
    a.ringStages = ringStages;
    CHECK(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, sharedBytes));
    std::vector<float> ms;
    long long clocks[2] = {0, 0};
    for (int i = 0; i < 13; i++) {
      CHECK(cudaMemsetAsync(a.counters, 0, kLayers * 4 * sizeof(int), s));
      CHECK(cudaEventRecord(e0, s));
      v.kernel<<<sms, v.warps * 32 + 32, sharedBytes, s>>>(a);
      CHECK(cudaGetLastError());
      CHECK(cudaEventRecord(e1, s));
      CHECK(cudaEventSynchronize(e1));
      float t;
      CHECK(cudaEventElapsedTime(&t, e0, e1));
      if (i >= 3) ms.push_back(t);
    }
    CHECK(cudaMemcpy(clocks, a.clocks, sizeof(clocks), cudaMemcpyDeviceToHost));
    const double m = median(ms), GBs = weightBytes / (m * 1e-3) / 1e9;
    // the outputs' error where they are the fixed input's (none: no math; sync: the outputs chained;
    // f32: its input staged for no one K; nocopy: the ring never filled; 4-6: parts of the math)
    const bool checked = (v.math == 1 || v.math == 3) && !v.sync && !v.nocopy;
    char error[32] = "-";
    if (checked) snprintf(error, sizeof error, "%.2e", outputError());
    printf("%-16s %6d %9.1f %8.2f %9.0f %7.1f%% %9.0f %10s\n", v.name.c_str(), ringStages, m * 1e3, m * 1e3 / kLayers,
           GBs, 100.0 * GBs / copyGBs, clocks[1] ? 1e3 * clocks[0] / clocks[1] : 0.0, error);
  }
  return 0;
}
