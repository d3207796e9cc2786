// Kernels compiled at run time by NVRTC and launched through the CUDA driver API (nvrtc.cc says
// why): the engine's own decode kernels (paged_attention.cc, fused_decode.cc) are CUDA C sources
// held as strings, compiled once per (device, kernel, defines) for the device they run on.
#pragma once
#ifdef AGENT_R1_CUDA
#include <cuda_runtime_api.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace agent_r1 {
namespace nvrtc {

// The kernel `name` of `source` compiled with these -D defines for `device`, loaded (cached: a
// source, which must be a string that lives as long as the process, is compiled once per device
// and defines, and the same arguments give the same function). `stream`: the stream of the launch that needs it, or
// null when preparing ahead: a kernel not loaded yet cannot be while that stream is captured into
// a CUDA graph, so the caller is told to prepare it first. `who` names the caller in errors.
void* kernel(int device, const char* source, const char* name, const std::vector<std::string>& defines,
             cudaStream_t stream, const char* who);

// Launches on `stream` (so the launch can be captured in a CUDA graph), as a programmatic
// dependent launch where the device takes them (compute capability 9.0 and up) and they are on
// (setDependentLaunches): the kernel may start before the one ahead of it ends, so every kernel
// launched here calls depWait() (withBf16Helpers) before it touches memory other kernels write.
void launch(void* function, dim3 grid, dim3 block, unsigned sharedBytes, cudaStream_t stream, void** args,
            const char* who);

// Programmatic dependent launches on (the default) or off, for every later launch: off launches
// each kernel after the one before it has ended (bench/engine-decode.ts --dependent-launch off
// measures what they save).
void setDependentLaunches(bool on);
bool dependentLaunchesOn();

// How many blocks of `threads` threads and `sharedBytes` of dynamic shared memory one SM holds at
// once for `function` (at least 1; cached), and the device's SM count.
int residentBlocksPerSm(void* function, int threads, size_t sharedBytes, const char* who);
int smCount(int device);

// The value of environment variable `name`, one of `allowed` (a kernel's tuning choice, fixed for
// a bench's comparisons), or "" when it is unset; any other value throws, naming the choices.
std::string tuningChoice(const char* name, std::initializer_list<const char*> allowed);

// Lets `function` use as much dynamic shared memory as `device` allows a block (above the default
// 48 KiB); once per function, later calls return at once.
void allowMaxSharedBytes(void* function, int device, const char* who);

// `kernels` after the device helpers every engine kernel source shares (nvrtc.cc): bf16 as raw
// 16-bit words with libtorch's rounding, packed pairs, a warp sum, NEG_INF, depWait and
// depLaunchNext. Keep the result in a static: `kernel` keys its cache on the source's address.
std::string withBf16Helpers(const char* kernels);

// A 2-d tensor map (cuda.h's CUtensorMap, 128 bytes at `map`) of the bf16 matrix [rows, cols] at
// base, in boxes of boxRows x boxCols, for the copy engine's tensor copies (cp.async.bulk.tensor).
void encodeBf16Boxes(void* map, const void* base, int64_t rows, int64_t cols, unsigned boxRows, unsigned boxCols,
                     const char* who);

// The most shared memory one block may opt in to on `device`.
int maxSharedBytes(int device);

}  // namespace nvrtc
}  // namespace agent_r1
#endif
