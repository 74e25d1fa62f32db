// Host-to-device copies that never wait for the GPU: the bytes are copied on the host into a
// slot of pinned (page-locked) memory, and from there to the device by cudaMemcpyAsync on the
// compute stream, so the copy lands in stream order (after the kernels queued before it, before
// those queued after) while the host goes on. A synchronous cudaMemcpy from pageable memory
// would first wait for everything queued on the device: one blocking wait per input tensor, per
// micro-step.
//
// Slots are reused round robin; a slot is rewritten only once the GPU has finished its previous
// copy (its event): the host waits only when it is a whole ring of copies ahead of the GPU. A
// copy larger than a slot is not staged (CopyToDevice returns false): the caller copies
// synchronously (checkpoint loads, not the per-step inputs, which are kilobytes).
#ifndef XLMR_KERNELS_CUDA_PINNED_STAGING_H_
#define XLMR_KERNELS_CUDA_PINNED_STAGING_H_

#include <cstddef>
#include <mutex>
#include <vector>

struct CUstream_st;
struct CUevent_st;

namespace xlmr::kernels::cuda {

class PinnedStaging {
 public:
  static constexpr size_t kSlots = 16;
  static constexpr size_t kSlotBytes = size_t{1} << 20;

  // [in] stream: where the copies are queued (the compute stream). Not owned.
  explicit PinnedStaging(CUstream_st* stream) : stream_(stream) {}
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  // Queues the copy of `bytes` from host memory `src` (any: pageable is fine; it may be
  // reused as soon as this returns) to device memory `dst`. False, with nothing done, when
  // `bytes` exceeds kSlotBytes. Thread-safe.
  bool CopyToDevice(void* dst, const void* src, size_t bytes);

 private:
  struct Slot {
    void* host = nullptr;        // kSlotBytes of pinned memory, allocated at first use
    CUevent_st* event = nullptr;  // recorded after the slot's last copy; null before the first
  };
  // Waits (only if needed) until the GPU has read `slot`'s previous contents.
  static void WaitUntilFree(const Slot& slot);

  CUstream_st* stream_;
  std::mutex mutex_;
  std::vector<Slot> slots_ = std::vector<Slot>(kSlots);
  size_t next_ = 0;
};

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_PINNED_STAGING_H_
