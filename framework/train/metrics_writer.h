// metrics.jsonl: one JSON object per line, flushed after each line so a crash loses nothing
// that was reported. Floats are printed with 17 significant digits, so they round-trip.
// A line that cannot be written whole (a full disk, a file-size limit, an I/O error) is an
// error the caller stops the run on: a run that goes on would report steps it cannot show.
// Only rank 0 writes (other ranks get a writer that does nothing). On a resume the file is
// first cut back to what the run had written when it saved the checkpoint being resumed
// (TruncateMetricsForResume), so every step appears once.
#ifndef XLMR_FRAMEWORK_TRAIN_METRICS_WRITER_H_
#define XLMR_FRAMEWORK_TRAIN_METRICS_WRITER_H_

#include <cstdio>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace xlmr::train {

class MetricsWriter {
 public:
  // Appends to `path` when `append` (resume), else truncates. `enabled` false: a no-op writer.
  static absl::StatusOr<MetricsWriter> Open(const std::string& path, bool append, bool enabled);
  MetricsWriter(MetricsWriter&& other) noexcept
      : path_(std::move(other.path_)), file_(other.file_), started_empty_(other.started_empty_) {
    other.file_ = nullptr;
  }
  MetricsWriter& operator=(MetricsWriter&&) = delete;
  ~MetricsWriter();

  // Appends the record as one line and flushes it. DataLossError naming the file, the record
  // and the cause when the line did not reach the file whole (it may be torn: a resume cuts
  // a torn line, see TruncateMetricsForResume). No-op writer: always OK.
  absl::Status Write(const nlohmann::ordered_json& record);

  // Whether the file held nothing when opened (a new run, or a resume without earlier lines):
  // the caller then writes the run record first (run_record.h). No-op writer: false.
  bool started_empty() const { return started_empty_; }

 private:
  MetricsWriter(std::string path, std::FILE* file, bool started_empty)
      : path_(std::move(path)), file_(file), started_empty_(started_empty) {}
  std::string path_;
  std::FILE* file_;
  bool started_empty_;
};

// Before resuming from the checkpoint of `step`: cuts the file at `path` back to the records
// the run had written when it saved that checkpoint. Records are written in order (the run
// record, the train line of a step, its eval line, then its checkpoint), so the file is cut at
// the first line that is not one of those: a train line after `step`, an eval line after
// `step` (or at `step` when !`eval_at_step_precedes_checkpoint`: the last step's evaluation
// follows its checkpoint), a summary line, or a line that is not a whole JSON object (a kill
// mid-write). The resumed run then appends (after the run record the file keeps). A missing file is not an error (nothing to keep). Returns the lines dropped.
absl::StatusOr<int64_t> TruncateMetricsForResume(const std::string& path, int64_t step,
                                                 bool eval_at_step_precedes_checkpoint);

// Whether the file at `path` is what a run writes before its first checkpoint: empty, or the
// run record, train and eval records only, its last line possibly torn by a kill (a start of a
// record without its newline). A summary, another JSON line or other text is not. The output-directory rules
// start such a run again from scratch (recipes/output_dir_policy.h).
bool HoldsOnlyProgressRecords(const std::string& path);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_METRICS_WRITER_H_
