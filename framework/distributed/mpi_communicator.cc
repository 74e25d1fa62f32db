#include "framework/distributed/mpi_communicator.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "framework/profile/profiler.h"

// Every MPI call is checked; MPI's default error handler aborts the job on communication
// errors, so a failure here is an invariant breach (wrong buffer, wrong count).
#define MPI_CHECK(expr)                                                        \
  do {                                                                         \
    const int mpi_check_code_ = (expr);                                        \
    XLMR_CHECK(mpi_check_code_ == MPI_SUCCESS) << "MPI error " << mpi_check_code_; \
  } while (0)

namespace xlmr::distributed {
namespace {

// MPI counts are int. Parts of a sharded flat buffer are multiples of 64 elements (the
// ParameterStore alignment), so counting in units of 64 elements reaches 2^37 elements per part;
// other counts (tests) are counted in elements and must fit an int.
struct MpiParts {
  MPI_Datatype type = MPI_DATATYPE_NULL;  // `unit` elements of `element_bytes` each, contiguous
  int64_t unit = 1;
  std::vector<int> counts, displacements;  // in units
  ~MpiParts() {
    if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
  }
};

void MakeParts(const std::vector<int64_t>& counts, int64_t element_bytes, MpiParts& parts) {
  constexpr int64_t kUnit = 64;
  bool aligned = true;
  for (const int64_t count : counts) aligned &= count % kUnit == 0;
  parts.unit = aligned ? kUnit : 1;
  int64_t at = 0;
  for (const int64_t count : counts) {
    XLMR_CHECK(count >= 0 && count / parts.unit <= std::numeric_limits<int>::max() &&
               at / parts.unit <= std::numeric_limits<int>::max())
        << "a part of " << count << " elements at " << at << " is beyond MPI's int counts";
    parts.counts.push_back(static_cast<int>(count / parts.unit));
    parts.displacements.push_back(static_cast<int>(at / parts.unit));
    at += count;
  }
  MPI_CHECK(MPI_Type_contiguous(static_cast<int>(parts.unit * element_bytes), MPI_BYTE, &parts.type));
  MPI_CHECK(MPI_Type_commit(&parts.type));
}

int64_t SumOf(const std::vector<int64_t>& counts) {
  int64_t sum = 0;
  for (const int64_t count : counts) sum += count;
  return sum;
}

}  // namespace

absl::StatusOr<std::unique_ptr<MpiCommunicator>> MpiCommunicator::Create() {
  int initialized = 0;
  MPI_CHECK(MPI_Initialized(&initialized));
  int provided = MPI_THREAD_SINGLE;
  if (!initialized) {
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
      return absl::UnavailableError("MPI_Init_thread failed: is this process started by mpirun?");
    }
  } else {
    MPI_CHECK(MPI_Query_thread(&provided));
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the MPI library provides thread level ", provided, ", below MPI_THREAD_SERIALIZED (",
        MPI_THREAD_SERIALIZED, "), which the overlapped gradient all-reduce needs"));
  }
  int rank = 0, size = 1;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  return std::unique_ptr<MpiCommunicator>(new MpiCommunicator(rank, size));
}

std::unique_lock<std::mutex> MpiCommunicator::EnterMpi() {
  std::unique_lock<std::mutex> lock(in_mpi_, std::try_to_lock);
  XLMR_CHECK(lock.owns_lock())
      << "two threads called MPI at once (MPI_THREAD_SERIALIZED): the main thread must wait for "
         "GradientSynchronizer::Finish() before its own collectives";
  return lock;
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void MpiCommunicator::AllReduceSum(Tensor& data) {
  profile::OpScope op("comm::AllReduceSum", profile::OpKind::kOther, static_cast<int64_t>(data.bytes()));
  const auto in_mpi = EnterMpi();
  XLMR_CHECK(data.dtype() == DType::kF32 && data.device() == Device::kCpu)
      << "MPI all-reduce takes host f32 buffers";
  float* values = data.data<float>();
  // MPI counts are int: reduce in chunks so buckets over 2^31 elements still work.
  const int64_t chunk = std::numeric_limits<int>::max();
  for (int64_t begin = 0; begin < data.numel(); begin += chunk) {
    const int count = static_cast<int>(std::min<int64_t>(chunk, data.numel() - begin));
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values + begin, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
  }
  ++allreduce_calls_;
}

void MpiCommunicator::ReduceScatterSum(Tensor& data, const std::vector<int64_t>& counts) {
  profile::OpScope op("comm::ReduceScatterSum", profile::OpKind::kOther, static_cast<int64_t>(data.bytes()));
  const auto in_mpi = EnterMpi();
  XLMR_CHECK(data.dtype() == DType::kF32 && data.device() == Device::kCpu)
      << "MPI reduce-scatter takes host f32 buffers";
  XLMR_CHECK(static_cast<int>(counts.size()) == world_size_ && SumOf(counts) == data.numel())
      << "reduce-scatter: one count per rank, summing to the buffer's " << data.numel() << " elements";
  // A sum needs MPI_FLOAT itself (MPI_SUM is defined on predefined types), so the counts are
  // elements and each part must fit an int (2^31 floats, 8 GiB: beyond any bucket's share).
  std::vector<int> int_counts;
  int64_t offset = 0;  // where this rank's part starts
  for (int r = 0; r < world_size_; ++r) {
    XLMR_CHECK(counts[r] >= 0 && counts[r] <= std::numeric_limits<int>::max())
        << "a reduce-scatter part of " << counts[r] << " elements is beyond MPI's int counts";
    int_counts.push_back(static_cast<int>(counts[r]));
    if (r < rank_) offset += counts[r];
  }
  float* values = data.data<float>();
  // MPI_IN_PLACE: the input is the whole buffer and this rank's sum lands at its start; it is
  // then moved to the part's own place (the regions may overlap: memmove).
  MPI_CHECK(MPI_Reduce_scatter(MPI_IN_PLACE, values, int_counts.data(), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
  if (offset > 0 && counts[rank_] > 0) {
    std::memmove(values + offset, values, static_cast<size_t>(counts[rank_]) * sizeof(float));
  }
  ++allreduce_calls_;
}

void MpiCommunicator::AllGather(Tensor& data, const std::vector<int64_t>& counts) {
  profile::OpScope op("comm::AllGather", profile::OpKind::kOther, static_cast<int64_t>(data.bytes()));
  const auto in_mpi = EnterMpi();
  XLMR_CHECK(data.device() == Device::kCpu) << "MPI all-gather takes host buffers";
  XLMR_CHECK(static_cast<int>(counts.size()) == world_size_ && SumOf(counts) == data.numel())
      << "all-gather: one count per rank, summing to the buffer's " << data.numel() << " elements";
  MpiParts parts;
  MakeParts(counts, static_cast<int64_t>(SizeOf(data.dtype())), parts);
  MPI_CHECK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data.raw_data(), parts.counts.data(),
                           parts.displacements.data(), parts.type, MPI_COMM_WORLD));
}

void MpiCommunicator::GatherToRoot(const float* local, float* all_on_root, const std::vector<int64_t>& counts,
                                   int root) {
  const auto in_mpi = EnterMpi();
  XLMR_CHECK(static_cast<int>(counts.size()) == world_size_) << "gather: one count per rank";
  MpiParts parts;
  MakeParts(counts, static_cast<int64_t>(sizeof(float)), parts);
  MPI_CHECK(MPI_Gatherv(local, parts.counts[rank_], parts.type, all_on_root, parts.counts.data(),
                        parts.displacements.data(), parts.type, root, MPI_COMM_WORLD));
}

bool MpiCommunicator::AllTrue(bool value) {
  profile::OpScope op("comm::AllTrue", profile::OpKind::kOther, 1);
  const auto in_mpi = EnterMpi();
  int local = value ? 1 : 0, global = 0;
  MPI_CHECK(MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
  return global != 0;
}

void MpiCommunicator::AllReduceSumDoubles(double* values, size_t count) {
  profile::OpScope op("comm::AllReduceSumDoubles", profile::OpKind::kOther, static_cast<int64_t>(count * sizeof(double)));
  const auto in_mpi = EnterMpi();
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_DOUBLE, MPI_SUM,
                          MPI_COMM_WORLD));
}

std::vector<double> MpiCommunicator::AllGatherDoubles(const std::vector<double>& local) {
  profile::OpScope op("comm::AllGatherDoubles", profile::OpKind::kOther, static_cast<int64_t>(local.size() * sizeof(double)));
  const auto in_mpi = EnterMpi();
  const int count = static_cast<int>(local.size());
  std::vector<int> counts(world_size_), displacements(world_size_);
  MPI_CHECK(MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD));
  int total = 0;
  for (int r = 0; r < world_size_; ++r) {
    displacements[r] = total;
    total += counts[r];
  }
  std::vector<double> all(total);
  MPI_CHECK(MPI_Allgatherv(local.data(), count, MPI_DOUBLE, all.data(), counts.data(),
                           displacements.data(), MPI_DOUBLE, MPI_COMM_WORLD));
  return all;
}

void MpiCommunicator::Broadcast(void* data, size_t bytes, int root) {
  profile::OpScope op("comm::Broadcast", profile::OpKind::kOther, static_cast<int64_t>(bytes));
  const auto in_mpi = EnterMpi();
  const size_t chunk = static_cast<size_t>(std::numeric_limits<int>::max());
  for (size_t begin = 0; begin < bytes; begin += chunk) {
    const int count = static_cast<int>(std::min(chunk, bytes - begin));
    MPI_CHECK(MPI_Bcast(static_cast<char*>(data) + begin, count, MPI_BYTE, root, MPI_COMM_WORLD));
  }
}

void MpiCommunicator::Barrier() {
  profile::OpScope op("comm::Barrier", profile::OpKind::kOther, 0);
  const auto in_mpi = EnterMpi();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

void MpiCommunicator::Abort(int exit_code) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);
}

}  // namespace xlmr::distributed
