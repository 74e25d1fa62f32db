// The recording half of the profiler behind --profile_steps (docs/CONTRACT.md): while a
// recording is on, every op framework/ops dispatches, every host<->device copy and every
// collective is an event with its host begin and end, inside the named scopes the model opens
// ("layer.3" then "attention.fwd" reads "layer.3.attention.fwd"), and a registered device
// tracer (the CUDA backend's CUPTI tracer) adds what ran on the device, each kernel tied to the
// op that launched it. profile_summary.h turns a Recording into the per-class table,
// chrome_trace.h into a trace Perfetto and chrome://tracing open.
//
// Off (the default), a scope or op costs one relaxed atomic load (and an op one relaxed
// increment: the launch counts of metrics.jsonl are kept whether or not a recording is on).
// Events are recorded from any thread; the clock is the host's steady clock.
#ifndef XLMR_FRAMEWORK_PROFILE_PROFILER_H_
#define XLMR_FRAMEWORK_PROFILE_PROFILER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "framework/core/device.h"
#include "framework/profile/op_class.h"

namespace xlmr::profile {

enum class EventKind {
  kStep,   // one optimizer step (or one prediction batch): the unit the tables divide by
  kScope,  // a named region of the model ("layer.3.attention.fwd")
  kOp,     // one op: a backend call, a copy, a collective
};

struct HostEvent {
  EventKind kind = EventKind::kOp;
  std::string name;     // kStep "step 12"; kScope its full path; kOp the op ("ops::Linear")
  std::string path;     // kOp: the scope path it ran in ("" outside every scope)
  OpClass op_class = OpClass::kOther;  // kOp only
  int64_t begin_ns = 0;  // steady clock
  int64_t end_ns = 0;
  uint32_t thread = 0;   // the recording's number of the thread (0, 1, ... in order of first event)
  int64_t bytes = 0;     // kOp: bytes moved, where the op knows them (copies, collectives)
  int64_t op_id = -1;    // kOp: unique within the recording; device events point at it
};

struct DeviceEvent {
  std::string name;      // the kernel's name, or "memcpy HtoD" / "memset" ...
  int64_t op_id = -1;    // the HostEvent::op_id of the op whose call issued it; -1: none
  int64_t begin_ns = 0;  // on the host events' steady clock
  int64_t end_ns = 0;
  uint32_t stream = 0;
  int64_t bytes = 0;     // copies and memsets
};

struct Recording {
  std::vector<HostEvent> host;
  std::vector<DeviceEvent> device;  // empty on the CPU
  std::string device_timing;        // how device events were timed; empty: none (CPU)
};

// What a backend's tracer offers (kernels/cuda/cupti_tracer.h implements it with CUPTI).
class DeviceTracer {
 public:
  virtual ~DeviceTracer() = default;
  // Kernel launches and blocking host waits (stream/device/event synchronisations, synchronous
  // copies, frees) issued by this process so far; nullopt when the tracer cannot count.
  virtual std::optional<int64_t> KernelLaunches() const = 0;
  virtual std::optional<int64_t> HostWaits() const = 0;
  // Starts recording device activity; Stop flushes and returns what ran since Start, on the
  // host's steady clock. Start fails (false, with `why`) when the device cannot be traced.
  virtual bool Start(std::string* why) = 0;
  virtual std::vector<DeviceEvent> Stop() = 0;
  // One line for the summary: what timed the device events ("CUPTI activity API").
  virtual std::string Describe() const = 0;
};

// The tracer of `device` (kCuda); nullptr unregisters. Not owned; it must outlive its use.
void RegisterDeviceTracer(Device device, DeviceTracer* tracer);
DeviceTracer* RegisteredDeviceTracer(Device device);

// Launch counts as metrics.jsonl reports them: on the CPU, the backend calls the ops made
// (every CPU kernel is synchronous: no host waits); on a device, its tracer's counts (nullopt
// without one).
struct LaunchCounts {
  std::optional<int64_t> kernel_launches;
  std::optional<int64_t> host_waits;
};
LaunchCounts CountLaunches(Device device);
// The launches and waits since `before` (a CountLaunches of the same device); unknown stays nullopt.
LaunchCounts LaunchesSince(const LaunchCounts& before, Device device);
// The counts of two spans together (a step queued in one and read in another); unknown stays nullopt.
LaunchCounts LaunchesPlus(const LaunchCounts& a, const LaunchCounts& b);

// Starts a recording (clearing any previous one) of host events, and of `device`'s events when
// it has a tracer that starts. Returns false with `why` when the device tracer failed to start:
// the host recording is on regardless.
bool StartRecording(Device device, std::string* why);
// Stops the recording and returns it (empty when none was on).
Recording StopRecording();

// Whether a recording is on (one relaxed atomic load).
bool Active();

// The current thread's innermost op, for a device tracer attributing what it sees (-1: none).
int64_t CurrentOpId();

// RAII: a named scope of the model; nested scopes join with '.' ("layer.3" + "attention.fwd").
class Scope {
 public:
  explicit Scope(absl::string_view name);
  Scope(absl::string_view prefix, int64_t index);  // "layer", 3: "layer.3"
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  void Open(absl::string_view name);
  bool open_ = false;
  size_t parent_length_ = 0;
  int64_t begin_ns_ = 0;
};

// RAII: one optimizer step (or prediction batch) `number`, named "step <number>".
class StepScope {
 public:
  explicit StepScope(int64_t number);
  ~StepScope();
  StepScope(const StepScope&) = delete;
  StepScope& operator=(const StepScope&) = delete;

 private:
  int64_t number_;
  bool open_ = false;
  int64_t begin_ns_ = 0;
};

// RAII: one op. framework/ops' dispatch opens one per backend call (kKernelCall: counted by
// CountLaunches on the CPU, recorded or not); copies and collectives open their own (kOther).
// `op_name` must outlive the recording (a string literal).
enum class OpKind { kKernelCall, kOther };
class OpScope {
 public:
  explicit OpScope(const char* op_name, OpKind kind = OpKind::kOther, int64_t bytes = 0);
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  const char* op_name_;
  int64_t bytes_;
  bool open_ = false;
  int64_t begin_ns_ = 0;
  int64_t op_id_ = -1;
  int64_t parent_op_id_ = -1;
};

// The steady clock in nanoseconds, as events carry it.
int64_t NowNs();

}  // namespace xlmr::profile

#endif  // XLMR_FRAMEWORK_PROFILE_PROFILER_H_
