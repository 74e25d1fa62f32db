#include "kernels/cuda/cupti_tracer.h"

#include <cuda_runtime_api.h>
// Types, enums and callback ids only: every CUPTI function is reached through the pointers
// LoadCupti resolves, so the binary does not link libcupti.
#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <optional>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"

namespace xlmr::kernels::cuda {
namespace {

// The CUPTI functions the tracer calls, resolved from the loaded library.
struct CuptiApi {
  decltype(&cuptiGetVersion) get_version = nullptr;
  decltype(&cuptiGetResultString) get_result_string = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiEnableCallback) enable_callback = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_buffer_callbacks = nullptr;
  decltype(&cuptiActivityEnable) activity_enable = nullptr;
  decltype(&cuptiActivityDisable) activity_disable = nullptr;
  decltype(&cuptiActivityFlushAll) activity_flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) activity_next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) activity_dropped_records = nullptr;
  decltype(&cuptiGetTimestamp) get_timestamp = nullptr;
};

// Where the dynamic loader looks (LD_LIBRARY_PATH, the cache): the kit's run.sh adds CUPTI's
// usual folders. The versioned name first, so an unrelated unversioned CUPTI is a fallback.
constexpr const char* kLibraryNames[] = {"libcupti.so.13", "libcupti.so"};

// Kernel launches, host waits (see the header for the lists) and the calls whose correlation
// id ties a copy or memset to its op while a recording is on (counted as nothing).
constexpr CUpti_CallbackId kLaunchCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};
constexpr CUpti_CallbackId kHostWaitCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2,
    CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoA_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoA_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoH_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoH_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy2D_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy2D_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DUnaligned_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DUnaligned_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3D_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3D_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost,
};
constexpr CUpti_CallbackId kAttributionOnlyCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DPeer,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DPeer_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz,
};
// Runtime calls that issue device work, enabled only while recording: a kernel record's
// correlation id is that of the driver call, but should a runtime launch reach the driver by a
// path CUPTI reports no driver callback for, its runtime correlation id still finds the op.
constexpr CUpti_CallbackId kRuntimeAttributionCallbacks[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000,
};
constexpr CUpti_ActivityKind kActivityKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
};

// CUPTI hands records back in buffers we lend it; large enough that a step of XLM-R large
// (a few thousand kernels, ~200 bytes a record) fills few of them.
constexpr size_t kActivityBufferBytes = size_t{8} << 20;
// CUpti_BuffersCallbackRequestFunc: buffers must be 8-byte aligned.
constexpr size_t kActivityBufferAlignment = 8;

// Everything the C callbacks reach: CUPTI gives the buffer callbacks no user data, so the
// process's one tracer keeps its state here.
struct TracerState {
  CuptiApi api;
  std::string unavailable;  // set once by Initialize; "" when the tracer works
  CUpti_SubscriberHandle subscriber = nullptr;
  std::atomic<int64_t> launches{0};
  std::atomic<int64_t> host_waits{0};
  std::atomic<bool> recording{false};
  std::atomic<uint64_t> dropped{0};

  std::mutex mutex;  // guards what follows
  std::unordered_map<uint32_t, int64_t> op_of_correlation;
  // Converted records, op_id holding the correlation id until Stop resolves it.
  std::vector<profile::DeviceEvent> events;
  std::vector<uint32_t> event_correlations;
  int64_t clock_offset_ns = 0;  // profile::NowNs() - cuptiGetTimestamp()
};

TracerState& State() {
  static TracerState* state = new TracerState();  // never destroyed: CUPTI calls back until exit
  return *state;
}

// Set while the tracer itself calls the driver (Stop's synchronisation), which is not the
// program's wait.
thread_local bool in_tracer_call = false;

std::string ResultString(const CuptiApi& api, CUptiResult result) {
  const char* text = nullptr;
  if (api.get_result_string != nullptr && api.get_result_string(result, &text) == CUPTI_SUCCESS &&
      text != nullptr) {
    return text;
  }
  return absl::StrCat("CUPTI error ", static_cast<int>(result));
}

template <typename Function>
bool Resolve(void* library, const char* name, Function* function, std::string* missing) {
  *function = reinterpret_cast<Function>(dlsym(library, name));
  if (*function == nullptr) absl::StrAppend(missing, missing->empty() ? "" : ", ", name);
  return *function != nullptr;
}

// Loads libcupti and resolves `api`; returns "" or why not.
std::string LoadCupti(CuptiApi* api) {
  void* library = nullptr;
  std::string errors;
  for (const char* name : kLibraryNames) {
    library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library != nullptr) break;
    const char* error = dlerror();
    absl::StrAppend(&errors, errors.empty() ? "" : "; ", error != nullptr ? error : name);
  }
  if (library == nullptr) {
    return absl::StrCat("libcupti could not be loaded (", errors,
                        "); add CUPTI's folder to LD_LIBRARY_PATH");
  }
  std::string missing;
  Resolve(library, "cuptiGetVersion", &api->get_version, &missing);
  Resolve(library, "cuptiGetResultString", &api->get_result_string, &missing);
  Resolve(library, "cuptiSubscribe", &api->subscribe, &missing);
  Resolve(library, "cuptiEnableCallback", &api->enable_callback, &missing);
  Resolve(library, "cuptiActivityRegisterCallbacks", &api->register_buffer_callbacks, &missing);
  Resolve(library, "cuptiActivityEnable", &api->activity_enable, &missing);
  Resolve(library, "cuptiActivityDisable", &api->activity_disable, &missing);
  Resolve(library, "cuptiActivityFlushAll", &api->activity_flush_all, &missing);
  Resolve(library, "cuptiActivityGetNextRecord", &api->activity_next_record, &missing);
  Resolve(library, "cuptiActivityGetNumDroppedRecords", &api->activity_dropped_records, &missing);
  Resolve(library, "cuptiGetTimestamp", &api->get_timestamp, &missing);
  if (!missing.empty()) return absl::StrCat("libcupti lacks ", missing);
  uint32_t version = 0;
  if (api->get_version(&version) != CUPTI_SUCCESS || version / 10000 != CUPTI_API_VERSION / 10000) {
    return absl::StrCat("libcupti's API version ", version, " is not CUDA ",
                        CUPTI_API_VERSION / 10000, "'s (", CUPTI_API_VERSION,
                        "), whose activity record layouts this binary reads");
  }
  return "";
}

// ---- Callbacks ----

enum class CallKind { kLaunch, kHostWait, kOther };

CallKind KindOf(CUpti_CallbackId cbid) {
  for (CUpti_CallbackId launch : kLaunchCallbacks) {
    if (cbid == launch) return CallKind::kLaunch;
  }
  for (CUpti_CallbackId wait : kHostWaitCallbacks) {
    if (cbid == wait) return CallKind::kHostWait;
  }
  return CallKind::kOther;
}

void RememberOp(uint32_t correlation_id) {
  const int64_t op_id = profile::CurrentOpId();
  if (op_id < 0) return;
  TracerState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.op_of_correlation[correlation_id] = op_id;
}

void CUPTIAPI OnApiCall(void* /*userdata*/, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                        const void* data) {
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  if (call->callbackSite != CUPTI_API_ENTER) return;
  TracerState& state = State();
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && !in_tracer_call) {
    switch (KindOf(cbid)) {
      case CallKind::kLaunch: state.launches.fetch_add(1, std::memory_order_relaxed); break;
      case CallKind::kHostWait: state.host_waits.fetch_add(1, std::memory_order_relaxed); break;
      case CallKind::kOther: break;
    }
  }
  if (state.recording.load(std::memory_order_relaxed)) RememberOp(call->correlationId);
}

const char* CopyName(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "memcpy HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "memcpy AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "memcpy AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "memcpy AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "memcpy DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "memcpy PtoP";
    default: return "memcpy";
  }
}

// The event of one record (the clock offset not yet applied), or false for kinds not traced.
bool Convert(const CUpti_Activity& record, profile::DeviceEvent* event, uint32_t* correlation) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const auto& kernel = reinterpret_cast<const CUpti_ActivityKernel10&>(record);
      event->name = kernel.name != nullptr ? kernel.name : "kernel";
      event->begin_ns = static_cast<int64_t>(kernel.start);
      event->end_ns = static_cast<int64_t>(kernel.end);
      event->stream = kernel.streamId;
      *correlation = kernel.correlationId;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& copy = reinterpret_cast<const CUpti_ActivityMemcpy6&>(record);
      event->name = CopyName(copy.copyKind);
      event->begin_ns = static_cast<int64_t>(copy.start);
      event->end_ns = static_cast<int64_t>(copy.end);
      event->stream = copy.streamId;
      event->bytes = static_cast<int64_t>(copy.bytes);
      *correlation = copy.correlationId;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& set = reinterpret_cast<const CUpti_ActivityMemset4&>(record);
      event->name = "memset";
      event->begin_ns = static_cast<int64_t>(set.start);
      event->end_ns = static_cast<int64_t>(set.end);
      event->stream = set.streamId;
      event->bytes = static_cast<int64_t>(set.bytes);
      *correlation = set.correlationId;
      return true;
    }
    default:
      return false;
  }
}

void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kActivityBufferAlignment, kActivityBufferBytes));
  *size = *buffer != nullptr ? kActivityBufferBytes : 0;  // 0: CUPTI drops the records
  *max_records = 0;                                       // as many as fit
}

void CUPTIAPI OnBufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                size_t /*size*/, size_t valid_bytes) {
  TracerState& state = State();
  std::vector<profile::DeviceEvent> events;
  std::vector<uint32_t> correlations;
  CUpti_Activity* record = nullptr;
  while (valid_bytes > 0 &&
         state.api.activity_next_record(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    profile::DeviceEvent event;
    uint32_t correlation = 0;
    if (!Convert(*record, &event, &correlation)) continue;
    events.push_back(std::move(event));
    correlations.push_back(correlation);
  }
  size_t dropped = 0;
  if (state.api.activity_dropped_records(context, stream_id, &dropped) == CUPTI_SUCCESS) {
    state.dropped.fetch_add(dropped, std::memory_order_relaxed);
  }
  std::free(buffer);
  std::lock_guard<std::mutex> lock(state.mutex);
  for (size_t i = 0; i < events.size(); ++i) {
    state.events.push_back(std::move(events[i]));
    state.event_correlations.push_back(correlations[i]);
  }
}

// ---- Setup ----

// Enables (or disables) each of `callbacks` in `domain`; returns "" or the first failure.
template <size_t N>
std::string EnableCallbacks(const CuptiApi& api, CUpti_SubscriberHandle subscriber,
                            CUpti_CallbackDomain domain, const CUpti_CallbackId (&callbacks)[N],
                            bool enable) {
  for (CUpti_CallbackId cbid : callbacks) {
    if (const CUptiResult result = api.enable_callback(enable ? 1 : 0, subscriber, domain, cbid);
        result != CUPTI_SUCCESS) {
      return absl::StrCat("cuptiEnableCallback(", domain, ", ", cbid,
                          ") failed: ", ResultString(api, result));
    }
  }
  return "";
}

// Loads CUPTI, subscribes and enables the counted driver callbacks; returns "" or why not.
std::string Initialize(TracerState* state) {
  if (std::string error = LoadCupti(&state->api); !error.empty()) return error;
  const CuptiApi& api = state->api;
  if (const CUptiResult result = api.subscribe(&state->subscriber, &OnApiCall, nullptr);
      result != CUPTI_SUCCESS) {
    return absl::StrCat("cuptiSubscribe failed: ", ResultString(api, result),
                        result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                            ? " (another CUPTI client, e.g. Nsight, holds the subscription)"
                            : "");
  }
  for (std::string error :
       {EnableCallbacks(api, state->subscriber, CUPTI_CB_DOMAIN_DRIVER_API, kLaunchCallbacks, true),
        EnableCallbacks(api, state->subscriber, CUPTI_CB_DOMAIN_DRIVER_API, kHostWaitCallbacks, true),
        EnableCallbacks(api, state->subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                        kAttributionOnlyCallbacks, true)}) {
    if (!error.empty()) return error;
  }
  if (const CUptiResult result =
          api.register_buffer_callbacks(&OnBufferRequested, &OnBufferCompleted);
      result != CUPTI_SUCCESS) {
    return absl::StrCat("cuptiActivityRegisterCallbacks failed: ", ResultString(api, result));
  }
  return "";
}

// profile::NowNs() - cuptiGetTimestamp(): of a few samples, the one whose host readings around
// the CUPTI reading are closest, taken at their midpoint. nullopt when CUPTI gave no timestamp.
std::optional<int64_t> CalibrateClock(const CuptiApi& api) {
  int64_t best_offset = 0, best_gap = INT64_MAX;
  for (int sample = 0; sample < 8; ++sample) {
    uint64_t device_ns = 0;
    const int64_t before = profile::NowNs();
    if (api.get_timestamp(&device_ns) != CUPTI_SUCCESS) continue;
    const int64_t after = profile::NowNs();
    if (after - before < best_gap) {
      best_gap = after - before;
      best_offset = before + (after - before) / 2 - static_cast<int64_t>(device_ns);
    }
  }
  if (best_gap == INT64_MAX) return std::nullopt;
  return best_offset;
}

// Disables the activity kinds and the runtime callbacks Start enabled.
void StopCollecting(TracerState* state) {
  for (CUpti_ActivityKind kind : kActivityKinds) state->api.activity_disable(kind);
  EnableCallbacks(state->api, state->subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                  kRuntimeAttributionCallbacks, false);
}

}  // namespace

CuptiTracer::CuptiTracer() { State().unavailable = Initialize(&State()); }

CuptiTracer& CuptiTracer::Instance() {
  static CuptiTracer* tracer = new CuptiTracer();  // never destroyed (see the header)
  return *tracer;
}

const std::string& CuptiTracer::unavailable() const { return State().unavailable; }

std::optional<int64_t> CuptiTracer::KernelLaunches() const {
  if (!unavailable().empty()) return std::nullopt;
  return State().launches.load(std::memory_order_relaxed);
}

std::optional<int64_t> CuptiTracer::HostWaits() const {
  if (!unavailable().empty()) return std::nullopt;
  return State().host_waits.load(std::memory_order_relaxed);
}

bool CuptiTracer::Start(std::string* why) {
  TracerState& state = State();
  auto fail = [&](std::string reason) {
    if (why != nullptr) *why = std::move(reason);
    return false;
  };
  if (!unavailable().empty()) return fail(unavailable());
  if (state.recording.load()) Stop();
  const std::optional<int64_t> clock_offset = CalibrateClock(state.api);
  if (!clock_offset) return fail("cuptiGetTimestamp failed: device times cannot be placed");
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.op_of_correlation.clear();
    state.events.clear();
    state.event_correlations.clear();
    state.clock_offset_ns = *clock_offset;
  }
  state.dropped = 0;
  if (std::string error = EnableCallbacks(state.api, state.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                          kRuntimeAttributionCallbacks, true);
      !error.empty()) {
    StopCollecting(&state);
    return fail(error);
  }
  for (CUpti_ActivityKind kind : kActivityKinds) {
    if (const CUptiResult result = state.api.activity_enable(kind); result != CUPTI_SUCCESS) {
      StopCollecting(&state);
      return fail(absl::StrCat("cuptiActivityEnable(", static_cast<int>(kind),
                               ") failed: ", ResultString(state.api, result)));
    }
  }
  state.recording = true;
  return true;
}

std::vector<profile::DeviceEvent> CuptiTracer::Stop() {
  TracerState& state = State();
  if (!state.recording.exchange(false)) return {};
  // Everything issued before Stop must have run for its record to exist; the result is not
  // checked (a failing device fails the program's own next call, not the profile).
  in_tracer_call = true;
  cudaDeviceSynchronize();
  in_tracer_call = false;
  state.api.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  StopCollecting(&state);
  std::lock_guard<std::mutex> lock(state.mutex);
  std::vector<profile::DeviceEvent> events = std::move(state.events);
  for (size_t i = 0; i < events.size(); ++i) {
    const auto op = state.op_of_correlation.find(state.event_correlations[i]);
    events[i].op_id = op != state.op_of_correlation.end() ? op->second : -1;
    events[i].begin_ns += state.clock_offset_ns;
    events[i].end_ns += state.clock_offset_ns;
  }
  state.events.clear();
  state.event_correlations.clear();
  state.op_of_correlation.clear();
  return events;
}

std::string CuptiTracer::Describe() const {
  std::string description = "CUPTI activity API (device time per kernel)";
  if (const uint64_t dropped = State().dropped.load(); dropped > 0) {
    absl::StrAppend(&description, "; ", dropped, " records dropped (buffers full)");
  }
  return description;
}

void RegisterCuptiTracer() { profile::RegisterDeviceTracer(Device::kCuda, &CuptiTracer::Instance()); }

}  // namespace xlmr::kernels::cuda
