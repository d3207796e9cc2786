// Tensors in and out of JavaScript memory, and what a tensor is (dtype, device, shape).
#include <cstdint>
#include <cstring>
#include <sstream>

#include "handles.h"

namespace agent_r1 {
namespace {

// fromBytes(bytes: Uint8Array, dtype: number, shape: number[]) -> tensor on the CPU.
// Copies, so the JS buffer may be reused at once; bytes are little-endian as in safetensors.
Napi::Value FromBytes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsTypedArray()) throw Napi::TypeError::New(env, "fromBytes expects a Uint8Array");
  auto bytes = info[0].As<Napi::TypedArray>();
  auto dtype = static_cast<at::ScalarType>(info[1].As<Napi::Number>().Int32Value());
  auto shapeArray = info[2].As<Napi::Array>();
  std::vector<int64_t> shape(shapeArray.Length());
  for (uint32_t i = 0; i < shapeArray.Length(); ++i) shape[i] = shapeArray.Get(i).As<Napi::Number>().Int64Value();
  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(dtype));
  size_t expected = t.numel() * t.element_size();
  if (bytes.ByteLength() != expected) {
    throw Napi::RangeError::New(env, "fromBytes: " + std::to_string(bytes.ByteLength()) + " bytes given, shape " +
                                         c10::str(t.sizes()) + " of " + c10::toString(dtype) + " needs " +
                                         std::to_string(expected));
  }
  auto* base = static_cast<uint8_t*>(bytes.ArrayBuffer().Data()) + bytes.ByteOffset();
  if (expected > 0) std::memcpy(t.data_ptr(), base, expected);
  return wrapTensor(env, std::move(t));
}

// toBytes(tensor) -> ArrayBuffer holding a contiguous CPU copy of the data.
Napi::Value ToBytes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  at::Tensor t = unwrapTensor(env, info[0], "toBytes").detach().to(at::kCPU).contiguous();
  size_t n = t.numel() * t.element_size();
  auto buffer = Napi::ArrayBuffer::New(env, n);
  if (n > 0) std::memcpy(buffer.Data(), t.data_ptr(), n);
  return buffer;
}

// meta(tensor) -> [scalarType, deviceType, deviceIndex, requiresGrad, ...sizes]
Napi::Value Meta(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const at::Tensor& t = unwrapTensor(env, info[0], "meta");
  auto sizes = t.sizes();
  auto out = Napi::Array::New(env, 4 + sizes.size());
  out.Set(0u, Napi::Number::New(env, static_cast<int>(t.scalar_type())));
  out.Set(1u, Napi::Number::New(env, static_cast<int>(t.device().type())));
  out.Set(2u, Napi::Number::New(env, t.device().index()));
  out.Set(3u, Napi::Number::New(env, t.requires_grad() ? 1 : 0));
  for (size_t i = 0; i < sizes.size(); ++i) out.Set(4 + i, Napi::Number::New(env, static_cast<double>(sizes[i])));
  return out;
}

// item(tensor) -> number (or boolean for a bool tensor). Synchronises with the device.
Napi::Value Item(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const at::Tensor& t = unwrapTensor(env, info[0], "item");
  c10::Scalar s = t.item();
  if (s.isBoolean()) return Napi::Boolean::New(env, s.toBool());
  if (s.isIntegral(false)) return Napi::Number::New(env, static_cast<double>(s.toLong()));
  return Napi::Number::New(env, s.toDouble());
}

Napi::Value ToString(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::ostringstream s;
  s << unwrapTensor(env, info[0], "toString");
  return Napi::String::New(env, s.str());
}

Napi::Value Dispose(const Napi::CallbackInfo& info) {
  disposeTensor(info.Env(), info[0]);
  return info.Env().Undefined();
}

// disposeMany(handles[]): a scope frees what it made in one call.
Napi::Value DisposeMany(const Napi::CallbackInfo& info) {
  auto a = info[0].As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); ++i) disposeTensor(info.Env(), a.Get(i));
  return info.Env().Undefined();
}

Napi::Value LiveTensors(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(liveTensorCount()));
}

Napi::Value IsTensor(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), isTensorHandle(info.Env(), info[0]));
}

// sameStorage(a, b): whether two handles view the same memory (in-place op results).
Napi::Value SameTensor(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const at::Tensor& a = unwrapTensor(env, info[0], "a");
  const at::Tensor& b = unwrapTensor(env, info[1], "b");
  return Napi::Boolean::New(env, a.unsafeGetTensorImpl() == b.unsafeGetTensorImpl());
}

// dataPtr(tensor) -> the address of its first element, as a number (exact: addresses are below 2^53).
Napi::Value DataPtr(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const at::Tensor& t = unwrapTensor(env, info[0], "dataPtr");
  return Napi::Number::New(env, static_cast<double>(reinterpret_cast<uintptr_t>(t.data_ptr())));
}

}  // namespace

void registerTensorIO(Napi::Env env, Napi::Object exports) {
  exportFunction<FromBytes>(env, exports, "fromBytes");
  exportFunction<ToBytes>(env, exports, "toBytes");
  exportFunction<Meta>(env, exports, "meta");
  exportFunction<Item>(env, exports, "item");
  exportFunction<ToString>(env, exports, "toString");
  exportFunction<Dispose>(env, exports, "dispose");
  exportFunction<DisposeMany>(env, exports, "disposeMany");
  exportFunction<LiveTensors>(env, exports, "liveTensors");
  exportFunction<IsTensor>(env, exports, "isTensor");
  exportFunction<SameTensor>(env, exports, "sameTensor");
  exportFunction<DataPtr>(env, exports, "dataPtr");
}

}  // namespace agent_r1
