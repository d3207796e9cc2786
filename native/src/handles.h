// Tensor handles and error translation shared by every entry point.
#pragma once
#include <napi.h>
#include <torch/torch.h>

namespace agent_r1 {

// A tensor handle is a JS External naming a slot of the native tensor slab
// (handles.cc says why). `dispose` drops the tensor reference at once.
Napi::Value wrapTensor(Napi::Env env, at::Tensor tensor);
bool isTensorHandle(Napi::Env env, const Napi::Value& value);
// Throws a JS TypeError naming `what` when `value` is not a live tensor handle. The reference (and
// unwrapOptionalTensor's pointer) points into this thread's slab, which wrapTensor may grow: use
// it before wrapping any result, or copy the at::Tensor.
at::Tensor& unwrapTensor(Napi::Env env, const Napi::Value& value, const char* what);
// An optional tensor argument: null when `value` is null or undefined, else as unwrapTensor.
const at::Tensor* unwrapOptionalTensor(Napi::Env env, const Napi::Value& value, const char* what);
void disposeTensor(Napi::Env env, const Napi::Value& value);
int64_t liveTensorCount();

// Call inside `catch (...)`: rethrows the in-flight C++ exception as a JS Error
// carrying libtorch's message (without the C++ backtrace) and, as `exception`, the
// exception's C++ type (src/torch/errors.ts turns it into a kind).
[[noreturn]] void throwCurrentAsJs(Napi::Env env);

// Every export goes through `guarded`: whatever a C++ callee throws (a c10::Error
// from a TORCH_CHECK, std::bad_alloc...) becomes a JS Error; node-addon-api itself
// only translates Napi::Error, and anything else would terminate the process.
template <Napi::Value (*F)(const Napi::CallbackInfo&)>
Napi::Value guarded(const Napi::CallbackInfo& info) {
  try {
    return F(info);
  } catch (const Napi::Error&) {
    throw;
  } catch (...) {
    throwCurrentAsJs(info.Env());
  }
}

template <Napi::Value (*F)(const Napi::CallbackInfo&)>
void exportFunction(Napi::Env env, Napi::Object exports, const char* name) {
  exports.Set(name, Napi::Function::New(env, guarded<F>, name));
}

}  // namespace agent_r1
