// The CPU's allocator: a size-bucketed cache of freed blocks in front of aligned_alloc, so that
// a training step, which frees and re-allocates the same activation and gradient sizes every
// step, gets memory whose pages are already mapped instead of fresh pages from the kernel
// (each first touch of a fresh page is a page fault: ~10 ms of a 65 ms step on the embedded
// default before this cache).
//
// Contract:
//  - Allocate(bytes) returns a block of at least BucketBytes(bytes) bytes, 256-byte aligned.
//    Requests are rounded up to a bucket: multiples of 256 bytes up to 4 KiB, above that eight
//    buckets per power of two (at most 12.5% rounding), so that the slightly different sizes
//    of batches padded to different lengths share blocks.
//  - A request is served from a cached block of its own bucket or of a bucket at most
//    kMaxReuseRatio larger (the smallest that fits), else from the system: blocks of 64 KiB
//    and more are mapped from the kernel (mmap), smaller ones come from aligned_alloc.
//  - Free caches the block. When a request must come from the system and the memory held (live
//    plus cached blocks) would exceed the high-water mark of live blocks so far (times
//    kHeldLimitRatio), the least recently freed cached blocks go back to the system first. So
//    the cache never makes the process hold much more than it needed at its busiest moment
//    (PeakReservedBytes, the metrics' peak_reserved_bytes, reports what it held).
//  - Tensor accounting (MemoryStats) is unchanged: Storage counts the bytes a tensor asked for,
//    not the bucket; the allocator reports its own held/cached bytes.
//  - Thread safe (one mutex): tensors may be created on several threads.
#ifndef XLMR_FRAMEWORK_TENSOR_CPU_CACHING_ALLOCATOR_H_
#define XLMR_FRAMEWORK_TENSOR_CPU_CACHING_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "framework/tensor/storage.h"

namespace xlmr {

class CpuCachingAllocator final : public Allocator {
 public:
  static constexpr size_t kAlignment = 256;
  // A cached block may serve a request whose bucket is up to this much smaller. Batches padded
  // to different lengths ask for sizes that differ by up to ~4x, and held memory is bounded
  // anyway (kHeldLimitRatio); on the embedded default's training (2 threads), 1.25 left ~3400
  // page faults per step, 2 left ~540, 4 ~160 (malloc: 1600-3300), peak RSS within 3%.
  static constexpr double kMaxReuseRatio = 4.0;
  // Held memory (live + cached) is kept within this multiple of the live high-water mark: the
  // cache never holds more than the process already needed at its busiest (1.1 cut page
  // faults from ~160 to ~120 per step for ~5% more peak RSS).
  static constexpr double kHeldLimitRatio = 1.0;

  // The size of the block that serves a request of `bytes` (>= 256).
  static size_t BucketBytes(size_t bytes);

  CpuCachingAllocator() = default;
  ~CpuCachingAllocator() override;  // returns cached blocks; live blocks must be freed first
  CpuCachingAllocator(const CpuCachingAllocator&) = delete;
  CpuCachingAllocator& operator=(const CpuCachingAllocator&) = delete;

  void* Allocate(size_t bytes) override;
  void Free(void* pointer) override;
  void Zero(void* pointer, size_t bytes) override;
  // In builds without NDEBUG (the tests), fills memory handed out uninitialised
  // (Tensor::Empty) with 0xFF bytes, a NaN in every float type, so that a kernel that leaves an
  // element unwritten fails its comparison, as the GPU tests do; a reused block would otherwise
  // hide it behind stale values. Nothing in optimised builds.
  void MarkUninitialized(void* pointer, size_t bytes) override;
  int64_t PeakReservedBytes() const override;
  void ResetPeakReserved() override;

  // Returns every cached block to the system.
  void ReleaseCached();

  struct Counters {
    int64_t live_bytes = 0;      // in blocks handed out (bucket sizes)
    int64_t cached_bytes = 0;    // in freed blocks kept for reuse
    int64_t peak_live_bytes = 0;
    int64_t system_allocations = 0;  // blocks obtained from the system so far
    int64_t reuses = 0;              // requests served from the cache so far
  };
  Counters counters() const;

 private:
  struct CachedBlock {
    void* pointer;
    size_t bytes;
  };
  using LruPosition = std::list<CachedBlock>::iterator;

  // Removes a cached block from both indexes (the caller frees or hands it out).
  void Uncache(LruPosition position);
  // Returns least recently freed blocks to the system until `bytes` more fit under the limit.
  void EvictFor(size_t bytes);

  mutable std::mutex mutex_;
  std::list<CachedBlock> lru_;                    // cached blocks, most recently freed first
  std::map<size_t, std::vector<LruPosition>> cached_;  // bucket bytes -> its cached blocks
  std::unordered_map<void*, size_t> live_;        // block -> its bucket bytes
  Counters counters_;
  int64_t peak_held_bytes_ = 0;  // live + cached, since ResetPeakReserved
};

}  // namespace xlmr

#endif  // XLMR_FRAMEWORK_TENSOR_CPU_CACHING_ALLOCATOR_H_
