// Early returns on a failed absl::Status or absl::StatusOr, so a chain of steps that may each
// fail reads as the steps:
//
//   FARM_RETURN_IF_ERROR(store->Put(key, value));
//   FARM_ASSIGN_OR_RETURN(Digest digest, blobs->Lookup(request.digest()));
//   FARM_ASSIGN_OR_RETURN(*response, registry->Get(id));
//
// The enclosing function returns absl::Status or absl::StatusOr<T>; the error is returned
// unchanged (code, message and payloads).
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Evaluates the expression (an absl::Status) once; returns it from the enclosing function
// unless OK.
#define FARM_RETURN_IF_ERROR(...)                                 \
  do {                                                            \
    if (::absl::Status farm_status_macros_status = (__VA_ARGS__); \
        !farm_status_macros_status.ok()) {                        \
      return farm_status_macros_status;                           \
    }                                                             \
  } while (false)

// Evaluates the expression (an absl::StatusOr<T>) once: returns its status from the enclosing
// function unless OK, else moves its value into `lhs`, which either declares a variable
// (`FARM_ASSIGN_OR_RETURN(auto blob, ...)`) or names one (`FARM_ASSIGN_OR_RETURN(*out, ...)`).
// It expands to several statements: inside an if or a loop, give the body braces. `lhs` may
// not hold an unparenthesized comma (use an alias or `auto`).
#define FARM_ASSIGN_OR_RETURN(lhs, ...)     \
  FARM_STATUS_MACROS_ASSIGN_OR_RETURN_IMPL( \
      FARM_STATUS_MACROS_CONCAT(farm_status_macros_statusor_, __LINE__), lhs, (__VA_ARGS__))

// Implementation details of the macros above.
#define FARM_STATUS_MACROS_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                                             \
  if (!statusor.ok()) return std::move(statusor).status();            \
  lhs = *std::move(statusor)
#define FARM_STATUS_MACROS_CONCAT_INNER(a, b) a##b
#define FARM_STATUS_MACROS_CONCAT(a, b) FARM_STATUS_MACROS_CONCAT_INNER(a, b)
