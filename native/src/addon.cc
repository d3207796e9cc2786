// The agent-r1 native addon: a thin N-API binding over libtorch. The TypeScript
// face (src/torch/) is the public API; this module's exports are internal.
#include <torch/version.h>

#include "handles.h"

namespace agent_r1 {
void registerDispatch(Napi::Env env, Napi::Object exports);
void registerTensorIO(Napi::Env env, Napi::Object exports);
void registerAutograd(Napi::Env env, Napi::Object exports);
void registerDevice(Napi::Env env, Napi::Object exports);
void registerCudaGraph(Napi::Env env, Napi::Object exports);
void registerPagedAttention(Napi::Env env, Napi::Object exports);
void registerFusedDecode(Napi::Env env, Napi::Object exports);
void registerDecodeTrunk(Napi::Env env, Napi::Object exports);
void registerThreads(Napi::Env env, Napi::Object exports);
void registerDistributed(Napi::Env env, Napi::Object exports);
void registerProfiler(Napi::Env env, Napi::Object exports);
}  // namespace agent_r1

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  agent_r1::registerDispatch(env, exports);
  agent_r1::registerTensorIO(env, exports);
  agent_r1::registerAutograd(env, exports);
  agent_r1::registerDevice(env, exports);
  agent_r1::registerCudaGraph(env, exports);
  agent_r1::registerPagedAttention(env, exports);
  agent_r1::registerFusedDecode(env, exports);
  agent_r1::registerDecodeTrunk(env, exports);
  agent_r1::registerThreads(env, exports);
  agent_r1::registerDistributed(env, exports);
  agent_r1::registerProfiler(env, exports);
  exports.Set("torchVersion", Napi::String::New(env, TORCH_VERSION));
#ifdef AGENT_R1_CUDA
  exports.Set("builtWithCuda", Napi::Boolean::New(env, true));
#else
  exports.Set("builtWithCuda", Napi::Boolean::New(env, false));
#endif
  return exports;
}

NODE_API_MODULE(agent_r1_native, Init)
