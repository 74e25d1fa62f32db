#include "framework/train/step_line.h"

#include "framework/tensor/storage.h"

namespace xlmr::train {
namespace {

// The memory pool's high-water mark since the step began, or null where the device's
// allocator keeps no pool (the CPU): every byte it holds is then in peak_device_bytes.
nlohmann::ordered_json PeakReserved(Device device) {
  const int64_t bytes = AllocatorFor(device).PeakReservedBytes();
  return bytes < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(bytes);
}

// A count the step could not know (no device tracer) is null in metrics.jsonl.
nlohmann::ordered_json CountOrNull(const std::optional<int64_t>& count) {
  return count.has_value() ? nlohmann::ordered_json(*count) : nlohmann::ordered_json(nullptr);
}

}  // namespace

StepLine StartStepLine(const QueuedStepFacts& facts, Device device) {
  const MemoryStats& memory = MemoryStatsFor(device);
  StepLine line{facts.step, facts.epoch, facts.seconds, facts.step_tokens, facts.launches, {}};
  line.record = {{"type", "train"},
                 {"step", facts.step},
                 {"epoch", facts.epoch},
                 {"loss", nullptr},
                 {"lr", nullptr},
                 {"grad_norm", nullptr},
                 {"loss_scale", nullptr},
                 {"skipped", nullptr},
                 {"micro_steps", nullptr},
                 {"examples", facts.examples_seen},
                 {"tokens", facts.tokens_seen},
                 {"allreduce_calls", facts.allreduce_calls},
                 {"tokens_per_second", nullptr},
                 {"step_seconds", nullptr},
                 {"kernel_launches", nullptr},
                 {"host_waits", nullptr},
                 {"peak_activation_bytes", memory.Of(MemoryCategory::kActivations).peak},
                 {"optimizer_bytes", memory.Of(MemoryCategory::kOptimizer).current},
                 {"peak_device_bytes", memory.peak_total()},
                 {"peak_reserved_bytes", PeakReserved(device)},
                 {"elapsed_seconds", nullptr}};
  return line;
}

void CompleteStepLine(StepLine& line, const StepOutcome& outcome, double read_seconds,
                      const profile::LaunchCounts& read_launches, double elapsed_seconds) {
  line.seconds += read_seconds;
  line.launches = profile::LaunchesPlus(line.launches, read_launches);
  nlohmann::ordered_json& record = line.record;
  record["loss"] = outcome.loss;
  record["lr"] = outcome.learning_rate;
  record["grad_norm"] = outcome.grad_norm.has_value() ? nlohmann::ordered_json(*outcome.grad_norm)
                                                      : nlohmann::ordered_json(nullptr);
  record["loss_scale"] = outcome.loss_scale;
  record["skipped"] = outcome.skipped;
  record["micro_steps"] = outcome.micro_steps;
  record["tokens_per_second"] =
      line.seconds > 0 ? static_cast<double>(line.tokens) / line.seconds : 0.0;
  record["step_seconds"] = line.seconds;
  record["kernel_launches"] = CountOrNull(line.launches.kernel_launches);
  record["host_waits"] = CountOrNull(line.launches.host_waits);
  record["elapsed_seconds"] = elapsed_seconds;
}

}  // namespace xlmr::train
