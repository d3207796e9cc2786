// Devices, RNG seeds, threads, and device memory statistics. Uses libtorch's
// device-generic allocator interface, so one source builds with and without CUDA.
#include <functional>
#include <memory>

#include <ATen/Parallel.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Event.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/cuda.h>

#include "handles.h"

namespace agent_r1 {
namespace {

// Runs a blocking wait for the device off the main thread and settles a promise when it returns,
// so the event loop keeps serving I/O meanwhile: a whole-device synchronize, or an event recorded
// on a stream (the engine waits for one decode step that way while the next one already runs).
class DeviceWaitWorker : public Napi::AsyncWorker {
 public:
  DeviceWaitWorker(Napi::Env env, std::function<void()> wait)
      : Napi::AsyncWorker(env), wait_(std::move(wait)), deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise Promise() { return deferred_.Promise(); }
  void Execute() override {
    try {
      wait_();
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override { deferred_.Resolve(Env().Undefined()); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  std::function<void()> wait_;
  Napi::Promise::Deferred deferred_;
};

Napi::Value waitOffThread(Napi::Env env, std::function<void()> wait) {
  auto* worker = new DeviceWaitWorker(env, std::move(wait));
  worker->Queue();
  return worker->Promise();
}

Napi::Value CudaIsAvailable(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), torch::cuda::is_available());
}

Napi::Value CudaDeviceCount(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(torch::cuda::device_count()));
}

Napi::Value CudaSynchronize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int device = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().Int32Value() : -1;
  torch::cuda::synchronize(device);
  return env.Undefined();
}

// Waits for the device off the main thread, so the event loop keeps serving I/O.
Napi::Value CudaSynchronizeAsync(const Napi::CallbackInfo& info) {
  int device = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().Int32Value() : -1;
  return waitOffThread(info.Env(), [device] { torch::cuda::synchronize(device); });
}

// cudaFenceAsync(device) -> Promise: records an event on the device's current stream now and
// resolves once the device has reached it.
Napi::Value CudaFenceAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!torch::cuda::is_available()) throw Napi::Error::New(env, "cudaFenceAsync: CUDA is not available in this process");
  auto index = static_cast<c10::DeviceIndex>(info[0].As<Napi::Number>().Int32Value());
  c10::Device device(c10::DeviceType::CUDA, index);
  // shared: the wait's std::function must be copyable, and c10::Event is move-only
  auto event = std::make_shared<c10::Event>(c10::DeviceType::CUDA);
  try {
    event->record(c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(device));
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, std::string("cudaFenceAsync: ") + e.what());
  }
  return waitOffThread(env, [event] { event->synchronize(); });
}

c10::DeviceAllocator* cudaAllocator(Napi::Env env) {
  if (!torch::cuda::is_available()) throw Napi::Error::New(env, "CUDA is not available in this process");
  return c10::getDeviceAllocator(c10::DeviceType::CUDA);
}

// cudaMemoryStats(device) -> { allocated, reserved, peakAllocated, peakReserved } in bytes
Napi::Value CudaMemoryStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto device = static_cast<c10::DeviceIndex>(info[0].As<Napi::Number>().Int32Value());
  auto stats = cudaAllocator(env)->getDeviceStats(device);
  constexpr size_t all = static_cast<size_t>(c10::CachingDeviceAllocator::StatType::AGGREGATE);
  auto out = Napi::Object::New(env);
  out.Set("allocated", static_cast<double>(stats.allocated_bytes[all].current));
  out.Set("reserved", static_cast<double>(stats.reserved_bytes[all].current));
  out.Set("peakAllocated", static_cast<double>(stats.allocated_bytes[all].peak));
  out.Set("peakReserved", static_cast<double>(stats.reserved_bytes[all].peak));
  return out;
}

// cudaMemoryInfo(device) -> { free, total } in bytes: the device's memory as the driver reports it
// (cudaMemGetInfo), so an engine can size its cache as a fraction of the whole device.
Napi::Value CudaMemoryInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto device = static_cast<c10::DeviceIndex>(info[0].As<Napi::Number>().Int32Value());
  auto [free, total] = cudaAllocator(env)->getMemoryInfo(device);
  auto out = Napi::Object::New(env);
  out.Set("free", static_cast<double>(free));
  out.Set("total", static_cast<double>(total));
  return out;
}

Napi::Value CudaResetPeak(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  cudaAllocator(env)->resetPeakStats(static_cast<c10::DeviceIndex>(info[0].As<Napi::Number>().Int32Value()));
  return env.Undefined();
}

Napi::Value CudaEmptyCache(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  cudaAllocator(env)->emptyCache();
  return env.Undefined();
}

Napi::Value ManualSeed(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  torch::manual_seed(static_cast<uint64_t>(info[0].As<Napi::Number>().Int64Value()));
  if (torch::cuda::is_available()) torch::cuda::manual_seed_all(static_cast<uint64_t>(info[0].As<Napi::Number>().Int64Value()));
  return env.Undefined();
}

Napi::Value SetNumThreads(const Napi::CallbackInfo& info) {
  at::set_num_threads(info[0].As<Napi::Number>().Int32Value());
  return info.Env().Undefined();
}

Napi::Value GetNumThreads(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), at::get_num_threads());
}

}  // namespace

void registerDevice(Napi::Env env, Napi::Object exports) {
  exportFunction<CudaIsAvailable>(env, exports, "cudaIsAvailable");
  exportFunction<CudaDeviceCount>(env, exports, "cudaDeviceCount");
  exportFunction<CudaSynchronize>(env, exports, "cudaSynchronize");
  exportFunction<CudaSynchronizeAsync>(env, exports, "cudaSynchronizeAsync");
  exportFunction<CudaFenceAsync>(env, exports, "cudaFenceAsync");
  exportFunction<CudaMemoryStats>(env, exports, "cudaMemoryStats");
  exportFunction<CudaMemoryInfo>(env, exports, "cudaMemoryInfo");
  exportFunction<CudaResetPeak>(env, exports, "cudaResetPeak");
  exportFunction<CudaEmptyCache>(env, exports, "cudaEmptyCache");
  exportFunction<ManualSeed>(env, exports, "manualSeed");
  exportFunction<SetNumThreads>(env, exports, "setNumThreads");
  exportFunction<GetNumThreads>(env, exports, "getNumThreads");
}

}  // namespace agent_r1
