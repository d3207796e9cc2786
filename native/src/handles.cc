#include "handles.h"

#include <c10/util/Type.h>

#include <string>
#include <vector>

namespace agent_r1 {
namespace {

// Live tensors sit in a slab owned here. A JS handle is an External with no
// finalizer (a weak callback per tensor would cost as much as a small op) whose
// pointer value is not a pointer but the slot id: (generation << 24) | slot.
// A stale or foreign handle fails the generation check instead of reaching a
// reused slot. Freeing is explicit (dispose, scopes); the TS side adds a
// FinalizationRegistry safety net only for tensors that outlive every scope.
constexpr uint64_t kSlotBits = 24;
constexpr uint64_t kSlotMask = (uint64_t{1} << kSlotBits) - 1;

struct Slot {
  at::Tensor tensor;
  uint32_t generation = 1;
  bool live = false;
};

// One slab per JS thread (the main thread and each worker_thread load this addon into their own
// environment, in one process): handles never cross threads (an External cannot be posted), so a
// thread-local slab needs no lock. Tensors move between threads through threads.cc.
thread_local std::vector<Slot> slots;
thread_local std::vector<uint32_t> freeSlots;
thread_local int64_t liveCount = 0;

Slot* slotOf(const Napi::Value& value) {
  if (!value.IsExternal()) return nullptr;
  auto id = reinterpret_cast<uintptr_t>(value.As<Napi::External<void>>().Data());
  uint64_t index = id & kSlotMask;
  uint64_t generation = id >> kSlotBits;
  if (index >= slots.size()) return nullptr;
  Slot& slot = slots[index];
  if (slot.generation != generation) return nullptr;
  return &slot;
}

}  // namespace

Napi::Value wrapTensor(Napi::Env env, at::Tensor tensor) {
  if (!tensor.defined()) return env.Null();
  uint32_t index;
  if (!freeSlots.empty()) {
    index = freeSlots.back();
    freeSlots.pop_back();
  } else {
    if (slots.size() > kSlotMask) throw Napi::Error::New(env, "too many live tensors (16M); dispose or use scopes");
    index = static_cast<uint32_t>(slots.size());
    slots.emplace_back();
  }
  Slot& slot = slots[index];
  slot.tensor = std::move(tensor);
  slot.live = true;
  ++liveCount;
  uintptr_t id = (static_cast<uintptr_t>(slot.generation) << kSlotBits) | index;
  return Napi::External<void>::New(env, reinterpret_cast<void*>(id));
}

bool isTensorHandle(Napi::Env env, const Napi::Value& value) {
  Slot* slot = slotOf(value);
  return slot != nullptr && slot->live;
}

at::Tensor& unwrapTensor(Napi::Env env, const Napi::Value& value, const char* what) {
  Slot* slot = slotOf(value);
  if (slot == nullptr || !slot->live) {
    if (value.IsExternal()) {
      Napi::Error error = Napi::Error::New(
          env, std::string("tensor passed as ") + what +
                   " was already disposed; keep it (torch.keep) or return it from its scope");
      error.Set("kind", Napi::String::New(env, "disposed"));
      throw error;
    }
    throw Napi::TypeError::New(env, std::string("expected a tensor for ") + what);
  }
  return slot->tensor;
}

const at::Tensor* unwrapOptionalTensor(Napi::Env env, const Napi::Value& value, const char* what) {
  return value.IsNull() || value.IsUndefined() ? nullptr : &unwrapTensor(env, value, what);
}

void disposeTensor(Napi::Env env, const Napi::Value& value) {
  Slot* slot = slotOf(value);
  if (slot == nullptr || !slot->live) return;
  slot->tensor = at::Tensor();
  slot->live = false;
  // A new generation makes every handle to the old tensor stale.
  slot->generation = (slot->generation + 1) & 0x1fffffff;
  if (slot->generation == 0) slot->generation = 1;
  freeSlots.push_back(static_cast<uint32_t>(slot - slots.data()));
  --liveCount;
}

int64_t liveTensorCount() { return liveCount; }

// The JS error carries the C++ exception's dynamic type ("c10::IndexError",
// "c10::OutOfMemoryError", "std::bad_alloc"...) as `exception`; src/torch/errors.ts
// turns it into a kind. The message never has to be parsed for what its type says.
void throwCurrentAsJs(Napi::Env env) {
  std::string message;
  std::string type = "unknown";
  try {
    throw;
  } catch (const std::exception& e) {
    type = c10::demangle(typeid(e).name());
    const auto* torchError = dynamic_cast<const c10::Error*>(&e);
    message = torchError ? torchError->what_without_backtrace() : e.what();
  } catch (...) {
    message = "unknown native exception";
  }
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("exception", Napi::String::New(env, type));
  throw error;
}

}  // namespace agent_r1
