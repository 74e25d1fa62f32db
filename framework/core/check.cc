#include "framework/core/check.h"

#include <cstdio>
#include <cstdlib>

namespace xlmr::internal {

CheckFailure::CheckFailure(const char* file, int line, const char* expression) {
  message_ << file << ":" << line << ": check failed: " << expression << " ";
}

CheckFailure::~CheckFailure() {
  std::fprintf(stderr, "%s\n", message_.str().c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace xlmr::internal
