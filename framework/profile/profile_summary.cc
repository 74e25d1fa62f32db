#include "framework/profile/profile_summary.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace xlmr::profile {
namespace {

struct Interval {
  int64_t begin = 0;
  int64_t end = 0;
};

// The length of the union of `intervals` (sorted here).
int64_t UnionLength(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  int64_t covered = 0;
  int64_t reach = INT64_MIN;
  for (const Interval& interval : intervals) {
    const int64_t begin = std::max(interval.begin, reach);
    if (interval.end > begin) covered += interval.end - begin;
    reach = std::max(reach, interval.end);
  }
  return covered;
}

// Accumulates rows by name, keeping first-seen order for classes and sorting ops at the end.
class Totals {
 public:
  void Add(const std::string& name, OpClass op_class, int64_t ns, int64_t calls, int64_t bytes) {
    auto [it, inserted] = index_.try_emplace(name, rows_.size());
    if (inserted) rows_.push_back(TimeRow{name, op_class, 0, 0, 0});
    TimeRow& row = rows_[it->second];
    row.seconds += static_cast<double>(ns) * 1e-9;
    row.calls += calls;
    row.bytes += bytes;
  }
  std::vector<TimeRow> Take() { return std::move(rows_); }

 private:
  std::unordered_map<std::string, size_t> index_;
  std::vector<TimeRow> rows_;
};

// CPU: each op's self time (less the ops nested in it on the same thread) inside `step`, and
// the step's time outside every op.
void AddHostStep(const HostEvent& step, const std::vector<const HostEvent*>& ops, Totals& classes,
                 Totals& by_op, int64_t& host_gap_ns) {
  std::vector<const HostEvent*> inside;
  for (const HostEvent* op : ops) {
    if (op->thread == step.thread && op->begin_ns >= step.begin_ns && op->end_ns <= step.end_ns) {
      inside.push_back(op);
    }
  }
  // Sorted by begin (outer before inner at equal begins), a stack of open ops gives each its
  // parent; a child's time is taken out of its parent's.
  std::sort(inside.begin(), inside.end(), [](const HostEvent* a, const HostEvent* b) {
    return a->begin_ns != b->begin_ns ? a->begin_ns < b->begin_ns : a->end_ns > b->end_ns;
  });
  std::unordered_map<const HostEvent*, int64_t> self;
  std::vector<const HostEvent*> open;
  std::vector<Interval> top_level;
  for (const HostEvent* op : inside) {
    while (!open.empty() && open.back()->end_ns <= op->begin_ns) open.pop_back();
    self[op] += op->end_ns - op->begin_ns;
    if (open.empty()) {
      top_level.push_back({op->begin_ns, op->end_ns});
    } else {
      self[open.back()] -= op->end_ns - op->begin_ns;
    }
    open.push_back(op);
  }
  for (const HostEvent* op : inside) {
    classes.Add(OpClassName(op->op_class), op->op_class, self[op], 1, op->bytes);
    by_op.Add(op->name, op->op_class, self[op], 1, op->bytes);
  }
  host_gap_ns += (step.end_ns - step.begin_ns) - UnionLength(std::move(top_level));
}

// Device: the device time of the kernels and copies inside `step` (clipped to it), each in the
// class of the op that issued it, and the step's time with the device idle.
void AddDeviceStep(const HostEvent& step, const std::vector<DeviceEvent>& device,
                   const std::unordered_map<int64_t, const HostEvent*>& op_by_id, Totals& classes,
                   Totals& by_op, int64_t& host_gap_ns) {
  std::vector<Interval> busy;
  for (const DeviceEvent& event : device) {
    const int64_t begin = std::max(event.begin_ns, step.begin_ns);
    const int64_t end = std::min(event.end_ns, step.end_ns);
    if (end <= begin) continue;
    busy.push_back({begin, end});
    const auto op = op_by_id.find(event.op_id);
    const OpClass op_class = op != op_by_id.end() ? op->second->op_class : OpClass::kOther;
    const std::string op_name = op != op_by_id.end() ? op->second->name : "(outside ops)";
    classes.Add(OpClassName(op_class), op_class, end - begin, 1, event.bytes);
    by_op.Add(op_name, op_class, end - begin, 1, event.bytes);
  }
  host_gap_ns += (step.end_ns - step.begin_ns) - UnionLength(std::move(busy));
}

int64_t StepNumber(const HostEvent& step) {
  int64_t number = 0;
  (void)absl::SimpleAtoi(absl::StripPrefix(step.name, "step "), &number);
  return number;
}

}  // namespace

ProfileSummary Summarize(const Recording& recording) {
  ProfileSummary summary;
  summary.timing = recording.device_timing.empty() ? "wall clock per op (CPU)" : recording.device_timing;
  std::vector<const HostEvent*> steps;
  std::vector<const HostEvent*> ops;
  std::unordered_map<int64_t, const HostEvent*> op_by_id;
  for (const HostEvent& event : recording.host) {
    if (event.kind == EventKind::kStep) steps.push_back(&event);
    if (event.kind == EventKind::kOp) {
      ops.push_back(&event);
      op_by_id[event.op_id] = &event;
    }
  }
  std::sort(steps.begin(), steps.end(),
            [](const HostEvent* a, const HostEvent* b) { return a->begin_ns < b->begin_ns; });
  Totals classes;
  Totals by_op;
  int64_t host_gap_ns = 0;
  const bool device_timed = !recording.device_timing.empty();
  for (const HostEvent* step : steps) {
    summary.step_seconds += static_cast<double>(step->end_ns - step->begin_ns) * 1e-9;
    if (device_timed) {
      AddDeviceStep(*step, recording.device, op_by_id, classes, by_op, host_gap_ns);
    } else {
      AddHostStep(*step, ops, classes, by_op, host_gap_ns);
    }
  }
  summary.steps = static_cast<int64_t>(steps.size());
  if (!steps.empty()) {
    summary.first_step = StepNumber(*steps.front());
    summary.last_step = StepNumber(*steps.back());
  }
  classes.Add(OpClassName(OpClass::kHostGap), OpClass::kHostGap, host_gap_ns, 0, 0);
  summary.classes = classes.Take();
  std::sort(summary.classes.begin(), summary.classes.end(),
            [](const TimeRow& a, const TimeRow& b) { return a.op_class < b.op_class; });
  summary.ops = by_op.Take();
  std::stable_sort(summary.ops.begin(), summary.ops.end(),
                   [](const TimeRow& a, const TimeRow& b) { return a.seconds > b.seconds; });
  return summary;
}

namespace {

std::string RowsMarkdown(const std::vector<TimeRow>& rows, const ProfileSummary& summary,
                         absl::string_view first_column) {
  const double steps = std::max<double>(1, static_cast<double>(summary.steps));
  std::string text = absl::StrCat("| ", first_column, " | ms / step | share of step | calls / step | MB / step |\n",
                                  "|---|---:|---:|---:|---:|\n");
  for (const TimeRow& row : rows) {
    const double share = summary.step_seconds > 0 ? 100.0 * row.seconds / summary.step_seconds : 0.0;
    absl::StrAppendFormat(&text, "| %s | %.3f | %.1f%% | %.1f | %s |\n", row.name, 1e3 * row.seconds / steps,
                          share, static_cast<double>(row.calls) / steps,
                          row.bytes > 0 ? absl::StrFormat("%.2f", static_cast<double>(row.bytes) / steps / 1e6)
                                        : std::string("-"));
  }
  return text;
}

nlohmann::ordered_json RowsJson(const std::vector<TimeRow>& rows) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const TimeRow& row : rows) {
    out.push_back({{"name", row.name},
                   {"class", OpClassName(row.op_class)},
                   {"seconds", row.seconds},
                   {"calls", row.calls},
                   {"bytes", row.bytes}});
  }
  return out;
}

}  // namespace

std::string SummaryMarkdown(const ProfileSummary& summary) {
  const double ms_per_step = summary.steps > 0 ? 1e3 * summary.step_seconds / static_cast<double>(summary.steps) : 0;
  return absl::StrCat(
      absl::StrFormat("Profile of steps %d-%d (%d steps, %.3f ms a step); timing: %s\n\n", summary.first_step,
                      summary.last_step, summary.steps, ms_per_step, summary.timing),
      RowsMarkdown(summary.classes, summary, "class"), "\n", RowsMarkdown(summary.ops, summary, "op"));
}

nlohmann::ordered_json SummaryJson(const ProfileSummary& summary) {
  return {{"first_step", summary.first_step},
          {"last_step", summary.last_step},
          {"steps", summary.steps},
          {"step_seconds", summary.step_seconds},
          {"timing", summary.timing},
          {"classes", RowsJson(summary.classes)},
          {"ops", RowsJson(summary.ops)}};
}

}  // namespace xlmr::profile
