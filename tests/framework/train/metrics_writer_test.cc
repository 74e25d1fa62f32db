// metrics.jsonl: one JSON object per line, every line on disk as soon as Write returns (a crash
// loses nothing reported), doubles that read back bit for bit, append on resume, truncate
// otherwise, and a disabled writer (ranks other than 0) that writes nothing.
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
  writer->Write({{"type", "train"}, {"step", 1}, {"loss", loss}});
  // Read while the writer is still open: the line must already be on disk (flushed).
  std::vector<std::string> lines = Lines(path);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "{\"type\":\"train\",\"step\":1,\"loss\":0.30000000000000004}");
  EXPECT_EQ(nlohmann::json::parse(lines[0])["loss"].get<double>(), loss);
  writer->Write({{"type", "eval"}, {"eval_accuracy", 0.75}});
  lines = Lines(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "{\"type\":\"eval\",\"eval_accuracy\":0.75}");
}

TEST(MetricsWriterTest, AppendsOnResumeAndTruncatesOtherwise) {
  const std::string path = TempPath("resume.jsonl");
  {
    auto first = MetricsWriter::Open(path, false, true);
    ASSERT_TRUE(first.ok());
    first->Write({{"step", 1}});
  }
  {
    auto resumed = MetricsWriter::Open(path, /*append=*/true, true);
    ASSERT_TRUE(resumed.ok());
    resumed->Write({{"step", 2}});
  }
  EXPECT_EQ(Lines(path), (std::vector<std::string>{"{\"step\":1}", "{\"step\":2}"}));
  {
    auto fresh = MetricsWriter::Open(path, /*append=*/false, true);
    ASSERT_TRUE(fresh.ok());
    fresh->Write({{"step", 1}});
  }
  EXPECT_EQ(Lines(path), (std::vector<std::string>{"{\"step\":1}"}));
}

TEST(MetricsWriterTest, DisabledWriterCreatesNothing) {
  const std::string path = TempPath("rank1.jsonl");
  auto writer = MetricsWriter::Open(path, false, /*enabled=*/false);
  ASSERT_TRUE(writer.ok());
  writer->Write({{"step", 1}});
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(MetricsWriterTest, UnwritablePathIsAnErrorNamingIt) {
  const std::string path = ::testing::TempDir() + "/no_such_dir/metrics.jsonl";
  auto writer = MetricsWriter::Open(path, false, true);
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(std::string(writer.status().message()).find(path), std::string::npos) << writer.status();
}

}  // namespace
}  // namespace xlmr::train
