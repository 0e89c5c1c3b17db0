// farm-nvcc's per-call reports (issue 13) and farm-cc's per-compile reports (issue 25, the
// same RPC with kind HOST) turned into bounded counts. A fallback is counted by its reason
// code (FallbackReason: "command_line", "no_worker"), never by its text, which only adds
// examples; a launcher older than the codes sends text alone, which is reduced to a short
// class ("unknown nvcc option '-Wextra'" -> "unknown nvcc option") and capped in number per
// build and in /metrics, so that no client can grow a build record or the metrics without
// bound. Each kind has its own counts, reasons and caps.
#pragma once

#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "farm/v1/builds.pb.h"
#include "libfarm/client/call_report_limits.h"
#include "libfarm/metrics/registry.h"

namespace farm::coordinator {

inline constexpr size_t kMaxNvccReasonClassBytes = 120;  // a reason class
inline constexpr size_t kMaxNvccReasonsPerBuild = 32;    // classes of text; then "other"
inline constexpr size_t kMaxNvccReasonsInMetrics = 64;   // classes of text; then "other"
inline constexpr size_t kMaxFallbackExamples = 3;        // texts kept per reason
inline constexpr size_t kMaxFallbackExampleBytes = 200;  // of each
inline constexpr absl::string_view kOtherNvccReason = "other";

// INVALID_ARGUMENT for an empty or oversized build id, an unknown kind, outcome or reason code,
// an oversized reason, a reason or code on an outcome other than FALLBACK, or times that are
// not (CheckCallTimes).
absl::Status CheckNvccCallReport(const farm::v1::ReportNvccCallRequest& report);

// The class a fallback is counted under: its first line without the "not decomposable: "
// prefix, cut before the first ": " (the details that follow vary per call), without quoted
// parts ('-Wextra', "k.cu", `x`) and words of 4 or more digits (ids, ports), control
// characters dropped, whitespace collapsed, at most kMaxNvccReasonClassBytes bytes (whole
// UTF-8 characters). "unknown" when nothing is left.
std::string NvccReasonClass(absl::string_view reason);

// The name a code is counted and shown under: "scan_failed" for FALLBACK_REASON_SCAN_FAILED;
// "" for UNSPECIFIED and values this coordinator does not know.
std::string FallbackReasonName(farm::v1::FallbackReason reason);

// What a fallback `report` is counted under: its code's name, or without a code (a launcher
// older than the codes) NvccReasonClass of its text.
std::string FallbackKey(const farm::v1::ReportNvccCallRequest& report);

// "split", "cached", "fallback", "compile_error".
std::string NvccOutcomeName(farm::v1::NvccCallOutcome outcome);

// The outcome label of a `kind` call in /metrics: NvccOutcomeName, except that a host compile
// that ran on a worker is "worker" (nothing was split).
std::string CompileOutcomeName(farm::v1::CompileCallKind kind, farm::v1::NvccCallOutcome outcome);

// Where a build counts a `kind` call: Build.nvcc or Build.host_compiles.
farm::v1::NvccCalls& CallCountsOf(farm::v1::Build& build, farm::v1::CompileCallKind kind);

// Adds one call to `calls`. A fallback counts under `reason` (FallbackKey), a class of text
// under "other" once the build has kMaxNvccReasonsPerBuild of them, and its `detail` (the
// report's text) is kept among that reason's first kMaxFallbackExamples distinct examples,
// without control characters and cut at kMaxFallbackExampleBytes.
void CountNvccCall(farm::v1::NvccCalls& calls, farm::v1::NvccCallOutcome outcome,
                   const std::string& reason, absl::string_view detail = "");

// farm_nvcc_calls_total{outcome, reason} for kind NVCC, farm_cc_calls_total{outcome, reason}
// for kind HOST: reason is "" except for fallbacks, a code's name or a class of text, the
// classes capped at kMaxNvccReasonsInMetrics label values per kind over the process's life.
class NvccCallMetrics {
 public:
  explicit NvccCallMetrics(MetricsRegistry* metrics,
                           farm::v1::CompileCallKind kind = farm::v1::COMPILE_CALL_KIND_NVCC);
  // `key`: FallbackKey for a fallback, else "".
  void Count(farm::v1::NvccCallOutcome outcome, const std::string& key);

 private:
  MetricsRegistry* const metrics_;
  const farm::v1::CompileCallKind kind_;
  absl::Mutex mu_;
  std::set<std::string> reasons_ ABSL_GUARDED_BY(mu_);
};

}  // namespace farm::coordinator
