#include "framework/distributed/replica_check.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/core/fingerprint.h"

namespace xlmr::distributed {

uint64_t WeightsFingerprint(const Tensor& weights) {
  const Tensor host = weights.device() == Device::kCpu
                          ? weights
                          : weights.ToDevice(Device::kCpu, MemoryCategory::kWorkspace);
  Fingerprint fingerprint;
  fingerprint.Update(host.raw_data(), host.bytes());
  return fingerprint.Value();
}

absl::StatusOr<uint64_t> CheckReplicasIdentical(Communicator& comm, const Tensor& weights,
                                                absl::string_view when) {
  const uint64_t mine = WeightsFingerprint(weights);
  if (comm.world_size() == 1) return mine;
  // Two 32-bit halves: each is exact in a double.
  const std::vector<double> all = comm.AllGatherDoubles(
      {static_cast<double>(mine >> 32), static_cast<double>(mine & 0xffffffffu)});
  std::vector<std::string> differing;
  const auto fingerprint_of = [&](int rank) {
    return (static_cast<uint64_t>(all[2 * rank]) << 32) | static_cast<uint64_t>(all[2 * rank + 1]);
  };
  for (int rank = 1; rank < comm.world_size(); ++rank) {
    if (fingerprint_of(rank) != fingerprint_of(0)) {
      differing.push_back(
          absl::StrCat("rank ", rank, " holds fingerprint 0x", FingerprintHex(fingerprint_of(rank))));
    }
  }
  if (differing.empty()) return mine;
  return absl::FailedPreconditionError(absl::StrCat(
      "weights differ across ranks ", when, ": ", absl::StrJoin(differing, ", "), ", rank 0 0x",
      FingerprintHex(fingerprint_of(0)),
      " (the replicas diverged: are the model files, data and flags the same on every host?)"));
}

}  // namespace xlmr::distributed
