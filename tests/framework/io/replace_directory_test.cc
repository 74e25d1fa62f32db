// ReplaceDirectory: afterwards the target holds exactly the staged directory's entries, the
// staged name and every trace of the old directory are gone, and a failure leaves the target
// untouched. Runs in TEST_TMPDIR (the exchange itself needs a filesystem with
// RENAME_EXCHANGE: ext4, xfs, btrfs, tmpfs and overlayfs have it).
#include "framework/io/replace_directory.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace xlmr::io {
namespace {
namespace fs = std::filesystem;

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every path below `root`, relative to it.
std::set<std::string> Tree(const fs::path& root) {
  std::set<std::string> paths;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    paths.insert(fs::relative(entry.path(), root).string());
  }
  return paths;
}

class ReplaceDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(std::getenv("TEST_TMPDIR")) / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(root_);
    target_ = root_ / "out";
    staged_ = root_ / "out.staged";
    WriteFile(target_ / "metrics.jsonl", "old run\n");
    WriteFile(target_ / "checkpoint-30" / "trainer_state.json", "{}");
    WriteFile(staged_ / "metrics.jsonl", "new run\n");
    WriteFile(staged_ / "checkpoint-5" / "trainer_state.json", "{}");
  }

  void ExpectReplaced() {
    EXPECT_EQ(Tree(target_), (std::set<std::string>{"metrics.jsonl", "checkpoint-5", "checkpoint-5/trainer_state.json"}));
    EXPECT_EQ(ReadFile(target_ / "metrics.jsonl"), "new run\n");
    EXPECT_EQ(Tree(root_), (std::set<std::string>{"out", "out/metrics.jsonl", "out/checkpoint-5",
                                                  "out/checkpoint-5/trainer_state.json"}))
        << "the staged name or the old directory is left behind";
  }

  fs::path root_, target_, staged_;
};

TEST_F(ReplaceDirectoryTest, ExchangeLeavesOnlyTheNewDirectory) {
  ASSERT_TRUE(ReplaceDirectory(staged_, target_).ok());
  ExpectReplaced();
}

TEST_F(ReplaceDirectoryTest, TwoRenamesLeaveOnlyTheNewDirectory) {
  ASSERT_TRUE(ReplaceDirectoryByTwoRenames(staged_, target_).ok());
  ExpectReplaced();
}

TEST_F(ReplaceDirectoryTest, AMissingTargetIsCreated) {
  fs::remove_all(target_);
  ASSERT_TRUE(ReplaceDirectory(staged_, target_).ok());
  ExpectReplaced();
  fs::remove_all(target_);
  WriteFile(staged_ / "metrics.jsonl", "new run\n");
  WriteFile(staged_ / "checkpoint-5" / "trainer_state.json", "{}");
  ASSERT_TRUE(ReplaceDirectoryByTwoRenames(staged_, target_).ok());
  ExpectReplaced();
}

TEST_F(ReplaceDirectoryTest, AMissingStagedDirectoryLeavesTheTargetAlone) {
  fs::remove_all(staged_);
  for (auto replace : {&ReplaceDirectory, &ReplaceDirectoryByTwoRenames}) {
    const absl::Status status = replace(staged_, target_);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(status.message().find(staged_.string()), std::string::npos) << status;
    EXPECT_EQ(ReadFile(target_ / "metrics.jsonl"), "old run\n");
    EXPECT_TRUE(fs::exists(target_ / "checkpoint-30" / "trainer_state.json"));
  }
}

}  // namespace
}  // namespace xlmr::io
