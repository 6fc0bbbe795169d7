// Status helpers shared by every module: absl::Status / absl::StatusOr plus the two
// propagation macros. Header-only; thread-compatible.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace loom {

using absl::Status;
using absl::StatusOr;

}  // namespace loom

#define LOOM_STATUS_CONCAT_INNER(a, b) a##b
#define LOOM_STATUS_CONCAT(a, b) LOOM_STATUS_CONCAT_INNER(a, b)

// Evaluates `expr` (an absl::Status) and returns it from the enclosing function if not OK.
#define RETURN_IF_ERROR(expr)                    \
  do {                                           \
    ::absl::Status loom_status_ = (expr);        \
    if (!loom_status_.ok()) return loom_status_; \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, Fn())`: assigns the value of a StatusOr or returns its error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(LOOM_STATUS_CONCAT(loom_statusor_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return std::move(tmp).status(); \
  lhs = std::move(tmp).value()
