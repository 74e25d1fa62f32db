// The CUDA backend's profile::DeviceTracer, built on CUPTI: the kernel-launch and host-wait
// counts of metrics.jsonl (always on once registered) and, between Start and Stop, every
// kernel, memcpy and memset the device ran, timed on the device and tied to the op that issued
// it (framework/profile/profiler.h).
//
// libcupti is loaded at run time (dlopen of libcupti.so.13, then libcupti.so), never linked: the
// GPU kit's bundle carries no CUDA library and a binary must start on a host without CUPTI. Then
// the counts are nullopt and Start fails with the reason (as it does when CUPTI refuses us, e.g.
// under Nsight, which holds CUPTI's one subscription). Only a CUPTI of this toolkit's major
// version (13) is accepted: the activity records' layouts are those of its headers.
//
// What is counted (driver API callbacks at API enter, from every thread of the process; the
// runtime calls the driver, so cudaLaunchKernel, cudaMemcpy, ... arrive here too):
//   kernel launches: cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel and their
//     per-thread-stream (_ptsz) forms, one each; cuGraphLaunch(_ptsz) counts one per graph
//     launched, however many kernels the graph holds.
//   host waits: the calls that block the calling host thread until the device has done work:
//     cuStreamSynchronize(_ptsz), cuCtxSynchronize(_v2), cuEventSynchronize; the synchronous
//     copies that touch host memory or may (cuMemcpy, cuMemcpyHtoD_v2, cuMemcpyDtoH_v2, the
//     array and 2D/3D copies, and their _ptds forms: a synchronous copy waits for the legacy
//     default stream, which our blocking streams are ordered with); and
//     cuMemFree_v2 / cuMemFreeHost, which synchronise the device. cuMemcpy and the 2D/3D copies
//     count whatever direction their parameters give (the callback does not read them).
//     Not waits: cuMemcpyDtoD_v2 and cuMemcpyPeer/3DPeer (device to device: the host does not
//     wait for them), every *Async call, cuStreamQuery/cuEventQuery (they poll),
//     cuStreamWaitValue* and cuStreamWaitEvent (the device waits, not the host).
//     The tracer's own synchronisation in Stop is not counted.
#ifndef XLMR_KERNELS_CUDA_CUPTI_TRACER_H_
#define XLMR_KERNELS_CUDA_CUPTI_TRACER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "framework/profile/profiler.h"

namespace xlmr::kernels::cuda {

class CuptiTracer final : public profile::DeviceTracer {
 public:
  // The process's tracer: on first use loads libcupti and subscribes to the driver callbacks
  // (one CUPTI subscription per process, so one tracer). Never destroyed: CUPTI may call back
  // from any thread until the process exits. Never fails; unavailable() says why it cannot
  // trace.
  static CuptiTracer& Instance();

  // Counts since Instance() first ran (calls made before it are not seen); nullopt when
  // unavailable.
  std::optional<int64_t> KernelLaunches() const override;
  std::optional<int64_t> HostWaits() const override;

  // Enables kernel, memcpy and memset activity records and calibrates the device clock against
  // profile::NowNs. Fails (false, `why` set when non-null) when unavailable or CUPTI refuses.
  bool Start(std::string* why) override;
  // Synchronises the device (so everything issued before Stop has run), flushes CUPTI's
  // buffers, disables the activity kinds and returns the records since Start in the order CUPTI
  // delivered them: name (the kernel's, "memcpy HtoD"/"memcpy DtoH"/"memcpy DtoD"/
  // "memcpy <kind>", "memset"), op_id (profile::CurrentOpId() of the thread whose driver or
  // runtime call issued it while the recording was on; -1 otherwise), stream (CUPTI's stream
  // id), bytes (copies and memsets), begin/end on profile::NowNs's clock.
  // Clock assumption: CUPTI's timestamps (cuptiGetTimestamp) and the host's steady clock are
  // both nanoseconds that advance at the same rate over a recording, so one offset measured at
  // Start (to within the couple of microseconds one cuptiGetTimestamp call takes) maps one to
  // the other; drift between them over a profile window of seconds is ignored.
  std::vector<profile::DeviceEvent> Stop() override;
  // "CUPTI activity API (device time per kernel)", plus the count of records CUPTI dropped
  // when its buffers overflowed, if any.
  std::string Describe() const override;

  // Why the tracer cannot count or record ("" when it can).
  const std::string& unavailable() const;

  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;

 private:
  CuptiTracer();
};

// Registers CuptiTracer::Instance() as Device::kCuda's tracer (CudaContext::Init calls it, so
// that every CUDA run counts launches and waits). Idempotent.
void RegisterCuptiTracer();

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_CUPTI_TRACER_H_
