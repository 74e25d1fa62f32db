// Data-parallel replicas must hold bitwise identical weights: every rank starts from the same
// initialisation (same seed, same checkpoint) and applies the same all-reduced gradients with
// the same arithmetic. If that ever breaks (different files on different hosts, a
// non-deterministic reduction, a rank-dependent bug), the ranks silently train different
// models and the saved one depends on which rank wrote it. This check turns that into an
// error. It costs one pass over the weights and one tiny all-gather, so the trainer runs it at
// the start and at the end of training.
#ifndef XLMR_FRAMEWORK_DISTRIBUTED_REPLICA_CHECK_H_
#define XLMR_FRAMEWORK_DISTRIBUTED_REPLICA_CHECK_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/distributed/communicator.h"
#include "framework/tensor/tensor.h"

namespace xlmr::distributed {

// A 64-bit fingerprint of `weights`' bytes (framework/core/fingerprint.h), copied to the host
// first when it lives on a GPU.
uint64_t WeightsFingerprint(const Tensor& weights);

// Collective. Gathers every rank's WeightsFingerprint(weights) and returns it when all are
// equal. Otherwise FailedPrecondition, the same on every rank, e.g.
//   "weights differ across ranks after step 12: rank 1 holds fingerprint 0x..., rank 0 0x..."
// `when` completes the sentence ("at the start of training", "after step 12").
// One rank: returns the fingerprint without any communication.
absl::StatusOr<uint64_t> CheckReplicasIdentical(Communicator& comm, const Tensor& weights,
                                                absl::string_view when);

}  // namespace xlmr::distributed

#endif  // XLMR_FRAMEWORK_DISTRIBUTED_REPLICA_CHECK_H_
