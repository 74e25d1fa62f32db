// metrics.jsonl: one JSON object per line, every line on disk as soon as Write returns (a crash
// loses nothing reported), doubles that read back bit for bit, append on resume, truncate
// otherwise, a resume cut back to its checkpoint's records (each step once), a failed write reported
// (never lost in silence), and a disabled writer (ranks other than 0) that writes nothing.
#include "framework/train/metrics_writer.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace xlmr::train {
namespace {

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string TempPath(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::filesystem::remove(path);
  return path;
}

TEST(MetricsWriterTest, WritesOneLinePerRecordVisibleAtOnceAndRoundTripsDoubles) {
  const std::string path = TempPath("metrics.jsonl");
  absl::StatusOr<MetricsWriter> writer = MetricsWriter::Open(path, /*append=*/false, /*enabled=*/true);
  ASSERT_TRUE(writer.ok()) << writer.status();
  // 0.1 + 0.2 needs 17 significant digits to read back exactly (0.30000000000000004).
  const double loss = 0.1 + 0.2;
  ASSERT_TRUE(writer->Write({{"type", "train"}, {"step", 1}, {"loss", loss}}).ok());
  // Read while the writer is still open: the line must already be on disk (flushed).
  std::vector<std::string> lines = Lines(path);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "{\"type\":\"train\",\"step\":1,\"loss\":0.30000000000000004}");
  EXPECT_EQ(nlohmann::json::parse(lines[0])["loss"].get<double>(), loss);
  ASSERT_TRUE(writer->Write({{"type", "eval"}, {"eval_accuracy", 0.75}}).ok());
  lines = Lines(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "{\"type\":\"eval\",\"eval_accuracy\":0.75}");
}

TEST(MetricsWriterTest, AppendsOnResumeAndTruncatesOtherwise) {
  const std::string path = TempPath("resume.jsonl");
  {
    auto first = MetricsWriter::Open(path, false, true);
    ASSERT_TRUE(first.ok());
    EXPECT_TRUE(first->started_empty());  // the trainer writes the run record first
    ASSERT_TRUE(first->Write({{"step", 1}}).ok());
  }
  {
    auto resumed = MetricsWriter::Open(path, /*append=*/true, true);
    ASSERT_TRUE(resumed.ok());
    EXPECT_FALSE(resumed->started_empty());  // the file keeps its run record
    ASSERT_TRUE(resumed->Write({{"step", 2}}).ok());
  }
  EXPECT_EQ(Lines(path), (std::vector<std::string>{"{\"step\":1}", "{\"step\":2}"}));
  {
    auto fresh = MetricsWriter::Open(path, /*append=*/false, true);
    ASSERT_TRUE(fresh.ok());
    EXPECT_TRUE(fresh->started_empty());
    ASSERT_TRUE(fresh->Write({{"step", 1}}).ok());
  }
  EXPECT_EQ(Lines(path), (std::vector<std::string>{"{\"step\":1}"}));
  auto resumed_into_nothing = MetricsWriter::Open(TempPath("absent_on_resume.jsonl"), /*append=*/true, true);
  ASSERT_TRUE(resumed_into_nothing.ok());
  EXPECT_TRUE(resumed_into_nothing->started_empty());
  auto disabled = MetricsWriter::Open(TempPath("disabled_start.jsonl"), false, /*enabled=*/false);
  ASSERT_TRUE(disabled.ok());
  EXPECT_FALSE(disabled->started_empty());  // other ranks write no run record
}

// A run killed after its checkpoint at step 2 had written steps 3 and 4 (and half a line):
// the resume keeps the run record, steps 1-2 and the eval at step 2, which preceded the
// checkpoint.
TEST(MetricsWriterTest, ResumeCutsTheFileBackToTheCheckpoint) {
  const std::string path = TempPath("killed.jsonl");
  std::ofstream(path) << "{\"type\":\"run\",\"cpu_gemm_core\":\"Zen\"}\n"
                      << "{\"type\":\"train\",\"step\":1}\n"
                      << "{\"type\":\"train\",\"step\":2}\n"
                      << "{\"type\":\"eval\",\"step\":2,\"eval_loss\":1.5}\n"
                      << "{\"type\":\"train\",\"step\":3}\n"
                      << "{\"type\":\"eval\",\"step\":3,\"eval_loss\":1.25}\n"
                      << "{\"type\":\"train\",\"step\":4}\n"
                      << "{\"type\":\"train\",\"st";
  absl::StatusOr<int64_t> dropped = TruncateMetricsForResume(path, /*step=*/2, true);
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_EQ(*dropped, 4);
  EXPECT_EQ(Lines(path), (std::vector<std::string>{"{\"type\":\"run\",\"cpu_gemm_core\":\"Zen\"}",
                                                   "{\"type\":\"train\",\"step\":1}",
                                                   "{\"type\":\"train\",\"step\":2}",
                                                   "{\"type\":\"eval\",\"step\":2,\"eval_loss\":1.5}"}));
  // The run record, train and eval records only: a file the output-directory rules may start
  // again from scratch (what a run killed before its first checkpoint leaves).
  EXPECT_TRUE(HoldsOnlyProgressRecords(path));
  auto resumed = MetricsWriter::Open(path, /*append=*/true, true);
  ASSERT_TRUE(resumed.ok());
  ASSERT_TRUE(resumed->Write({{"type", "train"}, {"step", 3}}).ok());
  EXPECT_EQ(Lines(path).size(), 5u);
  EXPECT_EQ(Lines(path).back(), "{\"type\":\"train\",\"step\":3}");
}

// Resuming from the last step's checkpoint (killed during the final evaluation): that
// evaluation and the summary come after the checkpoint and go; a torn last line goes too.
TEST(MetricsWriterTest, ResumeAtTheLastStepDropsTheFinalEvaluationAndSummary) {
  const std::string path = TempPath("final.jsonl");
  std::ofstream(path) << "{\"type\":\"train\",\"step\":1}\n"
                      << "{\"type\":\"eval\",\"step\":1}\n"
                      << "{\"type\":\"train\",\"step\":2}\n"
                      << "{\"type\":\"eval\",\"step\":2}\n"
                      << "{\"type\":\"summary\",\"steps\":2}\n";
  absl::StatusOr<int64_t> dropped = TruncateMetricsForResume(path, 2, /*eval_at_step_precedes_checkpoint=*/false);
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_EQ(*dropped, 2);
  EXPECT_EQ(Lines(path).size(), 3u);
  EXPECT_EQ(Lines(path).back(), "{\"type\":\"train\",\"step\":2}");
  // A line without its newline is torn, even when it parses.
  std::ofstream(path, std::ios::app) << "{\"type\":\"train\",\"step\":2}";
  dropped = TruncateMetricsForResume(path, 2, false);
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(*dropped, 1);
  EXPECT_EQ(Lines(path).size(), 3u);
  // A number a double cannot hold (1e9999) makes the line invalid JSON for nlohmann: cut there.
  std::ofstream(path, std::ios::app) << "{\"type\":\"train\",\"step\":1,\"loss\":1e9999}\n";
  dropped = TruncateMetricsForResume(path, 2, false);
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(*dropped, 1);
  // No file: nothing to keep, no error.
  EXPECT_EQ(*TruncateMetricsForResume(TempPath("absent.jsonl"), 2, false), 0);
}

TEST(MetricsWriterTest, DisabledWriterCreatesNothing) {
  const std::string path = TempPath("rank1.jsonl");
  auto writer = MetricsWriter::Open(path, false, /*enabled=*/false);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->Write({{"step", 1}}).ok());
  EXPECT_FALSE(std::filesystem::exists(path));
}

// /dev/full takes the open and fails every write with ENOSPC, as a full disk does: the line
// never reaches the file, so Write must say so (the trainer stops the run on it).
TEST(MetricsWriterTest, FailedWriteIsAnErrorNamingTheFileTheRecordAndTheCause) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  auto writer = MetricsWriter::Open("/dev/full", /*append=*/false, /*enabled=*/true);
  ASSERT_TRUE(writer.ok()) << writer.status();
  const absl::Status status = writer->Write({{"type", "train"}, {"step", 7}, {"loss", 0.5}});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(), "--metrics_file=/dev/full: writing the train record of step 7 failed: "
                              "No space left on device");
  // The next record fails the same way rather than reporting the old error or succeeding.
  const absl::Status next = writer->Write({{"type", "summary"}, {"steps", 7}});
  EXPECT_EQ(next.message(), "--metrics_file=/dev/full: writing the summary record failed: No space left on device");
}

TEST(MetricsWriterTest, WritesThatSucceedReturnOk) {
  const std::string path = TempPath("ok.jsonl");
  auto writer = MetricsWriter::Open(path, false, true);
  ASSERT_TRUE(writer.ok());
  EXPECT_TRUE(writer->Write({{"type", "train"}, {"step", 1}}).ok());
  EXPECT_TRUE(writer->Write({{"type", "train"}, {"step", 2}}).ok());
  EXPECT_EQ(Lines(path).size(), 2u);
}

TEST(MetricsWriterTest, UnwritablePathIsAnErrorNamingIt) {
  const std::string path = ::testing::TempDir() + "/no_such_dir/metrics.jsonl";
  auto writer = MetricsWriter::Open(path, false, true);
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(std::string(writer.status().message()).find(path), std::string::npos) << writer.status();
}

}  // namespace
}  // namespace xlmr::train
