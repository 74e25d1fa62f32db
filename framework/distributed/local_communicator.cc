#include "framework/distributed/local_communicator.h"

#include <cstdlib>

namespace xlmr::distributed {

void LocalCommunicator::Abort(int exit_code) { std::exit(exit_code); }

}  // namespace xlmr::distributed
