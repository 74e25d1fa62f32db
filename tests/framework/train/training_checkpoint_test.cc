// Training checkpoints (framework/train/training_checkpoint.h): every field of the trainer
// state and every bit of the AdamW moments read back as written; "latest" is the highest step
// by number (checkpoint-10 after checkpoint-9, which a sort by name gets wrong); pruning keeps
// the newest save_total_limit and never the best checkpoint; a failed save leaves no directory under a valid name; and a
// resume that changes the seed, the global batch or the data is refused naming the setting.
// Tolerance: none; a checkpoint is exact or it is wrong.
#include "framework/train/training_checkpoint.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace xlmr::train {
namespace {
namespace fs = std::filesystem;

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Writes markers where the model and its config would go, and names them.
absl::StatusOr<std::vector<std::string>> FakeSaveModel(const std::string& directory) {
  std::ofstream(directory + "/model.safetensors") << "weights";
  std::ofstream(directory + "/config.json") << "{}";
  return std::vector<std::string>{"model.safetensors", "config.json"};
}

TrainingState SampleState(int64_t step) {
  TrainingState s;
  s.global_step = step;
  s.epoch = 2;
  s.step_in_epoch = 3;
  s.optimizer_steps = step - 4;  // four skipped fp16 steps
  s.loss_scale = 0.1 + 0.2;      // needs all 17 digits to round-trip
  s.loss_scale_growth_tracker = 5;
  s.skipped_steps = 4;
  s.examples_seen = 1234567890123;
  s.tokens_seen = 9876543210987;
  s.allreduce_calls = 77;
  s.train_seconds = 12.345678901234567;
  s.seed = 18446744073709551557ull;  // above INT64_MAX: must stay unsigned
  s.global_batch_size = 32;
  s.train_examples = 4000;
  return s;
}

Tensor Moments(const std::vector<float>& values) {
  Tensor t = Tensor::Zeros({static_cast<int64_t>(values.size())}, DType::kF32);
  t.CopyFromFloats(values);
  return t;
}

TEST(TrainingCheckpointTest, SaveThenLoadRestoresEveryFieldAndEveryBit) {
  const std::string out = FreshDir("ckpt_roundtrip");
  const std::vector<float> m = {1e-30f, -0.0f, 3.5f, -7.25e10f};
  const std::vector<float> v = {0.0f, 1e-40f /* subnormal */, 2.0f, 1e30f};
  ASSERT_TRUE(SaveTrainingCheckpoint(out, SampleState(21), Moments(m), Moments(v), FakeSaveModel, 0).ok());
  const std::string dir = out + "/checkpoint-21";
  EXPECT_TRUE(fs::exists(dir + "/model.safetensors"));
  EXPECT_TRUE(fs::exists(dir + "/optimizer.safetensors"));
  EXPECT_EQ(ListCheckpoints(out).size(), 1u);  // no temporary directory left behind
  for (const auto& entry : fs::directory_iterator(out)) {
    EXPECT_EQ(entry.path().filename().string(), "checkpoint-21");
  }

  absl::StatusOr<LoadedCheckpoint> loaded = LoadTrainingCheckpoint(dir, 4);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const TrainingState want = SampleState(21);
  const TrainingState& got = loaded->state;
  EXPECT_EQ(got.global_step, want.global_step);
  EXPECT_EQ(got.epoch, want.epoch);
  EXPECT_EQ(got.step_in_epoch, want.step_in_epoch);
  EXPECT_EQ(got.optimizer_steps, want.optimizer_steps);
  EXPECT_EQ(got.loss_scale, want.loss_scale);
  EXPECT_EQ(got.loss_scale_growth_tracker, want.loss_scale_growth_tracker);
  EXPECT_EQ(got.skipped_steps, want.skipped_steps);
  EXPECT_EQ(got.examples_seen, want.examples_seen);
  EXPECT_EQ(got.tokens_seen, want.tokens_seen);
  EXPECT_EQ(got.allreduce_calls, want.allreduce_calls);
  EXPECT_EQ(got.train_seconds, want.train_seconds);
  EXPECT_EQ(got.seed, want.seed);
  EXPECT_EQ(got.global_batch_size, want.global_batch_size);
  EXPECT_EQ(got.train_examples, want.train_examples);
  const std::vector<float> got_m = loaded->exp_avg.ToFloatVector();
  const std::vector<float> got_v = loaded->exp_avg_sq.ToFloatVector();
  ASSERT_EQ(got_m.size(), m.size());
  ASSERT_EQ(got_v.size(), v.size());
  for (size_t i = 0; i < m.size(); ++i) {
    EXPECT_EQ(std::signbit(got_m[i]), std::signbit(m[i])) << i;
    EXPECT_EQ(got_m[i], m[i]) << i;
    EXPECT_EQ(got_v[i], v[i]) << i;
  }

  // Moments of another size than the model's: an error naming the file and both counts.
  absl::StatusOr<LoadedCheckpoint> wrong = LoadTrainingCheckpoint(dir, 5);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(std::string(wrong.status().message()).find("moments have 4 elements, the model has 5"),
            std::string::npos)
      << wrong.status();
}

// trainer_state.json's counters must be JSON integers that fit: a float, however large (the
// fuzzer's "global_step": 4.27e85 was cast to int64, undefined behaviour), a fraction, a
// negative seed or a count above int64 is one error naming the field, never a value.
TEST(TrainingCheckpointTest, CountersMustBeIntegersInRange) {
  const std::string out = FreshDir("ckpt_integers");
  ASSERT_TRUE(SaveTrainingCheckpoint(out, SampleState(3), Moments({1, 2, 3, 4}), Moments({1, 2, 3, 4}),
                                     FakeSaveModel, 0).ok());
  const std::string state_path = out + "/checkpoint-3/trainer_state.json";
  std::ifstream in(state_path);
  const nlohmann::json original = nlohmann::json::parse(in);
  for (const auto& [field, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"global_step", 4.27e85}, {"global_step", 3.5}, {"epoch", "1"},
           {"tokens_seen", 18446744073709551615ull}, {"seed", -1}}) {
    nlohmann::json edited = original;
    edited[field] = value;
    std::ofstream(state_path) << edited.dump();
    absl::StatusOr<LoadedCheckpoint> loaded = LoadTrainingCheckpoint(out + "/checkpoint-3", 4);
    ASSERT_FALSE(loaded.ok()) << field << " = " << value.dump();
    EXPECT_NE(std::string(loaded.status().message()).find(field), std::string::npos) << loaded.status();
  }
  std::ofstream(state_path) << original.dump();
  EXPECT_TRUE(LoadTrainingCheckpoint(out + "/checkpoint-3", 4).ok());
}

TEST(TrainingCheckpointTest, LatestIsTheHighestStepAndPruningKeepsTheNewest) {
  const std::string out = FreshDir("ckpt_latest");
  const Tensor zeros = Moments({0.0f});
  for (int64_t step : {8, 9, 10}) {
    ASSERT_TRUE(SaveTrainingCheckpoint(out, SampleState(step), zeros, zeros, FakeSaveModel,
                                       /*save_total_limit=*/0).ok());
  }
  absl::StatusOr<ResumePoint> latest = ResolveCheckpoint("latest", out);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->directory, out + "/checkpoint-10");
  EXPECT_TRUE(latest->lines.empty());
  // An explicit path is taken as given.
  EXPECT_EQ(ResolveCheckpoint(out + "/checkpoint-9", out)->directory, out + "/checkpoint-9");
  // Saving step 11 with a limit of 2 leaves 10 and 11.
  ASSERT_TRUE(SaveTrainingCheckpoint(out, SampleState(11), zeros, zeros, FakeSaveModel, 2).ok());
  const std::vector<std::pair<int64_t, std::string>> left = ListCheckpoints(out);
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].first, 10);
  EXPECT_EQ(left[1].first, 11);
}

// Trainer._rotate_checkpoints with a best checkpoint: it is never deleted and counts towards
// the limit (limit 3: the best and the 2 newest); with a limit of 1 the best and the newest
// both stay while they differ, and once the newest is the best, it alone. Catches a pruning
// that deletes the best (the oldest here) or ignores it in the count.
TEST(TrainingCheckpointTest, PruningNeverDeletesTheBest) {
  const std::string out = FreshDir("ckpt_best");
  const Tensor zeros = Moments({0.0f});
  auto save = [&](int64_t step, int64_t best, int limit) {
    TrainingState state = SampleState(step);
    state.best_global_step = best;
    state.best_model_checkpoint = absl::StrCat("elsewhere/checkpoint-", best);  // matched by name
    ASSERT_TRUE(SaveTrainingCheckpoint(out, state, zeros, zeros, FakeSaveModel, limit).ok());
  };
  auto steps = [&] {
    std::vector<int64_t> left;
    for (const auto& [step, dir] : ListCheckpoints(out)) left.push_back(step);
    return left;
  };
  for (int64_t step : {10, 20, 30, 40}) save(step, 10, 3);
  EXPECT_EQ(steps(), (std::vector<int64_t>{10, 30, 40}));
  save(50, 10, 1);
  EXPECT_EQ(steps(), (std::vector<int64_t>{10, 50}));
  save(60, 60, 1);
  EXPECT_EQ(steps(), (std::vector<int64_t>{60}));
}

// best_metric, best_global_step, best_model_checkpoint and the early-stopping count survive a
// save and a load (a resumed run keeps the same best); a state with no best yet (nulls) reads
// back as none.
TEST(TrainingCheckpointTest, BestFieldsRoundTrip) {
  const std::string out = FreshDir("ckpt_best_fields");
  const Tensor zeros = Moments({0.0f});
  TrainingState state = SampleState(7);
  state.best_metric = 0.1 + 0.2;
  state.best_global_step = 5;
  state.best_model_checkpoint = "out/checkpoint-5";
  state.early_stopping_patience_counter = 2;
  ASSERT_TRUE(SaveTrainingCheckpoint(out, state, zeros, zeros, FakeSaveModel, 0).ok());
  absl::StatusOr<LoadedCheckpoint> loaded = LoadTrainingCheckpoint(out + "/checkpoint-7", 1);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(loaded->state.best_metric.has_value());
  EXPECT_EQ(*loaded->state.best_metric, 0.1 + 0.2);
  EXPECT_EQ(loaded->state.best_global_step, 5);
  EXPECT_EQ(loaded->state.best_model_checkpoint, "out/checkpoint-5");
  EXPECT_EQ(loaded->state.early_stopping_patience_counter, 2);
  ASSERT_TRUE(SaveTrainingCheckpoint(out, SampleState(8), zeros, zeros, FakeSaveModel, 0).ok());
  loaded = LoadTrainingCheckpoint(out + "/checkpoint-8", 1);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_FALSE(loaded->state.best_metric.has_value());
  EXPECT_EQ(loaded->state.best_global_step, -1);
  EXPECT_TRUE(loaded->state.best_model_checkpoint.empty());
}

void FlipFirstBit(const std::string& path) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  char byte = 0;
  file.read(&byte, 1);
  byte = static_cast<char>(byte ^ 1);
  file.seekp(0);
  file.write(&byte, 1);
}

// The manifest covers every file of the checkpoint (whatever SaveModelFn wrote too), so a
// checkpoint verifies as written, and a changed byte in any file is found.
TEST(TrainingCheckpointTest, TheManifestCoversEveryFile) {
  const std::string out = FreshDir("ckpt_manifest");
  const Tensor zeros = Moments({0.0f, 1.0f});
  ASSERT_TRUE(SaveTrainingCheckpoint(out, SampleState(6), zeros, zeros, FakeSaveModel, 0).ok());
  const std::string dir = out + "/checkpoint-6";
  const absl::StatusOr<io::ManifestCheck> check = VerifyCheckpoint(dir, 6);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(*check, io::ManifestCheck::kVerified);
  std::ifstream in(dir + "/manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(in);
  std::set<std::string> listed, present;
  for (const nlohmann::json& entry : manifest["files"]) listed.insert(entry["name"].get<std::string>());
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) present.insert(entry.path().filename().string());
  present.erase("manifest.json");
  EXPECT_EQ(listed, present);
  for (const std::string& name : present) {
    const std::string copy = FreshDir("ckpt_manifest_" + name) + "/checkpoint-6";
    fs::copy(dir, copy);
    FlipFirstBit(copy + "/" + name);
    const absl::StatusOr<io::ManifestCheck> flipped = VerifyCheckpoint(copy, 6);
    ASSERT_FALSE(flipped.ok()) << name;
    EXPECT_NE(flipped.status().message().find(copy + "/" + name + ": CRC32C"), std::string::npos) << flipped.status();
  }
}

// "latest" and the rerun rules pass over a damaged checkpoint to the one before, with a line
// naming the file; a checkpoint named explicitly is refused instead; one without a manifest
// (written before manifests) is used with a line saying it could not be verified.
TEST(TrainingCheckpointTest, DamagedCheckpointsArePassedOverOrRefused) {
  const std::string out = FreshDir("ckpt_damaged");
  const Tensor zeros = Moments({0.0f});
  for (int64_t step : {4, 8}) ASSERT_TRUE(SaveTrainingCheckpoint(out, SampleState(step), zeros, zeros, FakeSaveModel, 0).ok());
  FlipFirstBit(out + "/checkpoint-8/optimizer.safetensors");
  absl::StatusOr<ResumePoint> latest = ResolveCheckpoint("latest", out);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->directory, out + "/checkpoint-4");
  EXPECT_EQ(latest->step, 4);
  ASSERT_EQ(latest->lines.size(), 1u);
  EXPECT_EQ(latest->lines[0].rfind("Passing over " + out + "/checkpoint-8: " + out +
                                       "/checkpoint-8/optimizer.safetensors: CRC32C 0x", 0), 0u) << latest->lines[0];
  const absl::StatusOr<ResumePoint> named = ResolveCheckpoint(out + "/checkpoint-8", out);
  ASSERT_FALSE(named.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(named.status()));
  EXPECT_EQ(named.status().message().rfind("--resume_from_checkpoint=" + out + "/checkpoint-8: " + out +
                                               "/checkpoint-8/optimizer.safetensors: CRC32C", 0), 0u) << named.status();
  // Nothing valid left: "latest" stops, naming what it passed over.
  FlipFirstBit(out + "/checkpoint-4/model.safetensors");
  EXPECT_TRUE(absl::IsNotFound(ResolveCheckpoint("latest", out).status()));
  EXPECT_TRUE(FindLastValidCheckpoint(out).directory.empty());
  fs::remove(out + "/checkpoint-4/manifest.json");
  const ResumePoint legacy = FindLastValidCheckpoint(out);
  EXPECT_EQ(legacy.directory, out + "/checkpoint-4");
  ASSERT_EQ(legacy.lines.size(), 2u);
  EXPECT_EQ(legacy.lines[1], out + "/checkpoint-4 has no manifest.json (written before checksums were recorded): "
                                   "its files could not be verified");
}

TEST(TrainingCheckpointTest, ResolveNamesWhatIsMissing) {
  const std::string out = FreshDir("ckpt_none");
  absl::StatusOr<ResumePoint> none = ResolveCheckpoint("latest", out);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(std::string(none.status().message()).find("no valid checkpoint-<step> in " + out), std::string::npos);
  absl::StatusOr<ResumePoint> not_one = ResolveCheckpoint(out, out);
  ASSERT_FALSE(not_one.ok());
  EXPECT_NE(std::string(not_one.status().message()).find("is not a training checkpoint"), std::string::npos);
}

TEST(TrainingCheckpointTest, AFailedSaveLeavesNoCheckpoint) {
  const std::string out = FreshDir("ckpt_failed");
  const Tensor zeros = Moments({0.0f});
  auto failing = [](const std::string&) -> absl::StatusOr<std::vector<std::string>> {
    return absl::DataLossError("disk full");
  };
  absl::Status status = SaveTrainingCheckpoint(out, SampleState(5), zeros, zeros, failing, 0);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(fs::is_empty(out)) << "a failed save left something in " << out;
}

// A save that fails after the earlier checkpoints were written (disk full while writing the
// moments) keeps them all, unpruned, and says which one a resume will use.
TEST(TrainingCheckpointTest, AFailedSaveKeepsTheEarlierCheckpointsAndNamesTheLast) {
  const std::string out = FreshDir("ckpt_failed_later");
  const Tensor zeros = Moments({0.0f});
  ASSERT_TRUE(SaveTrainingCheckpoint(out, SampleState(4), zeros, zeros, FakeSaveModel, 1).ok());
  const std::string before = out + "/checkpoint-4/trainer_state.json";
  std::ifstream in(before);
  const std::string state_before((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto half_written = [](const std::string& directory) -> absl::StatusOr<std::vector<std::string>> {
    std::ofstream(directory + "/model.safetensors") << "partial";
    return absl::ResourceExhaustedError(directory + "/model.safetensors: write failed: No space left on device");
  };
  const absl::Status status = SaveTrainingCheckpoint(out, SampleState(8), zeros, zeros, half_written, 1);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  const std::string message(status.message());
  EXPECT_NE(message.find("saving checkpoint-8 failed: "), std::string::npos) << message;
  EXPECT_NE(message.find("No space left on device"), std::string::npos) << message;
  EXPECT_NE(message.find(out + "/checkpoint-4 is intact"), std::string::npos) << message;
  EXPECT_EQ(ListCheckpoints(out).size(), 1u);
  EXPECT_TRUE(fs::exists(out + "/checkpoint-4/optimizer.safetensors"));
  std::ifstream again(before);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>()), state_before);
  for (const fs::directory_entry& entry : fs::directory_iterator(out)) {
    EXPECT_EQ(entry.path().filename(), "checkpoint-4") << "left behind: " << entry.path();
  }
}

TEST(TrainingCheckpointTest, ResumeRefusesAnotherSeedBatchOrDataset) {
  const TrainingState saved = SampleState(8);
  EXPECT_TRUE(CheckCompatible(saved, SampleState(8), "ckpt").ok());
  TrainingState seed = saved;
  seed.seed = 1;
  TrainingState batch = saved;
  batch.global_batch_size = 16;
  TrainingState data = saved;
  data.train_examples = 3999;
  for (const auto& [current, names] : std::vector<std::pair<TrainingState, std::string>>{
           {seed, "--seed was 18446744073709551557, is now 1"},
           {batch, "global batch (per_device_train_batch_size x gradient_accumulation_steps x ranks) was 32, is now 16"},
           {data, "number of training examples was 4000, is now 3999"}}) {
    absl::Status status = CheckCompatible(saved, current, "ckpt");
    ASSERT_FALSE(status.ok()) << names;
    EXPECT_NE(std::string(status.message()).find(names), std::string::npos) << status;
  }
}

// A run killed while saving leaves checkpoint-<N>.tmp-<pid>; the next run removes exactly
// those, never a checkpoint, a look-alike name or the user's files.
TEST(TrainingCheckpointTest, RemovesOnlyTemporaryCheckpointDirectories) {
  const std::string dir = FreshDir("leftovers");
  for (const char* name : {"checkpoint-8.tmp-4242", "checkpoint-12.tmp-7", "checkpoint-8", "checkpoint-8.tmp-",
                           "checkpoint-8.tmp-12x", "mycheckpoint-8.tmp-1", "checkpoint-x.tmp-1"}) {
    fs::create_directories(dir + "/" + name);
    std::ofstream(dir + "/" + name + "/model.safetensors") << "weights";
  }
  std::ofstream(dir + "/checkpoint-9.tmp-5") << "a file, not a run's directory";
  EXPECT_EQ(RemoveTemporaryCheckpoints(dir),
            (std::vector<std::string>{"checkpoint-12.tmp-7", "checkpoint-8.tmp-4242"}));
  for (const char* kept : {"checkpoint-8", "checkpoint-8.tmp-", "checkpoint-8.tmp-12x", "mycheckpoint-8.tmp-1",
                           "checkpoint-x.tmp-1", "checkpoint-9.tmp-5"}) {
    EXPECT_TRUE(fs::exists(dir + "/" + kept)) << kept;
  }
  EXPECT_FALSE(fs::exists(dir + "/checkpoint-8.tmp-4242"));
  EXPECT_TRUE(RemoveTemporaryCheckpoints(dir).empty());
}

}  // namespace
}  // namespace xlmr::train
