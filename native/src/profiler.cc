// libtorch's profiler (Kineto): the ops run on the calling thread and, with CUDA, every kernel the
// device runs (CUPTI), those of replayed CUDA graphs one by one, each with its start and duration.
// What the engine's decode step spends between its kernels shows here, where Nsight Compute times
// kernels one at a time and the device machines carry no Nsight Systems.
#include <set>
#include <string>

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/cuda.h>

#include "handles.h"

namespace agent_r1 {
namespace {

namespace kineto = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

bool profiling = false;

// profilerStart(cuda): ops on this thread, and with `cuda` the device's kernels, from now on
Napi::Value ProfilerStart(const Napi::CallbackInfo& info) {
  const bool cuda = info[0].As<Napi::Boolean>().Value();
  TORCH_CHECK(!profiling, "profiler: already running; stop it (profilerStop) before starting it again");
  TORCH_CHECK(!cuda || torch::cuda::is_available(),
              "profiler: CUDA kernels asked for, but no CUDA device is visible to this addon");
  std::set<ActivityType> activities{ActivityType::CPU};
  if (cuda) activities.insert(ActivityType::CUDA);
  const ProfilerConfig config(ProfilerState::KINETO);
  kineto::prepareProfiler(config, activities);
  kineto::enableProfiler(config, activities);
  profiling = true;
  return info.Env().Undefined();
}

// profilerStop(tracePath | null) -> [{ name, device: 'cpu' | 'cuda', startNs, durationNs }], times
// from the trace's start; with a path, also the Chrome trace (chrome://tracing, Perfetto) there
Napi::Value ProfilerStop(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  TORCH_CHECK(profiling, "profiler: not running; start it (profilerStart) first");
  profiling = false;
  std::unique_ptr<kineto::ProfilerResult> result = kineto::disableProfiler();
  if (info[0].IsString()) result->save(info[0].As<Napi::String>().Utf8Value());
  const uint64_t origin = result->trace_start_ns();
  const auto& events = result->events();
  Napi::Array out = Napi::Array::New(env, events.size());
  uint32_t i = 0;
  for (const auto& e : events) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", e.name());
    o.Set("device", e.deviceType() == c10::DeviceType::CUDA ? "cuda" : "cpu");
    o.Set("startNs", static_cast<double>(e.startNs()) - static_cast<double>(origin));
    o.Set("durationNs", static_cast<double>(e.durationNs()));
    out.Set(i++, o);
  }
  return out;
}

}  // namespace

void registerProfiler(Napi::Env env, Napi::Object exports) {
  exportFunction<ProfilerStart>(env, exports, "profilerStart");
  exportFunction<ProfilerStop>(env, exports, "profilerStop");
}

}  // namespace agent_r1
