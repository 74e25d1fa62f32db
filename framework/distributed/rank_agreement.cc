#include "framework/distributed/rank_agreement.h"

#include <cstdint>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/core/check.h"

namespace xlmr::distributed {
namespace {

// Rank `root`'s `text` on every rank (length first, then the bytes).
std::string BroadcastString(Communicator& comm, const std::string& text, int root) {
  uint64_t size = text.size();
  comm.Broadcast(&size, sizeof(size), root);
  std::string received = comm.rank() == root ? text : std::string(size, '\0');
  if (size > 0) comm.Broadcast(received.data(), size, root);
  return received;
}

// Length-prefixed fields, so names and values may hold any byte.
std::string Encode(const std::vector<Setting>& settings) {
  std::string out;
  for (const Setting& s : settings) {
    for (const std::string* field : {&s.name, &s.value}) {
      const uint64_t size = field->size();
      out.append(reinterpret_cast<const char*>(&size), sizeof(size));
      out += *field;
    }
  }
  return out;
}

std::map<std::string, std::string> Decode(const std::string& bytes) {
  std::map<std::string, std::string> settings;
  size_t at = 0;
  auto next = [&]() {
    uint64_t size = 0;
    XLMR_CHECK_LE(at + sizeof(size), bytes.size()) << "malformed settings from rank 0";
    std::memcpy(&size, bytes.data() + at, sizeof(size));
    at += sizeof(size);
    XLMR_CHECK_LE(at + size, bytes.size()) << "malformed settings from rank 0";
    std::string field = bytes.substr(at, size);
    at += size;
    return field;
  };
  while (at < bytes.size()) {
    std::string name = next();
    settings[name] = next();
  }
  return settings;
}

std::vector<std::string> Differences(const std::map<std::string, std::string>& mine,
                                     const std::map<std::string, std::string>& rank0) {
  std::vector<std::string> differences;
  for (const auto& [name, value] : mine) {
    const auto theirs = rank0.find(name);
    if (theirs == rank0.end()) {
      differences.push_back(absl::StrCat("--", name, " exists here but not on rank 0"));
    } else if (theirs->second != value) {
      differences.push_back(absl::StrCat("--", name, " differs from rank 0's (here '", value,
                                         "', on rank 0 '", theirs->second, "')"));
    }
  }
  for (const auto& [name, value] : rank0) {
    if (mine.count(name) == 0) differences.push_back(absl::StrCat("--", name, " exists on rank 0 only"));
  }
  return differences;
}

}  // namespace

absl::Status CheckSettingsMatchRankZero(Communicator& comm, const std::vector<Setting>& settings) {
  if (comm.world_size() == 1) return absl::OkStatus();
  const std::string encoded = Encode(settings);
  const std::string rank0 = BroadcastString(comm, encoded, /*root=*/0);
  if (comm.rank() == 0) return absl::OkStatus();
  const std::vector<std::string> differences = Differences(Decode(encoded), Decode(rank0));
  if (differences.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(differences, "; "));
}

AgreedOutcome AgreeOnOutcome(Communicator& comm, const absl::Status& local) {
  AgreedOutcome outcome;
  outcome.all_ok = comm.AllTrue(local.ok());
  const std::string message(local.message());
  if (comm.world_size() == 1) {
    if (!local.ok()) outcome.report = message;
    return outcome;
  }
  if (outcome.all_ok) return outcome;
  // Rank 0's error (empty when it succeeded), to stay silent about the same error.
  const std::string rank0 = BroadcastString(comm, local.ok() ? std::string() : message, /*root=*/0);
  const bool repeats_rank0 = comm.rank() != 0 && !rank0.empty() && rank0 == message;
  if (!local.ok() && !repeats_rank0) outcome.report = absl::StrCat("rank ", comm.rank(), ": ", message);
  return outcome;
}

absl::StatusOr<std::string> ShareRankZeroDecision(Communicator& comm,
                                                  const std::function<absl::StatusOr<std::string>()>& decide) {
  if (comm.world_size() == 1) return decide();
  absl::StatusOr<std::string> decision = comm.rank() == 0 ? decide() : absl::StatusOr<std::string>("");
  int32_t code = static_cast<int32_t>(decision.status().code());
  comm.Broadcast(&code, sizeof(code), /*root=*/0);
  const std::string text = decision.ok() ? *decision : std::string(decision.status().message());
  const std::string shared = BroadcastString(comm, text, /*root=*/0);
  if (code == 0) return shared;
  return absl::Status(static_cast<absl::StatusCode>(code), shared);
}

}  // namespace xlmr::distributed
