// metrics.jsonl's "train" line of one optimizer step (docs/CONTRACT.md, "metrics.jsonl"). The
// trainer reads a step's outcome (loss, skip, norm, scale) a step or two after queuing it, so
// that nothing in a step waits for the device (framework/train/train_step.h): StartStepLine
// takes what the host knows when the step is queued (its counters, the memory peaks of its
// queuing), CompleteStepLine adds the outcome once read. The fields and their order are
// metrics.jsonl's, whichever step is queued in between.
#ifndef XLMR_FRAMEWORK_TRAIN_STEP_LINE_H_
#define XLMR_FRAMEWORK_TRAIN_STEP_LINE_H_

#include <cstdint>

#include "framework/core/device.h"
#include "framework/profile/profiler.h"
#include "framework/train/train_step.h"
#include "nlohmann/json.hpp"

namespace xlmr::train {

struct StepLine {
  int64_t step = 0;    // 1-based, as metrics.jsonl numbers steps
  double epoch = 0;    // after the step
  double seconds = 0;  // queuing the step plus reading its outcome
  int64_t tokens = 0;  // of the global batch
  profile::LaunchCounts launches;  // of its queuing plus its reading
  nlohmann::ordered_json record;   // the line; the outcome's fields null until completed
};

// What the host knows right after queuing a step (step_seconds and launches: of the queuing).
struct QueuedStepFacts {
  int64_t step = 0;
  double epoch = 0;
  int64_t examples_seen = 0;
  int64_t tokens_seen = 0;
  int64_t allreduce_calls = 0;
  int64_t step_tokens = 0;
  double seconds = 0;
  profile::LaunchCounts launches;
};

// The line of a step just queued on `device`, with the device's memory peaks since they were
// last reset (the step's start).
StepLine StartStepLine(const QueuedStepFacts& facts, Device device);

// Fills the outcome, adds the reading's time and launches, and the run's elapsed seconds.
void CompleteStepLine(StepLine& line, const StepOutcome& outcome, double read_seconds,
                      const profile::LaunchCounts& read_launches, double elapsed_seconds);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_STEP_LINE_H_
