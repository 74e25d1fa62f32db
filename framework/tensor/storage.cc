#include "framework/tensor/storage.h"

#include "framework/core/check.h"
#include "framework/tensor/cpu_caching_allocator.h"

namespace xlmr {
namespace {

struct DeviceSlot {
  Allocator* allocator = nullptr;
  MemoryStats stats;
};

DeviceSlot& Slot(Device device) {
  // Never destroyed: tensors held by other static objects may be freed during exit.
  static CpuCachingAllocator* const cpu_allocator = new CpuCachingAllocator;
  static DeviceSlot slots[2] = {{cpu_allocator, {}}, {nullptr, {}}};
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
