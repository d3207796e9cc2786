// Decode attention over the engine's paged KV cache, read in place: for each sequence b and KV
// head h, the G query heads of h's group attend over the tokens [0, positions[b]] that b's block
// table places in the cache's blocks. libtorch's own kernels cannot do this without a copy: the
// flash kernel of PyTorch 2.11 takes no block table (2.13's does, for blocks of 256 tokens), so
// the engine used to gather every row's keys and values into a dense copy each step, three
// passes over the cache instead of one.
//
// The kernel is CUDA C compiled at run time by NVRTC for the device it runs on (a pip libtorch
// ships NVRTC; no CUDA compiler is needed to build the addon), loaded and launched through the
// driver API on the current stream, so it can be captured in a CUDA graph. One thread block per
// (KV head, sequence): its half-warps split the tokens, each keeping an online softmax per query
// head (float32), and their partial results are merged in shared memory. bf16 only.
#include "handles.h"

#ifdef AGENT_R1_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <c10/cuda/CUDAGuard.h>
#include <dlfcn.h>

#include <cstdlib>

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>
#endif

namespace agent_r1 {
namespace {

#ifdef AGENT_R1_CUDA

// HEAD_DIM and GROUP (query heads per KV head) come in as -D defines. Each half-warp (16 lanes)
// takes one token at a time, a lane PER = HEAD_DIM / 16 of its values (16-byte loads at head dim
// 128), so a warp reads two cache rows per step and a dot product is reduced in 4 shuffles.
const char* kSource = R"CUDA(
typedef unsigned short bf16;
#define LANES 16
#define PER (HEAD_DIM / LANES)
#define UNROLL 4
#define NEG_INF __int_as_float(0xff800000)

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

// value i of a row: bf16 is the top half of a float32; element 0 is the low half of word 0
__device__ __forceinline__ float at(const Raw& r, int i) {
  const unsigned int w = r.w[i >> 1];
  return __uint_as_float((i & 1) ? (w & 0xffff0000u) : (w << 16));
}

__device__ __forceinline__ bf16 toBf16(float f) {
  unsigned int u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (bf16)0x7fc0;  // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);                          // round to nearest even
  return (bf16)(u >> 16);
}

extern "C" __global__ void __launch_bounds__(512) paged_decode_attention(
    const bf16* __restrict__ q,                  // [B, Hkv * GROUP, HEAD_DIM]
    const bf16* __restrict__ kc,                 // [numBlocks * blockSize, Hkv, HEAD_DIM]
    const bf16* __restrict__ vc,                 // same
    const long long* __restrict__ tables,        // [B, W] block ids
    const long long* __restrict__ positions,     // [B]: attend over [0, position]
    bf16* __restrict__ out,                      // [B, Hkv * GROUP, HEAD_DIM]
    int W, int blockSize, int Hkv, float scale) {
  extern __shared__ float shared[];
  const int h = blockIdx.x, b = blockIdx.y;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int half = lane >> 4, sub = lane & 15;  // which half-warp, and the lane within it
  const int halves = 2 * warps, me = 2 * warp + half;
  const int len = (int)positions[b] + 1;
  const int Hq = Hkv * GROUP;
  float qr[GROUP][PER], acc[GROUP][PER], m[GROUP], l[GROUP];
#pragma unroll
  for (int g = 0; g < GROUP; g++) {
    const Raw qraw = loadRaw(q + ((size_t)b * Hq + h * GROUP + g) * HEAD_DIM + sub * PER);
#pragma unroll
    for (int i = 0; i < PER; i++) {
      qr[g][i] = at(qraw, i) * scale;
      acc[g][i] = 0.f;
    }
    m[g] = NEG_INF;
    l[g] = 0.f;
  }
  const long long* table = tables + (size_t)b * W;
  const size_t rowStride = (size_t)Hkv * HEAD_DIM;
  const size_t headOffset = (size_t)h * HEAD_DIM + sub * PER;
  // the loop bound is the warp's, so both halves run every iteration and every shuffle is convergent
  for (int base = warp * 2 * UNROLL; base < len; base += warps * 2 * UNROLL) {
    Raw kr[UNROLL], vr[UNROLL];
    bool ok[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      const int t = base + half * UNROLL + u;
      ok[u] = t < len;
      if (ok[u]) {
        const size_t slot = (size_t)table[t / blockSize] * blockSize + t % blockSize;
        kr[u] = loadRaw(kc + slot * rowStride + headOffset);
        vr[u] = loadRaw(vc + slot * rowStride + headOffset);
      } else {
#pragma unroll
        for (int j = 0; j < PER / 2; j++) kr[u].w[j] = vr[u].w[j] = 0u;
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
#pragma unroll
      for (int g = 0; g < GROUP; g++) {
        float s = 0.f;
#pragma unroll
        for (int i = 0; i < PER; i++) s += qr[g][i] * at(kr[u], i);
#pragma unroll
        for (int o = LANES / 2; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (ok[u]) {
          const float mNew = fmaxf(m[g], s);
          const float c = __expf(m[g] - mNew), p = __expf(s - mNew);
          l[g] = l[g] * c + p;
#pragma unroll
          for (int i = 0; i < PER; i++) acc[g][i] = acc[g][i] * c + p * at(vr[u], i);
          m[g] = mNew;
        }
      }
    }
  }
  // shared: [halves][GROUP][HEAD_DIM] partial sums, then [halves][GROUP] maxima and [halves][GROUP] sums
  float* sAcc = shared;
  float* sM = shared + halves * GROUP * HEAD_DIM;
  float* sL = sM + halves * GROUP;
#pragma unroll
  for (int g = 0; g < GROUP; g++) {
#pragma unroll
    for (int i = 0; i < PER; i++) sAcc[(me * GROUP + g) * HEAD_DIM + sub * PER + i] = acc[g][i];
    if (sub == 0) {
      sM[me * GROUP + g] = m[g];
      sL[me * GROUP + g] = l[g];
    }
  }
  __syncthreads();
  for (int e = threadIdx.x; e < GROUP * HEAD_DIM; e += blockDim.x) {
    const int g = e / HEAD_DIM, d = e % HEAD_DIM;
    float M = NEG_INF;
    for (int w = 0; w < halves; w++) M = fmaxf(M, sM[w * GROUP + g]);
    float L = 0.f, A = 0.f;
    for (int w = 0; w < halves; w++) {
      const float f = __expf(sM[w * GROUP + g] - M);  // a half-warp with no tokens: exp(-inf) = 0
      L += sL[w * GROUP + g] * f;
      A += sAcc[(w * GROUP + g) * HEAD_DIM + d] * f;
    }
    out[((size_t)b * Hq + h * GROUP + g) * HEAD_DIM + d] = toBf16(A / L);
  }
}
)CUDA";

// The few NVRTC and driver entry points used, resolved with dlopen (their headers and libraries
// need not be present at build time; the driver's is always loaded with CUDA).
using Result = int;
struct Api {
  Result (*nvrtcCreateProgram)(void**, const char*, const char*, int, const char* const*, const char* const*);
  Result (*nvrtcCompileProgram)(void*, int, const char* const*);
  Result (*nvrtcGetProgramLogSize)(void*, size_t*);
  Result (*nvrtcGetProgramLog)(void*, char*);
  Result (*nvrtcGetCUBINSize)(void*, size_t*);
  Result (*nvrtcGetCUBIN)(void*, char*);
  Result (*nvrtcDestroyProgram)(void**);
  const char* (*nvrtcGetErrorString)(Result);
  Result (*cuModuleLoadData)(void**, const void*);
  Result (*cuModuleGetFunction)(void**, void*, const char*);
  Result (*cuLaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                           void**);
  Result (*cuFuncSetAttribute)(void*, int, int);
  Result (*cuGetErrorString)(Result, const char**);
};

template <typename F>
void bind(void* lib, const char* name, F& slot, std::string& missing) {
  slot = reinterpret_cast<F>(dlsym(lib, name));
  if (!slot) missing += std::string(missing.empty() ? "" : ", ") + name;
}

// The folder holding the loaded libc10_cuda (site-packages/torch/lib for a pip libtorch).
std::string torchLibDir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&c10::cuda::device_count), &info) == 0 || !info.dli_fname) return "";
  std::string path = info.dli_fname;
  return path.substr(0, path.find_last_of('/'));
}

void* openNvrtc(std::vector<std::string>& tried) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("AGENT_R1_NVRTC")) candidates.push_back(env);
  for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) candidates.push_back(name);
  const std::string lib = torchLibDir();
  if (!lib.empty()) {
    // pip's CUDA wheels beside torch: nvidia/cu13/lib (CUDA 13), nvidia/cuda_nvrtc/lib (CUDA 12)
    for (const char* rel : {"/../../nvidia/cu13/lib/libnvrtc.so.13", "/../../nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
                            "/libnvrtc.so"}) {
      candidates.push_back(lib + rel);
    }
  }
  for (const char* path : {"/usr/local/cuda/lib64/libnvrtc.so", "/usr/lib/x86_64-linux-gnu/libnvrtc.so"}) {
    candidates.push_back(path);
  }
  for (const auto& c : candidates) {
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_GLOBAL)) return h;
    tried.push_back(c);
  }
  return nullptr;
}

const Api& api() {
  static Api a{};
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> tried;
    void* nvrtc = openNvrtc(tried);
    if (!nvrtc) {
      error = "paged decode attention needs NVRTC (libnvrtc), which came with neither this libtorch nor CUDA; tried:";
      for (const auto& t : tried) error += " " + t;
      error += ". Set AGENT_R1_NVRTC to its path, or decode attention to 'flash' or 'sdpa'";
      return;
    }
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!driver) {
      error = "paged decode attention: the CUDA driver (libcuda.so.1) could not be opened";
      return;
    }
    std::string missing;
    bind(nvrtc, "nvrtcCreateProgram", a.nvrtcCreateProgram, missing);
    bind(nvrtc, "nvrtcCompileProgram", a.nvrtcCompileProgram, missing);
    bind(nvrtc, "nvrtcGetProgramLogSize", a.nvrtcGetProgramLogSize, missing);
    bind(nvrtc, "nvrtcGetProgramLog", a.nvrtcGetProgramLog, missing);
    bind(nvrtc, "nvrtcGetCUBINSize", a.nvrtcGetCUBINSize, missing);
    bind(nvrtc, "nvrtcGetCUBIN", a.nvrtcGetCUBIN, missing);
    bind(nvrtc, "nvrtcDestroyProgram", a.nvrtcDestroyProgram, missing);
    bind(nvrtc, "nvrtcGetErrorString", a.nvrtcGetErrorString, missing);
    bind(driver, "cuModuleLoadData", a.cuModuleLoadData, missing);
    bind(driver, "cuModuleGetFunction", a.cuModuleGetFunction, missing);
    bind(driver, "cuLaunchKernel", a.cuLaunchKernel, missing);
    bind(driver, "cuFuncSetAttribute", a.cuFuncSetAttribute, missing);
    bind(driver, "cuGetErrorString", a.cuGetErrorString, missing);
    if (!missing.empty()) error = "paged decode attention: NVRTC or the CUDA driver lacks " + missing;
  });
  if (!error.empty()) throw std::runtime_error(error);
  return a;
}

void check(Result r, const char* what) {
  if (r == 0) return;
  const char* msg = nullptr;
  api().cuGetErrorString(r, &msg);
  throw std::runtime_error(std::string("paged decode attention: ") + what + " failed: " + (msg ? msg : "unknown"));
}

int maxSharedBytes(int device) {
  int n = 0;
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return n;
}

// Compiled kernels by (device, head dim, group size).
std::mutex kernelsMutex;
std::map<std::tuple<int, int, int>, void*> kernels;

// `stream`: the stream of the launch that needs it, or null (pagedDecodeAttentionPrepare): only a
// kernel not loaded yet asks whether that stream is being captured, as loading is not allowed then.
void* kernelFor(int device, int headDim, int group, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(kernelsMutex);
  auto key = std::make_tuple(device, headDim, group);
  auto found = kernels.find(key);
  if (found != kernels.end()) return found->second;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (stream) C10_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  TORCH_CHECK(status == cudaStreamCaptureStatusNone, "pagedDecodeAttention: the kernel for head dim ", headDim, " and group ", group,
              " is not loaded yet and cannot be while a CUDA graph is captured; call pagedDecodeAttentionPrepare first");
  const Api& a = api();
  int major = 0, minor = 0;
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
  C10_CUDA_CHECK(cudaFree(nullptr));  // the device's primary context, current for the driver calls below
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  const std::string arch = "--gpu-architecture=sm_" + std::to_string(major) + std::to_string(minor);
  const std::string dDef = "-DHEAD_DIM=" + std::to_string(headDim), gDef = "-DGROUP=" + std::to_string(group);
  const char* options[] = {arch.c_str(), dDef.c_str(), gDef.c_str(), "--std=c++17"};
  void* program = nullptr;
  Result r = a.nvrtcCreateProgram(&program, kSource, "paged_decode_attention.cu", 0, nullptr, nullptr);
  if (r != 0) throw std::runtime_error(std::string("NVRTC: ") + a.nvrtcGetErrorString(r));
  r = a.nvrtcCompileProgram(program, 4, options);
  if (r != 0) {
    size_t n = 0;
    a.nvrtcGetProgramLogSize(program, &n);
    std::string log(n, '\0');
    a.nvrtcGetProgramLog(program, log.data());
    a.nvrtcDestroyProgram(&program);
    throw std::runtime_error("paged decode attention: NVRTC could not compile the kernel for " + arch + ": " + log);
  }
  size_t size = 0;
  a.nvrtcGetCUBINSize(program, &size);
  std::string cubin(size, '\0');
  a.nvrtcGetCUBIN(program, cubin.data());
  a.nvrtcDestroyProgram(&program);
  void* module = nullptr;
  void* function = nullptr;
  check(a.cuModuleLoadData(&module, cubin.data()), "loading the kernel");
  check(a.cuModuleGetFunction(&function, module, "paged_decode_attention"), "finding the kernel");
  // as much shared memory per block as the device allows (the merge of 32 half-warps' partial sums)
  const int kMaxDynamicSharedMemory = 8;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  check(a.cuFuncSetAttribute(function, kMaxDynamicSharedMemory, maxSharedBytes(device)),
        "raising the kernel's shared memory");
  kernels.emplace(key, function);
  return function;
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

// pagedDecodeAttention(q, kCache, vCache, blockTables, positions, blockSize, scale) -> out [B, Hq, D]
Napi::Value PagedDecodeAttention(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const at::Tensor& q = unwrapTensor(env, info[0], "q");
  const at::Tensor& k = unwrapTensor(env, info[1], "kCache");
  const at::Tensor& v = unwrapTensor(env, info[2], "vCache");
  const at::Tensor& tables = unwrapTensor(env, info[3], "blockTables");
  const at::Tensor& positions = unwrapTensor(env, info[4], "positions");
  int blockSize = info[5].As<Napi::Number>().Int32Value();
  float scale = info[6].As<Napi::Number>().FloatValue();
  checkArgs(q, k, v, tables, positions);
  TORCH_CHECK(blockSize > 0 && k.size(0) % blockSize == 0, "pagedDecodeAttention: bad block size ", blockSize);
  const int B = static_cast<int>(q.size(0)), Hq = static_cast<int>(q.size(1)), D = static_cast<int>(q.size(2));
  int Hkv = static_cast<int>(k.size(1)), W = static_cast<int>(tables.size(1));
  const int G = Hq / Hkv;
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(q.get_device()).stream();
  void* function = kernelFor(q.get_device(), D, G, stream);
  at::Tensor out = at::empty_like(q);
  if (B == 0) return wrapTensor(env, out);
  // Few (KV head, sequence) blocks: more warps per block to split each sequence's tokens, until about 8
  // warps per SM are busy in all, within shared memory. More than that costs more in the merge of the
  // warps' partial sums than it gains (H200, bench/results/h200-paged-attention-warps.log: at 512 blocks,
  // 4 warps beat 8 and 16 at both the 0.6B and the 4B shape).
  static const std::pair<int, int> limits = [] {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, c10::cuda::current_device());
    return std::make_pair(sms, maxSharedBytes(c10::cuda::current_device()));
  }();
  const auto sharedFor = [&](int w) { return static_cast<size_t>(2 * w * G * (D + 2)) * sizeof(float); };
  // AGENT_R1_PAGED_ATTENTION_WARPS=4|8|16 fixes it (to compare the choices in bench/engine-decode.ts)
  static const int forcedWarps = [] {
    const char* e = std::getenv("AGENT_R1_PAGED_ATTENTION_WARPS");
    if (!e || !*e) return 0;
    const std::string v = e;
    TORCH_CHECK(v == "4" || v == "8" || v == "16", "AGENT_R1_PAGED_ATTENTION_WARPS must be 4, 8 or 16, got '", v,
                "'; unset it for the default choice");
    return std::stoi(v);
  }();
  int warps = 4;
  while (warps < 16 && static_cast<int64_t>(B) * Hkv * warps < 8 * limits.first) warps *= 2;
  if (forcedWarps) warps = forcedWarps;
  while (warps > 1 && sharedFor(warps) > static_cast<size_t>(limits.second)) warps /= 2;
  const unsigned shared = static_cast<unsigned>(sharedFor(warps));
  const void* qp = q.data_ptr();
  const void* kp = k.data_ptr();
  const void* vp = v.data_ptr();
  const void* tp = tables.data_ptr();
  const void* pp = positions.data_ptr();
  void* op = out.data_ptr();
  void* args[] = {&qp, &kp, &vp, &tp, &pp, &op, &W, &blockSize, &Hkv, &scale};
  check(api().cuLaunchKernel(function, Hkv, B, 1, 32 * warps, 1, 1, shared, stream, args, nullptr),
        "launching the kernel");
  return wrapTensor(env, out);
}

// pagedDecodeAttentionPrepare(device, headDim, group): compiles and loads the kernel now (not
// during a CUDA graph capture, where loading a module is not allowed).
Napi::Value PagedDecodeAttentionPrepare(const Napi::CallbackInfo& info) {
  kernelFor(info[0].As<Napi::Number>().Int32Value(), info[1].As<Napi::Number>().Int32Value(),
            info[2].As<Napi::Number>().Int32Value(), /*stream=*/nullptr);
  return info.Env().Undefined();
}

#else

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
