// The output-directory rules of recipes/output_dir_policy.h on directories built in
// TEST_TMPDIR: each rule, the choice of the last VALID checkpoint (complete, and its files
// matching its manifest), a run killed before its first checkpoint, the finished-run test, what
// --overwrite_output_dir refuses, and that deciding writes nothing.
#include "recipes/output_dir_policy.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "framework/distributed/local_communicator.h"
#include "framework/io/file_manifest.h"
#include "gtest/gtest.h"

namespace xlmr::recipes {
namespace {
namespace fs = std::filesystem;

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A checkpoint-<step> as SaveTrainingCheckpoint leaves it (the tensors' bytes do not matter
// here: only the resume reads them).
void WriteCheckpoint(const fs::path& dir, int64_t step) {
  const fs::path checkpoint = dir / ("checkpoint-" + std::to_string(step));
  WriteFile(checkpoint / "config.json", "{}");
  WriteFile(checkpoint / "model.safetensors", "weights");
  WriteFile(checkpoint / "optimizer.safetensors", "moments");
  WriteFile(checkpoint / "trainer_state.json",
            R"({"global_step": )" + std::to_string(step) + R"(, "epoch": 0, "step_in_epoch": 0,
                "optimizer_steps": 0, "loss_scale": 1, "loss_scale_growth_tracker": 0, "skipped_steps": 0,
                "examples_seen": 0, "tokens_seen": 0, "allreduce_calls": 0, "train_seconds": 0, "seed": 42,
                "global_batch_size": 8, "train_examples": 80})");
}

class OutputDirPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(std::getenv("TEST_TMPDIR")) / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(root_);
    fs::create_directories(root_);
    dir_ = (root_ / "out").string();
    request_.output_dir = dir_;
    request_.working_directory = root_.string();
  }

  absl::StatusOr<OutputDirPlan> Decide() { return DecideOutputDir(request_); }

  fs::path root_;
  std::string dir_;
  OutputDirRequest request_;
};

TEST_F(OutputDirPolicyTest, MissingOrEmptyDirectoryStartsInPlace) {
  for (bool overwrite : {false, true}) {
    request_.overwrite_output_dir = overwrite;
    fs::remove_all(dir_);
    EXPECT_EQ(Decide()->action, OutputDirAction::kWriteInPlace);
    fs::create_directories(dir_);
    EXPECT_EQ(Decide()->action, OutputDirAction::kWriteInPlace);
  }
}

TEST_F(OutputDirPolicyTest, ResumesFromTheLastValidCheckpoint) {
  WriteCheckpoint(dir_, 8);
  WriteCheckpoint(dir_, 16);
  WriteCheckpoint(dir_, 24);
  fs::remove(dir_ + "/checkpoint-24/optimizer.safetensors");  // damaged: passed over
  WriteCheckpoint(dir_, 100);
  WriteFile(dir_ + "/checkpoint-100/trainer_state.json", R"({"global_step": 100)");  // truncated
  WriteFile(dir_ + "/checkpoint-200.tmp-4242/config.json", "{}");  // a checkpoint being written when killed
  WriteFile(dir_ + "/metrics.jsonl", "{}\n");
  const absl::StatusOr<OutputDirPlan> plan = Decide();
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->action, OutputDirAction::kResume);
  EXPECT_EQ(plan->checkpoint, dir_ + "/checkpoint-16");
  EXPECT_EQ(plan->checkpoint_step, 16);
  EXPECT_FALSE(plan->finished);
  ASSERT_EQ(plan->lines.size(), 3u);
  EXPECT_EQ(plan->lines[0].rfind("Passing over " + dir_ + "/checkpoint-100: ", 0), 0u) << plan->lines[0];
  EXPECT_NE(plan->lines[0].find("checkpoint-100/trainer_state.json"), std::string::npos) << plan->lines[0];
  EXPECT_NE(plan->lines[1].find("checkpoint-24/optimizer.safetensors"), std::string::npos) << plan->lines[1];
  // Written without a manifest (as before manifests existed): used, and said to be unverified.
  EXPECT_EQ(plan->lines[2], dir_ + "/checkpoint-16 has no manifest.json (written before checksums were recorded): "
                                   "its files could not be verified");
  const OutputDirStart start = DescribeStart(*plan, dir_, 32);
  EXPECT_FALSE(start.nothing_left_to_do);
  ASSERT_EQ(start.lines.size(), 4u);
  EXPECT_EQ(start.lines[3], "Checkpoint detected, resuming training at " + dir_ +
                                "/checkpoint-16 (step 16 of 32). To train from scratch instead, pass "
                                "--overwrite_output_dir.");
}

void Seal(const std::string& checkpoint) {
  ASSERT_TRUE(io::WriteManifest(checkpoint, {"config.json", "model.safetensors", "optimizer.safetensors",
                                             "trainer_state.json"}).ok());
}

// A checkpoint whose bytes no longer match its manifest is passed over, naming the file; when
// it is the only one, the run stops (exit 2) naming it rather than training on corrupt state
// or starting again over a run that did reach a checkpoint.
TEST_F(OutputDirPolicyTest, ACheckpointWhoseBytesChangedIsPassedOverOrStops) {
  WriteCheckpoint(dir_, 8);
  Seal(dir_ + "/checkpoint-8");
  WriteCheckpoint(dir_, 16);
  Seal(dir_ + "/checkpoint-16");
  WriteFile(dir_ + "/checkpoint-16/model.safetensors", "weightz");  // same size, other bytes
  WriteFile(dir_ + "/metrics.jsonl", "");
  absl::StatusOr<OutputDirPlan> plan = Decide();
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->checkpoint, dir_ + "/checkpoint-8");
  ASSERT_EQ(plan->lines.size(), 1u);
  EXPECT_EQ(plan->lines[0].rfind("Passing over " + dir_ + "/checkpoint-16: " + dir_ +
                                     "/checkpoint-16/model.safetensors: CRC32C 0x", 0), 0u) << plan->lines[0];
  fs::remove_all(dir_ + "/checkpoint-8");
  plan = Decide();
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << plan.status();
  EXPECT_NE(plan.status().message().find("holds no valid checkpoint-<step> to resume from (Passing over " + dir_ +
                                         "/checkpoint-16: " + dir_ + "/checkpoint-16/model.safetensors: CRC32C"),
            std::string::npos) << plan.status();
}

// A job killed before its first checkpoint left its metrics.jsonl (progress records, the last
// torn) and perhaps a checkpoint being written: the same command starts again from scratch.
// Anything else beside them, or a metrics file that is not a run's progress, still stops.
TEST_F(OutputDirPolicyTest, ARunKilledBeforeItsFirstCheckpointStartsAgain) {
  const std::string progress = R"({"type":"train","step":1,"loss":2.5})" "\n"
                               R"({"type":"eval","step":1,"eval_loss":2.4})" "\n" R"({"type":"tr)";
  for (const std::string& metrics : {std::string(""), progress}) {
    WriteFile(dir_ + "/metrics.jsonl", metrics);
    WriteFile(dir_ + "/checkpoint-2.tmp-77/config.json", "{}");
    const absl::StatusOr<OutputDirPlan> plan = Decide();
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->action, OutputDirAction::kWriteInPlace);
    ASSERT_EQ(plan->lines.size(), 1u);
    EXPECT_EQ(plan->lines[0], "--output_dir=" + dir_ + " holds only what a run writes before its first checkpoint "
                              "(checkpoint-2.tmp-77, metrics.jsonl): that run never reached a checkpoint; starting "
                              "it again from scratch");
    EXPECT_EQ(DescribeStart(*plan, dir_, 40).lines, plan->lines);
  }
  for (const std::string& not_progress : {std::string("{}\n"), progress + "\n{\"type\":\"summary\"}\n",
                                          std::string("hello")}) {
    WriteFile(dir_ + "/metrics.jsonl", not_progress);
    EXPECT_EQ(Decide().status().code(), absl::StatusCode::kInvalidArgument) << not_progress;
  }
  WriteFile(dir_ + "/metrics.jsonl", progress);
  WriteFile(dir_ + "/notes.txt", "mine");
  const absl::StatusOr<OutputDirPlan> plan = Decide();
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("--overwrite_output_dir"), std::string::npos) << plan.status();
}

TEST_F(OutputDirPolicyTest, AStateFileOfAnotherStepIsNotValid) {
  WriteCheckpoint(dir_, 8);
  fs::rename(dir_ + "/checkpoint-8", dir_ + "/checkpoint-9");
  const absl::StatusOr<OutputDirPlan> plan = Decide();
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("global_step is 8, the directory says 9"), std::string::npos)
      << plan.status();
}

TEST_F(OutputDirPolicyTest, AFinishedRunHasNothingLeftToDoUnlessItMustGoFurther) {
  WriteCheckpoint(dir_, 16);
  Seal(dir_ + "/checkpoint-16");
  WriteFile(dir_ + "/eval_results.json", R"({"step": 16, "epoch": 2.0})");
  const absl::StatusOr<OutputDirPlan> plan = Decide();
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->finished);
  const OutputDirStart done = DescribeStart(*plan, dir_, 16);
  EXPECT_TRUE(done.nothing_left_to_do);
  ASSERT_EQ(done.lines.size(), 1u);
  EXPECT_NE(done.lines[0].find("nothing left to do"), std::string::npos) << done.lines[0];
  // The same command with more steps continues from there, as Hugging Face does.
  EXPECT_FALSE(DescribeStart(*plan, dir_, 20).nothing_left_to_do);
  // A final model of an earlier step (killed after its last checkpoint) is not the end.
  WriteFile(dir_ + "/eval_results.json", R"({"step": 8, "epoch": 1.0})");
  EXPECT_FALSE(Decide()->finished);
  fs::remove(dir_ + "/eval_results.json");
  EXPECT_FALSE(Decide()->finished);
}

TEST_F(OutputDirPolicyTest, ANonEmptyDirectoryWithoutCheckpointStopsAndNamesBothFlags) {
  WriteFile(dir_ + "/metrics.jsonl", "{}\n");
  WriteFile(dir_ + "/checkpoint-4.tmp-77/config.json", "{}");  // never completed
  const absl::StatusOr<OutputDirPlan> plan = Decide();
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(plan.status().message());
  EXPECT_NE(message.find("--output_dir=" + dir_ + " is not empty"), std::string::npos) << message;
  EXPECT_NE(message.find("--overwrite_output_dir"), std::string::npos) << message;
  EXPECT_NE(message.find("--resume_from_checkpoint"), std::string::npos) << message;
  // An explicit --resume_from_checkpoint keeps its meaning: write in place.
  request_.resume_from_checkpoint_given = true;
  EXPECT_EQ(Decide()->action, OutputDirAction::kWriteInPlace);
  // --print_memory_plan writes nothing, so it does not look.
  request_.resume_from_checkpoint_given = false;
  request_.writes_nothing = true;
  EXPECT_EQ(Decide()->action, OutputDirAction::kWriteInPlace);
}

TEST_F(OutputDirPolicyTest, AFileIsNotAnOutputDirectory) {
  WriteFile(dir_, "text");
  for (bool overwrite : {false, true}) {
    request_.overwrite_output_dir = overwrite;
    EXPECT_EQ(Decide().status(),
              absl::InvalidArgumentError("--output_dir=" + dir_ + ": exists and is not a directory"));
  }
}

TEST_F(OutputDirPolicyTest, OverwriteStagesBesideTheDirectory) {
  WriteCheckpoint(dir_, 8);
  WriteFile(dir_ + "/metrics.jsonl", "{}\n");
  WriteFile(dir_ + "/checkpoint-9.tmp-12/config.json", "{}");
  request_.overwrite_output_dir = true;
  request_.output_dir = dir_ + "/";  // a trailing slash names the same directory
  absl::StatusOr<OutputDirPlan> plan = Decide();
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->action, OutputDirAction::kReplace);
  EXPECT_EQ(plan->staging_dir, dir_ + ".overwriting");
  // With --resume_from_checkpoint too: still a replacement (the checkpoint is read first).
  request_.resume_from_checkpoint_given = true;
  EXPECT_EQ(Decide()->action, OutputDirAction::kReplace);
  EXPECT_FALSE(fs::exists(dir_ + ".overwriting")) << "deciding must write nothing";
}

TEST_F(OutputDirPolicyTest, OverwriteRefusesToDeleteWhatNoRunWrote) {
  WriteCheckpoint(dir_, 8);
  WriteFile(dir_ + "/notes.txt", "mine");
  request_.overwrite_output_dir = true;
  absl::StatusOr<OutputDirPlan> plan = Decide();
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find(dir_ + "/notes.txt was not written by xlmr_finetune"), std::string::npos)
      << plan.status();
  fs::remove(dir_ + "/notes.txt");
  // The working directory inside the output directory (e.g. --output_dir=.).
  fs::create_directories(dir_ + "/checkpoint-8/sub");
  request_.working_directory = dir_ + "/checkpoint-8/sub";
  plan = Decide();
  EXPECT_NE(plan.status().message().find("contains the working directory"), std::string::npos) << plan.status();
  request_.working_directory = root_.string();
  fs::create_directory_symlink(dir_, root_ / "link");
  request_.output_dir = (root_ / "link").string();
  plan = Decide();
  EXPECT_NE(plan.status().message().find("is a symbolic link"), std::string::npos) << plan.status();
}

TEST_F(OutputDirPolicyTest, RunOutputNames) {
  for (const char* name : {"config.json", "model.safetensors", "sentencepiece.bpe.model", "metrics.jsonl",
                           "eval_results.json", "manifest.json", "checkpoint-12", "checkpoint-12.tmp-345",
                           "eval_predictions.json", "eval_nbest_predictions.json", "eval_null_odds.json",
                           "predict_predictions.json", "predict_nbest_predictions.json", "predict_null_odds.json",
                           "eval_predictions.json.tmp"}) {
    EXPECT_TRUE(IsRunOutput(name)) << name;
  }
  for (const char* name : {"notes.txt", "checkpoint-", "checkpoint-x", "checkpoint-12.tmp-", "checkpoint-1.bak",
                           "predictions.jsonl", ".hidden", "predictions.json", "test_predictions.json",
                           "eval_predictions.json.bak"}) {
    EXPECT_FALSE(IsRunOutput(name)) << name;
  }
}

TEST_F(OutputDirPolicyTest, OneRankAgreesWithItself) {
  WriteCheckpoint(dir_, 8);
  distributed::LocalCommunicator comm;
  const absl::StatusOr<OutputDirPlan> plan = AgreeOnOutputDir(comm, request_);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->checkpoint, dir_ + "/checkpoint-8");
  WriteFile(dir_ + "/notes.txt", "mine");
  fs::remove_all(dir_ + "/checkpoint-8");
  EXPECT_EQ(AgreeOnOutputDir(comm, request_).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace xlmr::recipes
