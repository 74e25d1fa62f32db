// Run under `mpirun -np N` (communicator_mpi_test.sh, N = 2 and 4): the AdamW moments of a
// --zero_stage=1 run round-trip through a checkpoint bit for bit, whatever the number of ranks
// that saved it and that reads it back. The save and resume calls are the trainer's
// (framework/train/trainer.cc: GatherShardsToRoot and SaveTrainingCheckpoint with the
// parameters' ranges; LoadTrainingCheckpoint, ScatterPacked and AdamW::RestoreState on the
// shard).
//
// The tiny XLM-R's flat buffers; moments of random bits (every exponent from 2^-40 to 2^8, both
// signs, so a value moved to another place or rounded cannot compare equal by chance), the same
// on every rank; each rank's optimizer holds its shard of N. Saved by N ranks; then read back as
// the shards of M = 1, 2, 3, N and 8 ranks (each rank reads the shards whose index is its rank
// modulo N). Checked: optimizer.safetensors holds the moments packed in parameter order, equal to
// the original bit for bit; every shard of every M equals the original's slice bit for bit.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "framework/distributed/create_communicator.h"
#include "framework/distributed/zero_partition.h"
#include "framework/optim/adamw.h"
#include "framework/train/training_checkpoint.h"
#include "models/encoder/model.h"
#include "tests/testing/tiny_xlmr.h"

namespace xlmr::distributed {
namespace {

int failures = 0;

void Expect(bool condition, const std::string& what, int rank) {
  if (!condition) {
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
    ++failures;
  }
}

bool SameBits(const Tensor& a, const float* b, int64_t count) {
  return a.numel() == count && (count == 0 || std::memcmp(a.data<float>(), b, count * sizeof(float)) == 0);
}

// The store's layout, the parameters' ranges holding random values, the padding zero.
Tensor RandomMoment(const ParameterStore& store, uint32_t seed) {
  std::mt19937 bits(seed);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-40, 8);
  Tensor flat = Tensor::Zeros({store.total_elements()}, DType::kF32, Device::kCpu, MemoryCategory::kOptimizer);
  for (int i = 0; i < store.size(); ++i) {
    float* values = flat.data<float>() + store.range(i).offset;
    for (int64_t j = 0; j < store.range(i).size; ++j) {
      values[j] = std::ldexp(mantissa(bits), exponent(bits)) * (bits() % 2 == 0 ? 1.0f : -1.0f);
    }
  }
  return flat;
}

int Run() {
  absl::StatusOr<LaunchEnvironment> env = ReadLaunchEnvironment();
  if (!env.ok()) return std::fprintf(stderr, "%s\n", env.status().ToString().c_str()), 1;
  absl::StatusOr<std::unique_ptr<Communicator>> created = CreateCommunicator(*env);
  if (!created.ok()) return std::fprintf(stderr, "%s\n", created.status().ToString().c_str()), 1;
  Communicator& comm = **created;
  const int rank = comm.rank(), ranks = comm.world_size();
  models::EncoderModel model(testing::TinyXlmrConfig(), Device::kCpu);
  ParameterStore& store = model.parameters();
  const Tensor m = RandomMoment(store, 1), v = RandomMoment(store, 2);

  // Saved by `ranks` ranks, as the trainer saves.
  const ZeroPartition saved_by(store.total_elements(), ranks);
  optim::AdamW optimizer(store, optim::AdamWOptions{}, saved_by.shard(rank));
  Expect(optimizer.RestoreState(5, m, v).ok(), "the moments restored into this rank's shard", rank);
  const Tensor all_m = GatherShardsToRoot(comm, saved_by, optimizer.exp_avg(), 0);
  const Tensor all_v = GatherShardsToRoot(comm, saved_by, optimizer.exp_avg_sq(), 0);
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/zero_checkpoint";
  if (rank == 0) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::vector<io::ElementRange> ranges;
    for (int i = 0; i < store.size(); ++i) ranges.push_back({store.range(i).offset, store.range(i).size});
    train::TrainingState state;
    state.global_step = 3;
    state.world_size = ranks;
    const auto save_model = [](const std::string& d) -> absl::StatusOr<std::vector<std::string>> {
      for (const char* name : {"model.safetensors", "config.json"}) {
        std::FILE* f = std::fopen((d + "/" + name).c_str(), "w");
        std::fputs("x", f);
        std::fclose(f);
      }
      return std::vector<std::string>{"model.safetensors", "config.json"};
    };
    Expect(train::SaveTrainingCheckpoint(dir, state, all_m, all_v, save_model, 0, ranges).ok(), "checkpoint saved", rank);
  }
  comm.Barrier();

  absl::StatusOr<train::LoadedCheckpoint> loaded =
      train::LoadTrainingCheckpoint(dir + "/checkpoint-3", store.packed_elements());
  Expect(loaded.ok(), "checkpoint read back", rank);
  if (!loaded.ok()) return 1;
  // The file: packed in parameter order, the original's bits.
  bool packed_ok = true;
  int64_t at = 0;
  for (int i = 0; i < store.size(); ++i) {
    const FlatRange& range = store.range(i);
    packed_ok &= std::memcmp(loaded->exp_avg.data<float>() + at, m.data<float>() + range.offset, range.size * 4) == 0;
    packed_ok &= std::memcmp(loaded->exp_avg_sq.data<float>() + at, v.data<float>() + range.offset, range.size * 4) == 0;
    at += range.size;
  }
  Expect(packed_ok, "optimizer.safetensors holds the moments in parameter order, bit for bit", rank);
  Expect(loaded->state.world_size == ranks, "trainer_state.json records the world size", rank);

  // Read back by M ranks, as the trainer resumes.
  Tensor flat_m = Tensor::Zeros({store.total_elements()}, DType::kF32, Device::kCpu, MemoryCategory::kWorkspace);
  Tensor flat_v = Tensor::Zeros({store.total_elements()}, DType::kF32, Device::kCpu, MemoryCategory::kWorkspace);
  store.ScatterPacked(loaded->exp_avg, flat_m);
  store.ScatterPacked(loaded->exp_avg_sq, flat_v);
  for (const int readers : {1, 2, 3, ranks, 8}) {
    const ZeroPartition read_by(store.total_elements(), readers);
    for (int r = rank; r < readers; r += ranks) {
      optim::AdamW resumed(store, optim::AdamWOptions{}, read_by.shard(r));
      Expect(resumed.RestoreState(5, flat_m, flat_v).ok(), "restored", rank);
      const FlatRange& shard = read_by.shard(r);
      Expect(SameBits(resumed.exp_avg(), m.data<float>() + shard.offset, shard.size) &&
                 SameBits(resumed.exp_avg_sq(), v.data<float>() + shard.offset, shard.size),
             "shard " + std::to_string(r) + " of " + std::to_string(readers) + " holds the saved moments bit for bit",
             rank);
    }
  }
  comm.Barrier();
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace xlmr::distributed

int main() { return xlmr::distributed::Run(); }
