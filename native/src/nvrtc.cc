// Run-time compilation of the engine's CUDA kernels. A pip libtorch ships NVRTC (and the driver
// comes with CUDA), so no CUDA compiler is needed to build the addon: each kernel is compiled on
// first use for the exact device it runs on, loaded through the driver API and launched on the
// current stream, which a CUDA graph capture records like any libtorch kernel. NVRTC and the
// driver are opened with dlopen, so neither their headers nor their libraries are needed at build time.
#include "nvrtc.h"

#ifdef AGENT_R1_CUDA
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/util/Exception.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <tuple>

namespace agent_r1 {
namespace nvrtc {
namespace {

// The few NVRTC and driver entry points used.
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
  Result (*cuLaunchKernelEx)(const void*, void*, void**, void**);
  Result (*cuFuncSetAttribute)(void*, int, int);
  Result (*cuFuncGetAttribute)(int*, int, void*);
  Result (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int*, void*, int, size_t);
  Result (*cuGetErrorString)(Result, const char**);
  // optional (drivers of CUDA 12 and up): only the decode trunk's o and down by columns need it
  Result (*cuTensorMapEncodeTiled)(void*, int, unsigned, void*, const uint64_t*, const uint64_t*, const unsigned*,
                                   const unsigned*, int, int, int, int);
};

// cuLaunchKernelEx's configuration, laid out as cuda.h's CUlaunchConfig and CUlaunchAttribute
// (the driver is opened with dlopen, without its header)
struct LaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int programmaticStreamSerializationAllowed;
  } value;
};
struct LaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  cudaStream_t stream;
  LaunchAttribute* attrs;
  unsigned numAttrs;
};
constexpr int kProgrammaticStreamSerialization = 6;  // CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION

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
      error = "the engine's CUDA kernels need NVRTC (libnvrtc), which came with neither this libtorch nor CUDA; tried:";
      for (const auto& t : tried) error += " " + t;
      error += ". Set AGENT_R1_NVRTC to its path, or decode attention to 'flash' or 'sdpa'";
      return;
    }
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!driver) {
      error = "the engine's CUDA kernels: the CUDA driver (libcuda.so.1) could not be opened";
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
    bind(driver, "cuLaunchKernelEx", a.cuLaunchKernelEx, missing);
    bind(driver, "cuFuncSetAttribute", a.cuFuncSetAttribute, missing);
    bind(driver, "cuFuncGetAttribute", a.cuFuncGetAttribute, missing);
    bind(driver, "cuOccupancyMaxActiveBlocksPerMultiprocessor", a.cuOccupancyMaxActiveBlocksPerMultiprocessor, missing);
    bind(driver, "cuGetErrorString", a.cuGetErrorString, missing);
    a.cuTensorMapEncodeTiled =
        reinterpret_cast<decltype(a.cuTensorMapEncodeTiled)>(dlsym(driver, "cuTensorMapEncodeTiled"));
    if (!missing.empty()) error = "the engine's CUDA kernels: NVRTC or the CUDA driver lacks " + missing;
  });
  if (!error.empty()) throw std::runtime_error(error);
  return a;
}

void check(Result r, const char* who, const char* what) {
  if (r == 0) return;
  const char* msg = nullptr;
  api().cuGetErrorString(r, &msg);
  throw std::runtime_error(std::string(who) + ": " + what + " failed: " + (msg ? msg : "unknown"));
}

std::mutex kernelsMutex;
// a program is compiled once per (device, source, defines); its kernels are looked up by name
std::map<std::tuple<int, const char*, std::string>, void*> modules;
std::map<std::pair<void*, std::string>, void*> kernels;

}  // namespace

int maxSharedBytes(int device) {
  int n = 0;
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return n;
}

void* kernel(int device, const char* source, const char* name, const std::vector<std::string>& defines,
             cudaStream_t stream, const char* who) {
  std::string joined;
  for (const auto& d : defines) joined += d + " ";
  std::lock_guard<std::mutex> lock(kernelsMutex);
  const auto moduleKey = std::make_tuple(device, source, joined);
  auto loaded = modules.find(moduleKey);
  if (loaded != modules.end()) {
    auto found = kernels.find({loaded->second, name});
    if (found != kernels.end()) return found->second;
  }
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (stream) C10_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  TORCH_CHECK(status == cudaStreamCaptureStatusNone, who, ": the kernel ", name, " (", joined,
              ") is not loaded yet and cannot be while a CUDA graph is captured; prepare it first");
  const Api& a = api();
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
  C10_CUDA_CHECK(cudaFree(nullptr));  // the device's primary context, current for the driver calls below
  void* module = loaded != modules.end() ? loaded->second : nullptr;
  if (!module) {
    int major = 0, minor = 0;
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    std::vector<std::string> options = {"--gpu-architecture=sm_" + std::to_string(major) + std::to_string(minor),
                                        "--std=c++17"};
    for (const auto& d : defines) options.push_back("-D" + d);
    std::vector<const char*> argv;
    for (const auto& o : options) argv.push_back(o.c_str());
    void* program = nullptr;
    Result r = a.nvrtcCreateProgram(&program, source, (std::string(name) + ".cu").c_str(), 0, nullptr, nullptr);
    if (r != 0) throw std::runtime_error(std::string(who) + ": NVRTC: " + a.nvrtcGetErrorString(r));
    r = a.nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
    if (r != 0) {
      size_t n = 0;
      a.nvrtcGetProgramLogSize(program, &n);
      std::string log(n, '\0');
      a.nvrtcGetProgramLog(program, log.data());
      a.nvrtcDestroyProgram(&program);
      throw std::runtime_error(std::string(who) + ": NVRTC could not compile " + name + " for " + options[0] + ": " +
                               log);
    }
    size_t size = 0;
    a.nvrtcGetCUBINSize(program, &size);
    std::string cubin(size, '\0');
    a.nvrtcGetCUBIN(program, cubin.data());
    a.nvrtcDestroyProgram(&program);
    check(a.cuModuleLoadData(&module, cubin.data()), who, "loading the kernels");
    modules.emplace(moduleKey, module);
  }
  void* function = nullptr;
  check(a.cuModuleGetFunction(&function, module, name), who, "finding the kernel");
  kernels.emplace(std::make_pair(module, std::string(name)), function);
  return function;
}

void allowMaxSharedBytes(void* function, int device, const char* who) {
  static std::mutex mutex;
  static std::set<void*> raised;
  std::lock_guard<std::mutex> lock(mutex);
  if (raised.count(function)) return;
  // a block's static shared memory counts against the same limit
  const int kSharedSizeBytes = 1;           // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
  const int kMaxDynamicSharedMemory = 8;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  int fixed = 0;
  check(api().cuFuncGetAttribute(&fixed, kSharedSizeBytes, function), who, "reading the kernel's shared memory");
  check(api().cuFuncSetAttribute(function, kMaxDynamicSharedMemory, maxSharedBytes(device) - fixed), who,
        "raising the kernel's shared memory");
  raised.insert(function);
}

namespace {
// bf16 as raw 16-bit words (NVRTC compiles without the CUDA headers): conversions with libtorch's
// rounding (round to nearest even, NaN kept), packed pairs, a warp sum, -inf.
const char* kBf16Helpers = R"CUDA(
typedef unsigned short bf16;

__device__ __forceinline__ float bf(bf16 x) { return __uint_as_float(((unsigned int)x) << 16); }

__device__ __forceinline__ bf16 toBf16(float f) {
  unsigned int u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (bf16)0x7fc0;  // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);                          // round to nearest even
  return (bf16)(u >> 16);
}

// f rounded to bf16 and back: what a libtorch op with a bf16 output hands the next op
__device__ __forceinline__ float round16(float f) { return bf(toBf16(f)); }

__device__ __forceinline__ float lo(unsigned int w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float hi(unsigned int w) { return __uint_as_float(w & 0xffff0000u); }
__device__ __forceinline__ unsigned int pack(float a, float b) {
  return (unsigned int)toBf16(a) | ((unsigned int)toBf16(b) << 16);
}

#define NEG_INF __int_as_float(0xff800000)

// Programmatic dependent launch (nvrtc.cc's launch, on devices of compute capability 9.0 and up):
// a kernel may start while the kernel before it in the stream still runs. depWait() returns once
// that kernel has ended and its writes are visible (and, as it waited in turn, all earlier work's);
// every kernel calls it before it reads memory an earlier kernel writes, and before its first
// write. Only what no kernel of the step writes (weights) may be read before it. depLaunchNext()
// lets the next kernel's blocks start once every block of this one has called it.
__device__ __forceinline__ void depWait() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void depLaunchNext() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
)CUDA";
}  // namespace

std::string withBf16Helpers(const char* kernels) { return std::string(kBf16Helpers) + kernels; }

namespace {
std::atomic<bool> dependentLaunches{true};

// whether every visible device takes programmatic dependent launches (compute capability 9.0 and
// up): a launch is not told its device, and mixed machines are rare enough to go without
bool devicesTakeDependentLaunches() {
  static const bool all = [] {
    const int n = c10::cuda::device_count();
    for (int d = 0; d < n; d++) {
      int major = 0;
      C10_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d));
      if (major < 9) return false;
    }
    return n > 0;
  }();
  return all;
}
}  // namespace

void setDependentLaunches(bool on) { dependentLaunches = on; }
bool dependentLaunchesOn() { return dependentLaunches; }

void launch(void* function, dim3 grid, dim3 block, unsigned sharedBytes, cudaStream_t stream, void** args,
            const char* who) {
  if (!dependentLaunches || !devicesTakeDependentLaunches()) {
    check(api().cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z, sharedBytes, stream, args,
                               nullptr),
          who, "launching the kernel");
    return;
  }
  LaunchAttribute attr{};
  attr.id = kProgrammaticStreamSerialization;
  attr.value.programmaticStreamSerializationAllowed = 1;
  LaunchConfig config{grid.x, grid.y, grid.z, block.x, block.y, block.z, sharedBytes, stream, &attr, 1};
  check(api().cuLaunchKernelEx(&config, function, args, nullptr), who, "launching the kernel");
}

int residentBlocksPerSm(void* function, int threads, size_t sharedBytes, const char* who) {
  static std::mutex mutex;
  static std::map<std::tuple<void*, int, size_t>, int> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(function, threads, sharedBytes);
  auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  int n = 0;
  check(api().cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, function, threads, sharedBytes), who,
        "asking the kernel's occupancy");
  return cache[key] = std::max(n, 1);
}

void encodeBf16Boxes(void* map, const void* base, int64_t rows, int64_t cols, unsigned boxRows, unsigned boxCols,
                     const char* who) {
  // cuda.h's values: CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, _INTERLEAVE_NONE, _SWIZZLE_NONE, _L2_PROMOTION_L2_256B,
  // _FLOAT_OOB_FILL_NONE (a box past the last row reads zeros)
  constexpr int kBf16 = 9, kNoInterleave = 0, kNoSwizzle = 0, kPromote256 = 3, kNoFill = 0;
  TORCH_CHECK(boxRows >= 1 && boxRows <= 256 && boxCols >= 8 && boxCols <= 256 && boxCols % 8 == 0 &&
                  cols % 8 == 0 && reinterpret_cast<uintptr_t>(base) % 16 == 0,
              who, ": a tensor map of ", rows, " x ", cols, " bf16 in boxes of ", boxRows, " x ", boxCols,
              " needs 1 to 256 rows and 8 to 256 columns (a multiple of 8) a box, rows of a multiple of 8 values and a "
              "base on 16 bytes");
  TORCH_CHECK(api().cuTensorMapEncodeTiled, who, ": this CUDA driver has no cuTensorMapEncodeTiled (CUDA 12 and up)");
  const uint64_t dims[2] = {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows)};
  const uint64_t strides[1] = {static_cast<uint64_t>(cols) * 2};
  const unsigned box[2] = {boxCols, boxRows}, steps[2] = {1, 1};
  check(api().cuTensorMapEncodeTiled(map, kBf16, 2, const_cast<void*>(base), dims, strides, box, steps, kNoInterleave,
                                     kNoSwizzle, kPromote256, kNoFill),
        who, "encoding a tensor map of a weight");
}

std::string tuningChoice(const char* name, std::initializer_list<const char*> allowed) {
  const char* e = std::getenv(name);
  if (!e || !*e) return "";
  bool known = false;
  std::string choices;
  size_t i = 0;
  for (const char* a : allowed) {
    known = known || std::string(a) == e;
    choices += std::string(i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + a;
    i++;
  }
  TORCH_CHECK(known, name, " must be ", choices, ", got '", e, "'; unset it for the default");
  return e;
}

int smCount(int device) {
  int n = 0;
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  return n;
}

}  // namespace nvrtc
}  // namespace agent_r1
#endif
