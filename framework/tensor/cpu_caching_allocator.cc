#include "framework/tensor/cpu_caching_allocator.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include <sys/mman.h>

#include "framework/core/check.h"

namespace xlmr {
namespace {

constexpr size_t kSmallLimit = 4096;  // buckets of 256 bytes up to here
constexpr int kBucketsPerOctave = 8;

// Blocks from this size on are mapped from the kernel directly (their buckets are whole pages):
// an evicted block is then unmapped at once. Through malloc it would stay in malloc's heap,
// resident, next to the blocks the cache keeps (RSS grew by a third that way).
constexpr size_t kMapLimit = size_t{64} << 10;

void* SystemAllocate(size_t bytes) {
  if (bytes >= kMapLimit) {
    void* pointer = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return pointer == MAP_FAILED ? nullptr : pointer;
  }
  return std::aligned_alloc(CpuCachingAllocator::kAlignment, bytes);  // bytes: a multiple of it
}

void SystemFree(void* pointer, size_t bytes) {
  if (bytes >= kMapLimit) {
    XLMR_CHECK(munmap(pointer, bytes) == 0) << "munmap of " << bytes << " bytes failed";
  } else {
    std::free(pointer);
  }
}

}  // namespace

size_t CpuCachingAllocator::BucketBytes(size_t bytes) {
  if (bytes <= kSmallLimit) return std::max<size_t>(1, (bytes + kAlignment - 1) / kAlignment) * kAlignment;
  // step = 2^(floor(log2(bytes)) - 3): eight steps per power of two.
  int log2 = 63 - __builtin_clzll(static_cast<unsigned long long>(bytes));
  const size_t step = size_t{1} << (log2 - 3);
  static_assert(kBucketsPerOctave == 8, "the shift above assumes eight buckets per octave");
  return (bytes + step - 1) / step * step;
}

CpuCachingAllocator::~CpuCachingAllocator() { ReleaseCached(); }

void CpuCachingAllocator::Uncache(LruPosition position) {
  const auto bucket = cached_.find(position->bytes);
  std::vector<LruPosition>& blocks = bucket->second;
  blocks.erase(std::find(blocks.begin(), blocks.end(), position));
  if (blocks.empty()) cached_.erase(bucket);
  counters_.cached_bytes -= static_cast<int64_t>(position->bytes);
  lru_.erase(position);
}

void CpuCachingAllocator::EvictFor(size_t bytes) {
  const double limit = kHeldLimitRatio * static_cast<double>(counters_.peak_live_bytes);
  while (!lru_.empty() && static_cast<double>(counters_.live_bytes + counters_.cached_bytes +
                                              static_cast<int64_t>(bytes)) > limit) {
    const CachedBlock evicted = lru_.back();
    Uncache(std::prev(lru_.end()));
    SystemFree(evicted.pointer, evicted.bytes);
  }
}

void* CpuCachingAllocator::Allocate(size_t bytes) {
  const size_t bucket = BucketBytes(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  void* pointer = nullptr;
  size_t block = bucket;
  const auto fit = cached_.lower_bound(bucket);
  if (fit != cached_.end() && static_cast<double>(fit->first) <= kMaxReuseRatio * bucket) {
    block = fit->first;
    const LruPosition position = fit->second.back();  // the most recently freed of its bucket
    pointer = position->pointer;
    Uncache(position);
    ++counters_.reuses;
  } else {
    EvictFor(bucket);
    pointer = SystemAllocate(bucket);
    XLMR_CHECK(pointer != nullptr) << "out of host memory allocating " << bytes << " bytes";
    ++counters_.system_allocations;
  }
  live_.emplace(pointer, block);
  counters_.live_bytes += static_cast<int64_t>(block);
  counters_.peak_live_bytes = std::max(counters_.peak_live_bytes, counters_.live_bytes);
  peak_held_bytes_ =
      std::max(peak_held_bytes_, counters_.live_bytes + counters_.cached_bytes);
  return pointer;
}

void CpuCachingAllocator::Free(void* pointer) {
  if (pointer == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = live_.find(pointer);
  XLMR_CHECK(it != live_.end()) << "freeing a block this allocator did not hand out";
  const size_t block = it->second;
  live_.erase(it);
  counters_.live_bytes -= static_cast<int64_t>(block);
  lru_.push_front({pointer, block});
  cached_[block].push_back(lru_.begin());
  counters_.cached_bytes += static_cast<int64_t>(block);
}

void CpuCachingAllocator::Zero(void* pointer, size_t bytes) { std::memset(pointer, 0, bytes); }

void CpuCachingAllocator::MarkUninitialized(void* pointer, size_t bytes) {
#ifndef NDEBUG
  std::memset(pointer, 0xFF, bytes);
#else
  (void)pointer;
  (void)bytes;
#endif
}

int64_t CpuCachingAllocator::PeakReservedBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peak_held_bytes_;
}

void CpuCachingAllocator::ResetPeakReserved() {
  std::lock_guard<std::mutex> lock(mutex_);
  peak_held_bytes_ = counters_.live_bytes + counters_.cached_bytes;
}

void CpuCachingAllocator::ReleaseCached() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const CachedBlock& block : lru_) SystemFree(block.pointer, block.bytes);
  lru_.clear();
  cached_.clear();
  counters_.cached_bytes = 0;
}

CpuCachingAllocator::Counters CpuCachingAllocator::counters() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counters_;
}

}  // namespace xlmr
