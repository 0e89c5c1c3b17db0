#include "coordinator/builds/nvcc_call_counts.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "coordinator/builds/call_times.h"

namespace farm::coordinator {
namespace {

using farm::v1::NvccCallOutcome;

// Removes '...', "..." and `...` (an unterminated one to the end of the text).
std::string WithoutQuotedParts(absl::string_view text) {
  std::string out;
  char open = 0;
  for (char c : text) {
    if (open != 0) {
      if (c == open) open = 0;
    } else if (c == '\'' || c == '"' || c == '`') {
      open = c;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// "an nvcc call", "a host compile": what a report is about, for its errors.
std::string CallNoun(farm::v1::CompileCallKind kind) {
  return kind == farm::v1::COMPILE_CALL_KIND_HOST ? "a host compile" : "an nvcc call";
}

bool IsIdLike(absl::string_view word) {
  int digits = 0;
  for (char c : word) digits += absl::ascii_isdigit(static_cast<unsigned char>(c)) ? 1 : 0;
  return digits >= 4;
}

// A code's name is one of a fixed few: never capped. A class of text is.
bool IsFallbackReasonName(const std::string& key) {
  for (int code = farm::v1::FallbackReason_MIN; code <= farm::v1::FallbackReason_MAX; ++code) {
    if (farm::v1::FallbackReason_IsValid(code) &&
        key == FallbackReasonName(static_cast<farm::v1::FallbackReason>(code)) && !key.empty()) {
      return true;
    }
  }
  return false;
}

// `text` as one line of printable UTF-8, cut at `max_bytes` on a character's start.
std::string Example(absl::string_view text, size_t max_bytes) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u == 0x7f ? ' ' : c);
  }
  if (out.size() > max_bytes) {
    size_t end = max_bytes;
    while (end > 0 && (static_cast<unsigned char>(out[end]) & 0xC0) == 0x80) --end;
    out.resize(end);
  }
  return out;
}

void AddExample(farm::v1::NvccCalls& calls, const std::string& key, absl::string_view detail) {
  if (detail.empty()) return;
  auto& examples = *(*calls.mutable_fallback_examples())[key].mutable_details();
  if (static_cast<size_t>(examples.size()) >= kMaxFallbackExamples) return;
  std::string example = Example(detail, kMaxFallbackExampleBytes);
  if (std::find(examples.begin(), examples.end(), example) == examples.end()) {
    examples.Add(std::move(example));
  }
}

}  // namespace

absl::Status CheckNvccCallReport(const farm::v1::ReportNvccCallRequest& report) {
  if (!farm::v1::CompileCallKind_IsValid(report.kind())) {
    return absl::InvalidArgumentError(
        absl::StrCat("compile call kind ", static_cast<int>(report.kind()),
                     " is not one of nvcc, host. Fix: use a farm-nvcc or farm-cc as new as the "
                     "coordinator"));
  }
  const std::string noun = CallNoun(report.kind());
  if (report.build_id().empty() || report.build_id().size() > 128) {
    return absl::InvalidArgumentError(
        absl::StrCat(noun, " report names a build id of ", report.build_id().size(),
                     " bytes. Fix: set FARM_BUILD_ID to a build id (1 to 128 bytes)"));
  }
  if (report.outcome() == farm::v1::NVCC_CALL_OUTCOME_UNSPECIFIED ||
      !farm::v1::NvccCallOutcome_IsValid(report.outcome())) {
    return absl::InvalidArgumentError(
        absl::StrCat("the outcome ", static_cast<int>(report.outcome()), " of ", noun,
                     " is not one of split, cached, fallback, compile_error. Fix: use a "
                     "farm-nvcc or farm-cc as new as the coordinator"));
  }
  if (report.reason().size() > kMaxCallReasonBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the reason of ", noun, " of ", report.reason().size(),
                     " bytes is too long. Fix: send at most ", kMaxCallReasonBytes, " bytes"));
  }
  if (!farm::v1::FallbackReason_IsValid(report.reason_code())) {
    return absl::InvalidArgumentError(
        absl::StrCat("the reason code ", static_cast<int>(report.reason_code()), " of ", noun,
                     " is not one this coordinator knows. Fix: use a farm-nvcc or farm-cc as "
                     "new as the coordinator"));
  }
  if (report.outcome() != farm::v1::NVCC_CALL_OUTCOME_FALLBACK &&
      (!report.reason().empty() || report.reason_code() != farm::v1::FALLBACK_REASON_UNSPECIFIED)) {
    return absl::InvalidArgumentError(absl::StrCat("a reason is for fallbacks only, not for ",
                                                   NvccOutcomeName(report.outcome()),
                                                   ". Fix: leave it and its code empty"));
  }
  return CheckCallTimes(report);
}

std::string NvccReasonClass(absl::string_view reason) {
  absl::string_view first_line = reason.substr(0, reason.find('\n'));
  absl::ConsumePrefix(&first_line, "not decomposable: ");
  std::string text = WithoutQuotedParts(first_line);
  for (const char* cut : {". Fix:", ": "}) {
    if (size_t at = text.find(cut); at != std::string::npos) text.resize(at);
  }
  std::string printable;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80 || u == 0x7f) continue;  // non-ASCII and DEL dropped
    printable.push_back(u < 0x20 ? ' ' : c);
  }
  std::vector<absl::string_view> words;
  for (absl::string_view w : absl::StrSplit(printable, ' ', absl::SkipWhitespace())) {
    if (!IsIdLike(w)) words.push_back(w);
  }
  std::string out = absl::StrJoin(words, " ");
  if (out.size() > kMaxNvccReasonClassBytes) out.resize(kMaxNvccReasonClassBytes);
  while (!out.empty() && (out.back() == ' ' || out.back() == ',' || out.back() == '.' ||
                          out.back() == ':' || out.back() == ';')) {
    out.pop_back();
  }
  return out.empty() ? "unknown" : out;
}

std::string FallbackReasonName(farm::v1::FallbackReason reason) {
  if (reason == farm::v1::FALLBACK_REASON_UNSPECIFIED ||
      !farm::v1::FallbackReason_IsValid(reason)) {
    return "";
  }
  // FALLBACK_REASON_NO_WORKER -> "no_worker": the enum's own words, so a code added to the
  // proto is named without a table here.
  return absl::AsciiStrToLower(
      absl::StripPrefix(farm::v1::FallbackReason_Name(reason), "FALLBACK_REASON_"));
}

std::string FallbackKey(const farm::v1::ReportNvccCallRequest& report) {
  const std::string name = FallbackReasonName(report.reason_code());
  return name.empty() ? NvccReasonClass(report.reason()) : name;
}

std::string NvccOutcomeName(NvccCallOutcome outcome) {
  switch (outcome) {
    case farm::v1::NVCC_CALL_OUTCOME_SPLIT:
      return "split";
    case farm::v1::NVCC_CALL_OUTCOME_CACHED:
      return "cached";
    case farm::v1::NVCC_CALL_OUTCOME_FALLBACK:
      return "fallback";
    case farm::v1::NVCC_CALL_OUTCOME_COMPILE_ERROR:
      return "compile_error";
    default:
      return "unknown";
  }
}

std::string CompileOutcomeName(farm::v1::CompileCallKind kind, NvccCallOutcome outcome) {
  if (kind == farm::v1::COMPILE_CALL_KIND_HOST && outcome == farm::v1::NVCC_CALL_OUTCOME_SPLIT) {
    return "worker";
  }
  return NvccOutcomeName(outcome);
}

farm::v1::NvccCalls& CallCountsOf(farm::v1::Build& build, farm::v1::CompileCallKind kind) {
  return kind == farm::v1::COMPILE_CALL_KIND_HOST ? *build.mutable_host_compiles()
                                                  : *build.mutable_nvcc();
}

void CountNvccCall(farm::v1::NvccCalls& calls, NvccCallOutcome outcome, const std::string& reason,
                   absl::string_view detail) {
  calls.set_total(calls.total() + 1);
  switch (outcome) {
    case farm::v1::NVCC_CALL_OUTCOME_SPLIT:
      calls.set_split(calls.split() + 1);
      break;
    case farm::v1::NVCC_CALL_OUTCOME_CACHED:
      calls.set_cached(calls.cached() + 1);
      break;
    case farm::v1::NVCC_CALL_OUTCOME_COMPILE_ERROR:
      calls.set_compile_errors(calls.compile_errors() + 1);
      break;
    default: {
      calls.set_fallbacks(calls.fallbacks() + 1);
      auto& reasons = *calls.mutable_fallback_reasons();
      const bool known = reasons.count(reason) > 0 || IsFallbackReasonName(reason);
      // "other" itself takes the last of the kMaxNvccReasonsPerBuild places.
      const size_t named = reasons.size() - reasons.count(std::string(kOtherNvccReason));
      const std::string key =
          known || named + 1 < kMaxNvccReasonsPerBuild ? reason : std::string(kOtherNvccReason);
      reasons[key] += 1;
      AddExample(calls, key, detail);
      break;
    }
  }
}

NvccCallMetrics::NvccCallMetrics(MetricsRegistry* metrics, farm::v1::CompileCallKind kind)
    : metrics_(metrics), kind_(kind) {}

void NvccCallMetrics::Count(NvccCallOutcome outcome, const std::string& key) {
  std::string reason;
  if (outcome == farm::v1::NVCC_CALL_OUTCOME_FALLBACK) {
    absl::MutexLock lock(&mu_);
    if (IsFallbackReasonName(key)) {
      reason = key;
    } else if (reasons_.count(key) > 0 || reasons_.size() + 1 < kMaxNvccReasonsInMetrics) {
      reasons_.insert(key);
      reason = key;
    } else {
      reason = std::string(kOtherNvccReason);
    }
  }
  const bool host = kind_ == farm::v1::COMPILE_CALL_KIND_HOST;
  metrics_
      ->GetCounter(host ? "farm_cc_calls_total" : "farm_nvcc_calls_total",
                   host ? "farm-cc host compiles (gcc, g++, clang, clang++) reported by build "
                          "hosts, by outcome (worker, cached, fallback: ran on the build host, "
                          "compile_error) and, for fallbacks, reason class."
                        : "farm-nvcc calls reported by build hosts, by outcome (split, cached, "
                          "fallback, compile_error) and, for fallbacks, reason class.",
                   {{"outcome", CompileOutcomeName(kind_, outcome)}, {"reason", reason}})
      ->Increment();
}

}  // namespace farm::coordinator
