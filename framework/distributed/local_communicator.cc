#include "framework/distributed/local_communicator.h"

#include <cstdlib>
#include <cstring>

#include "framework/core/check.h"

namespace xlmr::distributed {

void LocalCommunicator::GatherToRoot(const float* local, float* all_on_root,
                                     const std::vector<int64_t>& counts, int root) {
  XLMR_CHECK(counts.size() == 1 && root == 0) << "one rank: one count, root 0";
  if (counts[0] > 0 && local != all_on_root) {
    std::memcpy(all_on_root, local, static_cast<size_t>(counts[0]) * sizeof(float));
  }
}

void LocalCommunicator::Abort(int exit_code) { std::exit(exit_code); }

}  // namespace xlmr::distributed
