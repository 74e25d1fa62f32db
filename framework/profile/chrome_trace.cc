#include "framework/profile/chrome_trace.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <unordered_map>

#include "absl/strings/str_cat.h"

namespace xlmr::profile {
namespace {

constexpr int kHostPid = 1;
constexpr int kDevicePid = 2;

const char* Category(const HostEvent& event) {
  switch (event.kind) {
    case EventKind::kStep: return "step";
    case EventKind::kScope: return "scope";
    case EventKind::kOp: return OpClassName(event.op_class);
  }
  return "op";
}

nlohmann::json Metadata(const char* what, int pid, int64_t tid, const std::string& name) {
  nlohmann::json event = {{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", {{"name", name}}}};
  if (tid >= 0) event["tid"] = tid;
  return event;
}

nlohmann::json Complete(const std::string& name, const std::string& category, int pid, int64_t tid,
                        int64_t begin_ns, int64_t end_ns, int64_t origin_ns) {
  return {{"name", name},
          {"cat", category},
          {"ph", "X"},
          {"pid", pid},
          {"tid", tid},
          {"ts", static_cast<double>(begin_ns - origin_ns) * 1e-3},
          {"dur", static_cast<double>(std::max<int64_t>(0, end_ns - begin_ns)) * 1e-3}};
}

}  // namespace

nlohmann::json ChromeTrace(const Recording& recording, const std::string& process_name) {
  int64_t origin = INT64_MAX;
  for (const HostEvent& event : recording.host) origin = std::min(origin, event.begin_ns);
  for (const DeviceEvent& event : recording.device) origin = std::min(origin, event.begin_ns);
  if (origin == INT64_MAX) origin = 0;

  nlohmann::json events = nlohmann::json::array();
  events.push_back(Metadata("process_name", kHostPid, -1, absl::StrCat(process_name, " (host)")));
  std::set<uint32_t> threads;
  std::unordered_map<int64_t, const HostEvent*> op_by_id;
  for (const HostEvent& event : recording.host) {
    threads.insert(event.thread);
    nlohmann::json out = Complete(event.name, Category(event), kHostPid, event.thread, event.begin_ns,
                                  event.end_ns, origin);
    if (event.kind == EventKind::kOp) {
      op_by_id[event.op_id] = &event;
      out["args"] = {{"path", event.path}, {"op_id", event.op_id}};
      if (event.bytes > 0) out["args"]["bytes"] = event.bytes;
    }
    events.push_back(std::move(out));
  }
  for (uint32_t thread : threads) {
    events.push_back(Metadata("thread_name", kHostPid, thread, absl::StrCat("host thread ", thread)));
  }
  if (!recording.device.empty()) {
    events.push_back(Metadata("process_name", kDevicePid, -1, absl::StrCat(process_name, " (device)")));
    std::set<uint32_t> streams;
    for (const DeviceEvent& event : recording.device) {
      streams.insert(event.stream);
      const auto op = op_by_id.find(event.op_id);
      const std::string name =
          op == op_by_id.end() ? event.name
                               : absl::StrCat(op->second->path.empty() ? "" : op->second->path + " ", op->second->name);
      const char* category = op == op_by_id.end() ? "other" : OpClassName(op->second->op_class);
      nlohmann::json out =
          Complete(name, category, kDevicePid, event.stream, event.begin_ns, event.end_ns, origin);
      out["args"] = {{"kernel", event.name}, {"op_id", event.op_id}};
      if (event.bytes > 0) out["args"]["bytes"] = event.bytes;
      events.push_back(std::move(out));
    }
    for (uint32_t stream : streams) {
      events.push_back(Metadata("thread_name", kDevicePid, stream, absl::StrCat("stream ", stream)));
    }
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

}  // namespace xlmr::profile
