// Agreement between the ranks of a launch before training starts, so that a misconfigured or
// failing rank stops the whole job with one clear line instead of training something else or
// leaving the other ranks waiting forever in a collective.
//
//   // every rank, right after the communicator exists:
//   absl::Status mine = CheckSettingsMatchRankZero(comm, settings);   // e.g. all flag values
//   ... more preparation, each rank on its own (no collectives) ...
//   const AgreedOutcome outcome = AgreeOnOutcome(comm, status_of_the_preparation);
//   if (!outcome.all_ok) { print outcome.report if not empty; exit on EVERY rank }
//
// Both functions are collectives: every rank must call them, in the same order.
#ifndef XLMR_FRAMEWORK_DISTRIBUTED_RANK_AGREEMENT_H_
#define XLMR_FRAMEWORK_DISTRIBUTED_RANK_AGREEMENT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "framework/distributed/communicator.h"

namespace xlmr::distributed {

// One named configuration value, e.g. {"learning_rate", "2e-05"} for a command-line flag.
struct Setting {
  std::string name;
  std::string value;
};

// Compares this rank's `settings` with rank 0's (rank 0 broadcasts its list). Returns OK on
// rank 0 and on every rank whose list equals rank 0's (order does not matter); otherwise
// InvalidArgument naming each difference, e.g.
//   "--learning_rate differs from rank 0's (here '0.001', on rank 0 '2e-05')"
// joined with "; ". A name present on one side only is named too (a different program).
// Names are printed with "--" in front: the settings are meant to be flags.
absl::Status CheckSettingsMatchRankZero(Communicator& comm, const std::vector<Setting>& settings);

// What one rank should do after a phase that every rank ran on its own.
struct AgreedOutcome {
  bool all_ok = true;  // every rank's status was OK
  // The line this rank should print, empty for none: this rank's own error, prefixed with
  // "rank N: " when there is more than one rank. A rank other than 0 stays silent when rank 0
  // failed with the same message, so an error every rank hits is printed once.
  std::string report;
};

// Agrees on `local` (this rank's status) across ranks.
AgreedOutcome AgreeOnOutcome(Communicator& comm, const absl::Status& local);

// Rank 0 runs `decide` and every rank returns its result: the value (any bytes, e.g. a JSON
// text) or the error (same code and message). For a choice that must be the same on every
// rank but depends on what rank 0 sees, such as the state of the output directory, which
// only rank 0 writes. `decide` is not called on the other ranks.
absl::StatusOr<std::string> ShareRankZeroDecision(Communicator& comm,
                                                  const std::function<absl::StatusOr<std::string>()>& decide);

}  // namespace xlmr::distributed

#endif  // XLMR_FRAMEWORK_DISTRIBUTED_RANK_AGREEMENT_H_
