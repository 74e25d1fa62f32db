// GradientSynchronizer and TrainStep against fake communicators that pretend to be one of two
// identical ranks (the sum over ranks doubles every value) and record every all-reduce.
//
// Checked: nothing is communicated on non-final micro-steps; on the final one each bucket is
// reduced exactly once, in order, as soon as backward reports it; with a communicator whose
// all-reduce blocks the host the reduction runs on a communication thread and really overlaps
// the rest of backward; and a whole TrainStep issues (optimizer steps x buckets) all-reduces,
// each after the bucket's last gradient contribution. All comparisons are exact: the fake
// multiplies by 2, which is exact in floating point.
#include "framework/distributed/gradient_synchronizer.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "framework/amp/loss_scaler.h"
#include "framework/distributed/zero_partition.h"
#include "framework/optim/adamw.h"
#include "framework/optim/lr_schedule.h"
#include "framework/train/train_step.h"
#include "gtest/gtest.h"
#include "models/encoder/init.h"
#include "tests/testing/tiny_xlmr.h"

namespace xlmr::distributed {
namespace {

struct RecordedAllReduce {
  int64_t offset = 0;            // in the flat gradient buffer: identifies the bucket
  std::vector<float> values;     // the bucket as handed over (before the sum)
  std::vector<int64_t> counts;   // a reduce-scatter's parts (empty: an all-reduce)
  std::thread::id thread;
};

// One of two identical ranks. Not thread-safe beyond the synchronizer's contract (all-reduces
// from one thread at a time, other calls only after Finish).
class FakeTwoRankCommunicator : public Communicator {
 public:
  FakeTwoRankCommunicator(const ParameterStore& store, bool blocks_host)
      : store_(store), blocks_host_(blocks_host) {}

  int rank() const override { return 0; }
  int world_size() const override { return 2; }
  void AllReduceSum(Tensor& data) override {
    RecordedAllReduce record;
    record.offset = data.data<float>() - store_.grads().data<float>();
    record.values = data.ToFloatVector();
    record.thread = std::this_thread::get_id();
    BeforeSum(record);
    float* values = data.data<float>();
    for (int64_t i = 0; i < data.numel(); ++i) values[i] *= 2.0f;
    calls.push_back(std::move(record));
    ++allreduce_calls_;
  }
  // Rank 0's part (the first counts[0] elements) becomes the sum over the two identical ranks;
  // recorded like an all-reduce, with the counts.
  void ReduceScatterSum(Tensor& data, const std::vector<int64_t>& counts) override {
    RecordedAllReduce record;
    record.offset = data.data<float>() - store_.grads().data<float>();
    record.values = data.ToFloatVector();
    record.counts = counts;
    record.thread = std::this_thread::get_id();
    BeforeSum(record);
    float* values = data.data<float>();
    for (int64_t i = 0; i < counts[0]; ++i) values[i] *= 2.0f;
    calls.push_back(std::move(record));
    ++allreduce_calls_;
  }
  // The other, identical rank's parts are what this rank holds already.
  void AllGather(Tensor&, const std::vector<int64_t>& counts) override {
    ++all_gathers;
    gather_counts.push_back(counts);
  }
  void GatherToRoot(const float*, float*, const std::vector<int64_t>&, int) override { std::abort(); }  // unused
  bool AllReduceBlocksHost() const override { return blocks_host_; }
  bool AllTrue(bool value) override { return value; }
  void AllReduceSumDoubles(double* values, size_t count) override {
    for (size_t i = 0; i < count; ++i) values[i] *= 2;
  }
  std::vector<double> AllGatherDoubles(const std::vector<double>& local) override { return local; }
  void Broadcast(void*, size_t, int) override {}
  void Barrier() override {}
  [[noreturn]] void Abort(int) override { std::abort(); }

  std::vector<RecordedAllReduce> calls;
  int all_gathers = 0;
  std::vector<std::vector<int64_t>> gather_counts;  // each AllGather's, in call order

 protected:
  virtual void BeforeSum(const RecordedAllReduce&) {}

 private:
  const ParameterStore& store_;
  bool blocks_host_;
};

ParameterStore FourBucketStore() {
  std::vector<ParameterSpec> specs;
  for (int bucket = 0; bucket < 4; ++bucket) {
    specs.push_back({"w" + std::to_string(bucket), {3, 2}, true, bucket});
    specs.push_back({"b" + std::to_string(bucket), {3}, false, bucket});
  }
  return ParameterStore(std::move(specs), Device::kCpu);
}

void FillGrads(ParameterStore& store) {
  float* grads = store.grads().data<float>();
  for (int64_t i = 0; i < store.total_elements(); ++i) grads[i] = 0.5f + static_cast<float>(i);
}

class SynchronizerModes : public ::testing::TestWithParam<bool> {};

TEST_P(SynchronizerModes, NonFinalMicroStepsCommunicateNothing) {
  ParameterStore store = FourBucketStore();
  FakeTwoRankCommunicator comm(store, /*blocks_host=*/GetParam());
  GradientSynchronizer sync(comm, store);
  sync.BeginStep();
  const auto hook = sync.HookFor(/*last_micro_step=*/false);
  for (int bucket = 0; bucket < 4; ++bucket) hook(bucket);
  EXPECT_EQ(comm.allreduce_calls(), 0);
  const auto last = sync.HookFor(/*last_micro_step=*/true);
  for (int bucket = 0; bucket < 4; ++bucket) last(bucket);
  sync.Finish();
  EXPECT_EQ(comm.allreduce_calls(), 4);
}

TEST_P(SynchronizerModes, EachBucketIsReducedOnceInOrder) {
  ParameterStore store = FourBucketStore();
  FillGrads(store);
  const std::vector<float> before = store.grads().ToFloatVector();
  FakeTwoRankCommunicator comm(store, GetParam());
  GradientSynchronizer sync(comm, store);
  EXPECT_EQ(sync.has_communication_thread(), GetParam());
  sync.BeginStep();
  const auto hook = sync.HookFor(true);
  hook(0);
  hook(1);
  sync.Finish();  // buckets 2 and 3 were never reported (e.g. an empty micro-batch)
  ASSERT_EQ(comm.calls.size(), 4u);
  for (int bucket = 0; bucket < 4; ++bucket) {
    EXPECT_EQ(comm.calls[bucket].offset, store.buckets()[bucket].offset);
    EXPECT_EQ(comm.calls[bucket].thread == std::this_thread::get_id(), !GetParam())
        << "blocking all-reduces belong on the communication thread, others inline";
  }
  const std::vector<float> after = store.grads().ToFloatVector();
  for (size_t i = 0; i < after.size(); ++i) EXPECT_EQ(after[i], 2.0f * before[i]) << i;
}

INSTANTIATE_TEST_SUITE_P(BlockingAndNot, SynchronizerModes, ::testing::Bool());

TEST(GradientSynchronizerTest, OneRankNeedsNoThread) {
  ParameterStore store = FourBucketStore();
  class OneRank : public FakeTwoRankCommunicator {
   public:
    using FakeTwoRankCommunicator::FakeTwoRankCommunicator;
    int world_size() const override { return 1; }
  } comm(store, /*blocks_host=*/true);
  GradientSynchronizer sync(comm, store);
  EXPECT_FALSE(sync.has_communication_thread());
}

// Holds the first all-reduce until the main thread has reported every bucket, i.e. until
// backward has gone on past the bucket being reduced. A synchronizer that reduced inline would
// never get there (it is stuck in this very call): the wait then times out and says so.
class GatedCommunicator : public FakeTwoRankCommunicator {
 public:
  using FakeTwoRankCommunicator::FakeTwoRankCommunicator;

  void Reported() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++reported_;
    changed_.notify_all();
  }
  bool overlapped() const { return overlapped_; }

 protected:
  void BeforeSum(const RecordedAllReduce&) override {
    if (!calls.empty()) return;
    std::unique_lock<std::mutex> lock(mutex_);
    overlapped_ = changed_.wait_for(lock, std::chrono::seconds(20), [&] { return reported_ == 4; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int reported_ = 0;
  bool overlapped_ = false;
};

TEST(GradientSynchronizerTest, BlockingAllReduceOverlapsTheRestOfBackward) {
  for (const bool sharded : {false, true}) {  // the all-reduce, or ZeRO stage 1's reduce-scatter
    SCOPED_TRACE(sharded ? "reduce-scatter" : "all-reduce");
    ParameterStore store = FourBucketStore();
    GatedCommunicator comm(store, /*blocks_host=*/true);
    GradientSynchronizer sync(comm, store,
                              sharded ? std::optional(ZeroPartition(store.total_elements(), 2)) : std::nullopt);
    sync.BeginStep();
    const auto hook = sync.HookFor(true);
    for (int bucket = 0; bucket < 4; ++bucket) {
      hook(bucket);  // "backward" goes on to the next block right away
      comm.Reported();
    }
    sync.Finish();
    EXPECT_TRUE(comm.overlapped()) << "bucket 0's reduction blocked backward of the blocks below";
    EXPECT_EQ(comm.allreduce_calls(), 4);
    EXPECT_EQ(comm.calls.front().counts.empty(), !sharded);
  }
}

// A whole optimizer step: 3 micro-steps per step, 2 steps, the tiny 4-bucket XLM-R.
// Scaler off and clipping off, so the gradients the optimizer receives are exactly the reduced ones.
TEST(GradientSynchronizerTest, TrainStepReducesEachBucketOnceAfterItsLastContribution) {
  for (const bool blocks_host : {false, true}) {
    SCOPED_TRACE(blocks_host ? "communication thread" : "inline");
    const data::TokenizedDataset dataset = testing::TinyDataset(12);
    models::EncoderModel model(testing::TinyXlmrConfig(), Device::kCpu);
    models::InitializeAllWeights(model, 7);
    ParameterStore& store = model.parameters();
    FakeTwoRankCommunicator comm(store, blocks_host);
    GradientSynchronizer sync(comm, store);
    amp::DynamicLossScaler scaler(amp::LossScalerOptions{}, /*enabled=*/false);
    optim::AdamW optimizer(store, optim::AdamWOptions{0.9, 0.999, 1e-8, 0.0});
    auto schedule = optim::MakeLrSchedule("constant", 1e-3, 2, 0, 0.0);
    ASSERT_TRUE(schedule.ok());
    // The gradients as the optimizer receives them (it zeroes them after its update).
    std::vector<float> grads;
    train::StepSettings settings{DType::kF32, /*max_grad_norm=*/0.0, 7, Device::kCpu};
    settings.on_gradients = [&](const Tensor& summed) { grads = summed.ToFloatVector(); };
    train::TrainStep step(model, sync, scaler, optimizer, *schedule, settings);
    const int buckets = static_cast<int>(store.buckets().size());
    ASSERT_EQ(buckets, 4);
    for (int s = 0; s < 2; ++s) {
      const std::vector<data::Batch> micro_batches = {testing::TinyBatch(dataset, 6 * s, 2),
                                                      testing::TinyBatch(dataset, 6 * s + 2, 2),
                                                      testing::TinyBatch(dataset, 6 * s + 4, 2)};
      comm.calls.clear();
      auto outcome = step.Run(s, micro_batches, /*global_examples=*/12);
      ASSERT_TRUE(outcome.ok());
      EXPECT_FALSE(outcome->skipped);
      EXPECT_EQ(comm.allreduce_calls(), (s + 1) * buckets) << "all-reduces after step " << s + 1;
      ASSERT_EQ(static_cast<int>(comm.calls.size()), buckets);
      // The bucket as handed over, doubled, is the final gradient: nothing was added to it
      // after its all-reduce, so it came after all 3 micro-steps had contributed.
      for (int b = 0; b < buckets; ++b) {
        const FlatRange& range = store.buckets()[b];
        ASSERT_EQ(comm.calls[b].offset, range.offset);
        for (int64_t i = 0; i < range.size; ++i) {
          ASSERT_EQ(grads[range.offset + i], 2.0f * comm.calls[b].values[i]) << "bucket " << b;
        }
      }
    }
  }
}

// ZeRO stage 1: the same moments and order as the all-reduce, each bucket cut at the shard
// boundaries of two ranks, nothing on a non-final micro-step, and the weights (and the half
// working copy) all-gathered once each after the update.
TEST_P(SynchronizerModes, ZeroStage1ReduceScattersEachBucketAtTheShardBoundaries) {
  ParameterStore store = FourBucketStore();
  store.EnableHalfCopy(DType::kF16);
  FillGrads(store);
  const std::vector<float> before = store.grads().ToFloatVector();
  FakeTwoRankCommunicator comm(store, GetParam());
  const ZeroPartition partition(store.total_elements(), 2);
  GradientSynchronizer sync(comm, store, partition);
  EXPECT_TRUE(sync.sharded());
  EXPECT_EQ(sync.owned().offset, partition.shard(0).offset);
  EXPECT_EQ(sync.owned().size, partition.shard(0).size);
  sync.BeginStep();
  const auto first = sync.HookFor(/*last_micro_step=*/false);
  for (int bucket = 0; bucket < 4; ++bucket) first(bucket);
  EXPECT_EQ(comm.allreduce_calls(), 0);
  const auto last = sync.HookFor(/*last_micro_step=*/true);
  for (int bucket = 0; bucket < 4; ++bucket) last(bucket);
  sync.Finish();
  ASSERT_EQ(comm.calls.size(), 4u);
  for (int b = 0; b < 4; ++b) {
    EXPECT_EQ(comm.calls[b].offset, store.buckets()[b].offset);
    EXPECT_EQ(comm.calls[b].counts, partition.CountsWithin(store.buckets()[b])) << "bucket " << b;
  }
  // Rank 0's shard holds the sum; that is all the optimizer reads.
  const std::vector<float> after = store.grads().ToFloatVector();
  for (int64_t i = 0; i < sync.owned().size; ++i) ASSERT_EQ(after[i], 2.0f * before[i]) << i;
  sync.AllGatherWeights();
  EXPECT_EQ(comm.all_gathers, 2);  // the fp32 masters and the fp16 copy
}

// ZeRO's all-gather of the half copy, which mirrors only the half window: each rank's part is
// its shard clipped to the window. Counted here by hand: parameters of 64 (fp32), 192 and 128
// (both read in half) and 128 (fp32) elements at offsets 0, 64, 256, 384 give the window
// [64, 384); two ranks' shards of the 512 elements are [0, 256) and [256, 512).
TEST(GradientSynchronizerTest, ZeroGathersTheHalfCopyByEachShardsOverlapWithTheWindow) {
  ParameterStore store({{"head.weight", {64}, true, 0, /*read_in_half=*/false},
                        {"dense.weight", {192}, true, 0, /*read_in_half=*/true},
                        {"output.weight", {128}, true, 0, /*read_in_half=*/true},
                        {"embeddings.weight", {128}, true, 0, /*read_in_half=*/false}},
                       Device::kCpu);
  store.EnableHalfCopy(DType::kF16);
  ASSERT_EQ(store.total_elements(), 512);
  FakeTwoRankCommunicator comm(store, /*blocks_host=*/false);
  GradientSynchronizer sync(comm, store, ZeroPartition(store.total_elements(), 2));
  sync.BeginStep();
  sync.Finish();
  sync.AllGatherWeights();
  ASSERT_EQ(comm.gather_counts.size(), 2u);
  EXPECT_EQ(comm.gather_counts[0], (std::vector<int64_t>{256, 256}));  // the fp32 masters
  EXPECT_EQ(comm.gather_counts[1], (std::vector<int64_t>{192, 128}));  // the half copy
}

// Through TrainStep with one rank: --zero_stage=1 (one shard, the whole buffer, through the
// reduce-scatter, the sharded AdamW and the all-gather) computes exactly what stage 0 does.
TEST(GradientSynchronizerTest, ZeroStage1WithOneRankIsStage0BitForBit) {
  const data::TokenizedDataset dataset = testing::TinyDataset(12);
  const std::vector<data::Batch> batches = {testing::TinyBatch(dataset, 0, 6), testing::TinyBatch(dataset, 6, 6)};
  std::vector<std::vector<float>> weights;
  for (const int stage : {0, 1}) {
    testing::TinyTrainerOptions options;
    options.autocast = DType::kF16;
    options.zero_stage = stage;
    options.max_grad_norm = 0.5;
    testing::TinyTrainer trainer(options);
    for (int step = 0; step < 3; ++step) EXPECT_FALSE(trainer.Step(step, batches).skipped);
    weights.push_back(trainer.model().parameters().master().ToFloatVector());
    EXPECT_EQ(trainer.optimizer().exp_avg().numel(), trainer.model().parameters().total_elements());
  }
  EXPECT_EQ(weights[0], weights[1]);
}

}  // namespace
}  // namespace xlmr::distributed
