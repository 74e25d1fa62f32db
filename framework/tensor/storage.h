// A block of device memory owned by one or more Tensors (views share it).
//
// Allocation goes through a per-device Allocator so that every byte is counted in that
// device's MemoryStats under a category. The CPU allocator keeps freed blocks for reuse
// (framework/tensor/cpu_caching_allocator.h); the CUDA one is
// registered by the CUDA backend (kernels/cuda) so that this file needs no CUDA headers.
#ifndef XLMR_FRAMEWORK_TENSOR_STORAGE_H_
#define XLMR_FRAMEWORK_TENSOR_STORAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "framework/core/device.h"
#include "framework/tensor/memory_stats.h"

namespace xlmr {

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns memory aligned to at least 256 bytes; never null (out of memory is fatal).
  virtual void* Allocate(size_t bytes) = 0;
  virtual void Free(void* pointer) = 0;
  // Fills `bytes` bytes at `pointer` with zeros (device memory is not host-writable).
  virtual void Zero(void* pointer, size_t bytes) = 0;
  // Called on memory handed out uninitialised (Storage::AllocateUninitialized). Nothing by
  // default; a backend may fill it with a poison pattern so that tests catch kernels that read
  // elements they never wrote.
  virtual void MarkUninitialized(void* /*pointer*/, size_t /*bytes*/) {}
  // For allocators that keep freed memory (a pool), the most memory the pool held at once since
  // the last ResetPeakReserved: tensors plus cached free blocks, what the device actually gave
  // up. -1 when the allocator keeps nothing (every byte it holds is in a tensor).
  virtual int64_t PeakReservedBytes() const { return -1; }
  virtual void ResetPeakReserved() {}
};

// The allocator and the accounting of one device. Registered once per process.
Allocator& AllocatorFor(Device device);
MemoryStats& MemoryStatsFor(Device device);
void RegisterAllocator(Device device, Allocator* allocator);

class Storage {
 public:
  // Allocates `bytes` (zero-filled) on `device`, counted under `category`.
  static std::shared_ptr<Storage> Allocate(Device device, size_t bytes, MemoryCategory category);
  // As Allocate, and counted the same way, but the bytes are not filled: their contents are
  // unspecified (on the GPU, whatever the memory pool's previous user left there). Only for
  // memory the caller overwrites completely before anything reads it; see Tensor::Empty.
  static std::shared_ptr<Storage> AllocateUninitialized(Device device, size_t bytes,
                                                        MemoryCategory category);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }
  MemoryCategory category() const { return category_; }

 private:
  Storage(Device device, void* data, size_t bytes, MemoryCategory category)
      : device_(device), data_(data), bytes_(bytes), category_(category) {}
  Device device_;
  void* data_;
  size_t bytes_;
  MemoryCategory category_;
};

}  // namespace xlmr

#endif  // XLMR_FRAMEWORK_TENSOR_STORAGE_H_
