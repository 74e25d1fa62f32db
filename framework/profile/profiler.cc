#include "framework/profile/profiler.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace xlmr::profile {
namespace {

struct RecorderState {
  std::atomic<bool> active{false};
  std::atomic<int64_t> next_op_id{0};
  std::atomic<uint32_t> next_thread{0};
  std::atomic<int64_t> ops_dispatched{0};
  std::mutex mutex;               // guards events and the tracer in use
  std::vector<HostEvent> events;
  DeviceTracer* tracing = nullptr;  // the tracer this recording started, if any
  DeviceTracer* cuda_tracer = nullptr;
};

RecorderState& State() {
  static RecorderState* state = new RecorderState();  // never destroyed: used at exit by any thread
  return *state;
}

// The recording's number of this thread: assigned at its first event, renumbered per recording
// so that a trace's host threads read 0, 1, ...
struct ThreadSlot {
  uint64_t recording = 0;
  uint32_t number = 0;
};
std::atomic<uint64_t> recording_generation{0};

uint32_t ThreadNumber() {
  thread_local ThreadSlot slot;
  const uint64_t generation = recording_generation.load(std::memory_order_relaxed);
  if (slot.recording != generation) {
    slot.recording = generation;
    slot.number = State().next_thread.fetch_add(1, std::memory_order_relaxed);
  }
  return slot.number;
}

std::string& ThreadPath() {
  thread_local std::string path;
  return path;
}

int64_t& ThreadOpId() {
  thread_local int64_t op_id = -1;
  return op_id;
}

void Append(HostEvent event) {
  RecorderState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.events.push_back(std::move(event));
}

}  // namespace

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void RegisterDeviceTracer(Device device, DeviceTracer* tracer) {
  if (device == Device::kCuda) State().cuda_tracer = tracer;
}

DeviceTracer* RegisteredDeviceTracer(Device device) {
  return device == Device::kCuda ? State().cuda_tracer : nullptr;
}

LaunchCounts CountLaunches(Device device) {
  if (device == Device::kCpu) return {State().ops_dispatched.load(std::memory_order_relaxed), 0};
  const DeviceTracer* tracer = RegisteredDeviceTracer(device);
  if (tracer == nullptr) return {};
  return {tracer->KernelLaunches(), tracer->HostWaits()};
}

LaunchCounts LaunchesSince(const LaunchCounts& before, Device device) {
  LaunchCounts now = CountLaunches(device);
  const auto since = [](std::optional<int64_t>& count, const std::optional<int64_t>& earlier) {
    if (count.has_value() && earlier.has_value()) {
      *count -= *earlier;
    } else {
      count.reset();
    }
  };
  since(now.kernel_launches, before.kernel_launches);
  since(now.host_waits, before.host_waits);
  return now;
}

LaunchCounts LaunchesPlus(const LaunchCounts& a, const LaunchCounts& b) {
  const auto plus = [](const std::optional<int64_t>& x, const std::optional<int64_t>& y) {
    return x.has_value() && y.has_value() ? std::optional<int64_t>(*x + *y) : std::nullopt;
  };
  return {plus(a.kernel_launches, b.kernel_launches), plus(a.host_waits, b.host_waits)};
}

bool Active() { return State().active.load(std::memory_order_relaxed); }

int64_t CurrentOpId() { return ThreadOpId(); }

bool StartRecording(Device device, std::string* why) {
  RecorderState& state = State();
  StopRecording();
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.events.clear();
    state.next_op_id = 0;
    state.next_thread = 0;
    recording_generation.fetch_add(1, std::memory_order_relaxed);
    state.tracing = nullptr;
  }
  bool device_started = true;
  if (DeviceTracer* tracer = RegisteredDeviceTracer(device); tracer != nullptr) {
    device_started = tracer->Start(why);
    if (device_started) state.tracing = tracer;
  } else if (device != Device::kCpu) {
    device_started = false;
    if (why != nullptr) *why = absl::StrCat("no device tracer for ", DeviceName(device));
  }
  state.active.store(true, std::memory_order_relaxed);
  return device_started;
}

Recording StopRecording() {
  RecorderState& state = State();
  Recording recording;
  if (!state.active.exchange(false, std::memory_order_relaxed)) return recording;
  std::lock_guard<std::mutex> lock(state.mutex);
  recording.host = std::move(state.events);
  state.events.clear();
  if (state.tracing != nullptr) {
    recording.device = state.tracing->Stop();
    recording.device_timing = state.tracing->Describe();
    state.tracing = nullptr;
  }
  return recording;
}

Scope::Scope(absl::string_view name) {
  if (Active()) Open(name);
}

Scope::Scope(absl::string_view prefix, int64_t index) {
  if (Active()) Open(absl::StrCat(prefix, ".", index));
}

void Scope::Open(absl::string_view name) {
  std::string& path = ThreadPath();
  parent_length_ = path.size();
  if (!path.empty()) path += '.';
  path.append(name.data(), name.size());
  open_ = true;
  begin_ns_ = NowNs();
}

Scope::~Scope() {
  if (!open_) return;
  std::string& path = ThreadPath();
  // A scope opened while a recording was on closes its path whatever happened since; its event
  // is kept only if the recording is still on.
  if (Active()) {
    HostEvent event;
    event.kind = EventKind::kScope;
    event.name = path;
    event.begin_ns = begin_ns_;
    event.end_ns = NowNs();
    event.thread = ThreadNumber();
    Append(std::move(event));
  }
  path.resize(parent_length_);
}

StepScope::StepScope(int64_t number) : number_(number) {
  if (!Active()) return;
  open_ = true;
  begin_ns_ = NowNs();
}

StepScope::~StepScope() {
  if (!open_ || !Active()) return;
  HostEvent event;
  event.kind = EventKind::kStep;
  event.name = absl::StrCat("step ", number_);
  event.begin_ns = begin_ns_;
  event.end_ns = NowNs();
  event.thread = ThreadNumber();
  Append(std::move(event));
}

OpScope::OpScope(const char* op_name, OpKind kind, int64_t bytes) : op_name_(op_name), bytes_(bytes) {
  RecorderState& state = State();
  if (kind == OpKind::kKernelCall) state.ops_dispatched.fetch_add(1, std::memory_order_relaxed);
  if (!state.active.load(std::memory_order_relaxed)) return;
  open_ = true;
  op_id_ = state.next_op_id.fetch_add(1, std::memory_order_relaxed);
  parent_op_id_ = std::exchange(ThreadOpId(), op_id_);
  begin_ns_ = NowNs();
}

OpScope::~OpScope() {
  if (!open_) return;
  ThreadOpId() = parent_op_id_;
  if (!Active()) return;
  HostEvent event;
  event.kind = EventKind::kOp;
  event.name = op_name_;
  event.path = ThreadPath();
  event.op_class = ClassOfOp(op_name_);
  event.begin_ns = begin_ns_;
  event.end_ns = NowNs();
  event.thread = ThreadNumber();
  event.bytes = bytes_;
  event.op_id = op_id_;
  Append(std::move(event));
}

}  // namespace xlmr::profile
