// The per-class table of a profile (--profile_steps' op_classes.md and op_classes.json): where
// the recorded steps' time went, by op class (op_class.h) and by op.
//
// On the CPU an op's time is its wall-clock time on the step's thread less the ops nested in it
// (a copy inside an op counts once, as a copy), and host_gap is the part of the step no op
// covers (the loop, the data, Python-free but not free). The classes add up to the steps' time.
// With device events (CUDA) a class's time is its kernels' and copies' device time inside the
// steps, its calls the kernels launched, and host_gap the part of the step where the device ran
// nothing: time lost to launches and host waits. Work on overlapping streams (communication)
// can make the classes add up to more than the step.
#ifndef XLMR_FRAMEWORK_PROFILE_PROFILE_SUMMARY_H_
#define XLMR_FRAMEWORK_PROFILE_PROFILE_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "framework/profile/op_class.h"
#include "framework/profile/profiler.h"
#include "nlohmann/json.hpp"

namespace xlmr::profile {

struct TimeRow {
  std::string name;  // the class's name (OpClassName) or the op's ("ops::Linear")
  OpClass op_class = OpClass::kOther;
  double seconds = 0;  // over all recorded steps
  int64_t calls = 0;   // op calls (CPU) or kernels and copies (device)
  int64_t bytes = 0;   // where known (copies, collectives)
};

struct ProfileSummary {
  int64_t steps = 0;
  int64_t first_step = 0;  // the numbers in the steps' names ("step 5" .. "step 7")
  int64_t last_step = 0;
  double step_seconds = 0;  // the recorded steps' wall-clock time, summed
  std::string timing;       // "wall clock per op (CPU)" or the device tracer's description
  std::vector<TimeRow> classes;  // every class with time or calls, in OpClass order
  std::vector<TimeRow> ops;      // by op, most time first (host_gap not included)
};

ProfileSummary Summarize(const Recording& recording);

// The tables as Markdown: a heading line, the per-class table (ms a step, share of the step,
// calls a step, MB a step), then the ops.
std::string SummaryMarkdown(const ProfileSummary& summary);
nlohmann::ordered_json SummaryJson(const ProfileSummary& summary);

}  // namespace xlmr::profile

#endif  // XLMR_FRAMEWORK_PROFILE_PROFILE_SUMMARY_H_
