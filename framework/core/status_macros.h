// Propagation helpers for absl::Status / absl::StatusOr at boundaries that touch user input.
//
//   XLMR_RETURN_IF_ERROR(ReadHeader(file));
//   XLMR_ASSIGN_OR_RETURN(Config config, Config::FromJsonFile(path));
#ifndef XLMR_FRAMEWORK_CORE_STATUS_MACROS_H_
#define XLMR_FRAMEWORK_CORE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define XLMR_RETURN_IF_ERROR(expr)                 \
  do {                                             \
    ::absl::Status xlmr_status_ = (expr);          \
    if (!xlmr_status_.ok()) return xlmr_status_;   \
  } while (0)

#define XLMR_STATUS_CONCAT_INNER(a, b) a##b
#define XLMR_STATUS_CONCAT(a, b) XLMR_STATUS_CONCAT_INNER(a, b)

#define XLMR_ASSIGN_OR_RETURN(lhs, expr) \
  XLMR_ASSIGN_OR_RETURN_IMPL(XLMR_STATUS_CONCAT(xlmr_statusor_, __LINE__), lhs, expr)

#define XLMR_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                               \
  if (!statusor.ok()) return statusor.status();         \
  lhs = std::move(statusor).value()

#endif  // XLMR_FRAMEWORK_CORE_STATUS_MACROS_H_
