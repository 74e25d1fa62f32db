#include "framework/tensor/storage.h"

#include <cstdlib>
#include <cstring>

#include "framework/core/check.h"

namespace xlmr {
namespace {

class CpuAllocator final : public Allocator {
 public:
  void* Allocate(size_t bytes) override {
    // aligned_alloc needs a size that is a multiple of the alignment.
    const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    void* pointer = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
    XLMR_CHECK(pointer != nullptr) << "out of host memory allocating " << bytes << " bytes";
    return pointer;
  }
  void Free(void* pointer) override { std::free(pointer); }
  void Zero(void* pointer, size_t bytes) override { std::memset(pointer, 0, bytes); }

 private:
  static constexpr size_t kAlignment = 256;
};

struct DeviceSlot {
  Allocator* allocator = nullptr;
  MemoryStats stats;
};

DeviceSlot& Slot(Device device) {
  static CpuAllocator cpu_allocator;
  static DeviceSlot slots[2] = {{&cpu_allocator, {}}, {nullptr, {}}};
  return slots[static_cast<int>(device)];
}

}  // namespace

Allocator& AllocatorFor(Device device) {
  Allocator* allocator = Slot(device).allocator;
  XLMR_CHECK(allocator != nullptr) << "no allocator registered for device " << DeviceName(device);
  return *allocator;
}

MemoryStats& MemoryStatsFor(Device device) { return Slot(device).stats; }

void RegisterAllocator(Device device, Allocator* allocator) { Slot(device).allocator = allocator; }

std::shared_ptr<Storage> Storage::Allocate(Device device, size_t bytes, MemoryCategory category) {
  std::shared_ptr<Storage> storage = AllocateUninitialized(device, bytes, category);
  AllocatorFor(device).Zero(storage->data(), bytes);
  return storage;
}

std::shared_ptr<Storage> Storage::AllocateUninitialized(Device device, size_t bytes,
                                                        MemoryCategory category) {
  Allocator& allocator = AllocatorFor(device);
  void* data = allocator.Allocate(bytes);
  allocator.MarkUninitialized(data, bytes);
  MemoryStatsFor(device).Allocated(category, static_cast<int64_t>(bytes));
  return std::shared_ptr<Storage>(new Storage(device, data, bytes, category));
}

Storage::~Storage() {
  MemoryStatsFor(device_).Released(category_, static_cast<int64_t>(bytes_));
  AllocatorFor(device_).Free(data_);
}

}  // namespace xlmr
