// farm-nvcc's per-call reports (issue 13) and farm-cc's per-compile reports (issue 25, the
// same RPC with kind HOST) turned into bounded counts. The reason text comes from a client,
// so it is checked, reduced to a short class ("unknown nvcc option '-Wextra'" -> "unknown
// nvcc option") and capped in number per build and in /metrics, so that no client can grow
// a build record or the metrics without bound. Each kind has its own counts, reason classes
// and caps.
#pragma once

#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "farm/v1/builds.pb.h"
#include "libfarm/metrics/registry.h"

namespace farm::coordinator {

inline constexpr size_t kMaxNvccReasonBytes = 1024;      // a report's reason, as sent
inline constexpr size_t kMaxNvccReasonClassBytes = 120;  // a reason class
inline constexpr size_t kMaxNvccReasonsPerBuild = 32;    // then "other"
inline constexpr size_t kMaxNvccReasonsInMetrics = 64;   // then "other"
inline constexpr absl::string_view kOtherNvccReason = "other";

// INVALID_ARGUMENT for an empty or oversized build id, an unknown kind or outcome, an oversized
// reason, or a reason on an outcome other than FALLBACK.
absl::Status CheckNvccCallReport(const farm::v1::ReportNvccCallRequest& report);

// The class a fallback is counted under: its first line without the "not decomposable: "
// prefix, cut before the first ": " (the details that follow vary per call), without quoted
// parts ('-Wextra', "k.cu", `x`) and words of 4 or more digits (ids, ports), control
// characters dropped, whitespace collapsed, at most kMaxNvccReasonClassBytes bytes (whole
// UTF-8 characters). "unknown" when nothing is left.
std::string NvccReasonClass(absl::string_view reason);

// "split", "cached", "fallback", "compile_error".
std::string NvccOutcomeName(farm::v1::NvccCallOutcome outcome);

// The outcome label of a `kind` call in /metrics: NvccOutcomeName, except that a host compile
// that ran on a worker is "worker" (nothing was split).
std::string CompileOutcomeName(farm::v1::CompileCallKind kind, farm::v1::NvccCallOutcome outcome);

// Where a build counts a `kind` call: Build.nvcc or Build.host_compiles.
farm::v1::NvccCalls& CallCountsOf(farm::v1::Build& build, farm::v1::CompileCallKind kind);

// Adds one call to `calls`; a fallback under `reason_class`, or under "other" once the build
// has kMaxNvccReasonsPerBuild classes.
void CountNvccCall(farm::v1::NvccCalls& calls, farm::v1::NvccCallOutcome outcome,
                   const std::string& reason_class);

// farm_nvcc_calls_total{outcome, reason} for kind NVCC, farm_cc_calls_total{outcome, reason}
// for kind HOST: reason is "" except for fallbacks, whose classes are capped at
// kMaxNvccReasonsInMetrics label values per kind over the process's life.
class NvccCallMetrics {
 public:
  explicit NvccCallMetrics(MetricsRegistry* metrics,
                           farm::v1::CompileCallKind kind = farm::v1::COMPILE_CALL_KIND_NVCC);
  void Count(farm::v1::NvccCallOutcome outcome, const std::string& reason_class);

 private:
  MetricsRegistry* const metrics_;
  const farm::v1::CompileCallKind kind_;
  absl::Mutex mu_;
  std::set<std::string> reasons_ ABSL_GUARDED_BY(mu_);
};

}  // namespace farm::coordinator
