#include "coordinator/builds/nvcc_call_counts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace farm::coordinator {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

farm::v1::ReportNvccCallRequest Report(farm::v1::NvccCallOutcome outcome, std::string reason = "") {
  farm::v1::ReportNvccCallRequest r;
  r.set_build_id("b1");
  r.set_outcome(outcome);
  r.set_reason(std::move(reason));
  return r;
}

farm::v1::ReportNvccCallRequest Fallback(farm::v1::FallbackReason code, std::string reason) {
  farm::v1::ReportNvccCallRequest r = Report(farm::v1::NVCC_CALL_OUTCOME_FALLBACK, reason);
  r.set_reason_code(code);
  return r;
}

// What the registry does with a report: counted under its key, its text as the example.
void Count(farm::v1::NvccCalls& calls, const farm::v1::ReportNvccCallRequest& r) {
  ASSERT_TRUE(CheckNvccCallReport(r).ok()) << CheckNvccCallReport(r);
  CountNvccCall(calls, r.outcome(), FallbackKey(r), r.reason());
}

TEST(NvccReasonClassTest, DropsTheQuotedAndVaryingParts) {
  EXPECT_EQ(NvccReasonClass("not decomposable: unknown nvcc option '-Wextra'"),
            "unknown nvcc option");
  EXPECT_EQ(NvccReasonClass("not decomposable: -G device debug info records the compiling "
                            "directory"),
            "-G device debug info records the compiling directory");
  EXPECT_EQ(NvccReasonClass("not decomposable: -MD/-MMD without both -MF and -MT"),
            "-MD/-MMD without both -MF and -MT");
  EXPECT_EQ(NvccReasonClass("FARM_NVCC_DISABLE=1"), "FARM_NVCC_DISABLE=1");
  // Quotes first (a quoted part may hold ": "), then the details after the first ": ".
  EXPECT_EQ(NvccReasonClass("not decomposable: 'a: b.txt' is not a .cu file: no device code"),
            "is not a .cu file");
  EXPECT_EQ(NvccReasonClass("device action 0193aa77 for sm_90 did not run: lost worker w1"),
            "device action for sm_90 did not run");
  EXPECT_EQ(NvccReasonClass("no token file. Fix: run farmctl up"), "no token file");
  EXPECT_EQ(NvccReasonClass("-arch value \"sm_9x\" and `more"), "-arch value and");
}

TEST(NvccReasonClassTest, IsSafeForHostileText) {
  EXPECT_EQ(NvccReasonClass(""), "unknown");
  EXPECT_EQ(NvccReasonClass("'only quoted'"), "unknown");
  EXPECT_EQ(NvccReasonClass("bad\x01\x1b[31mred\x7f \xe2\x80\xae reversed\nsecond line"),
            "bad [31mred reversed");
  const std::string longer(5000, 'x');
  EXPECT_EQ(NvccReasonClass(longer).size(), kMaxNvccReasonClassBytes);
  EXPECT_EQ(NvccReasonClass(std::string(130, 'y') + "\n"), std::string(120, 'y'));
}

TEST(FallbackKeyTest, ACodeIsCountedByItsNameWhateverItsTextSays) {
  EXPECT_EQ(FallbackReasonName(farm::v1::FALLBACK_REASON_SCAN_FAILED), "scan_failed");
  EXPECT_EQ(FallbackReasonName(farm::v1::FALLBACK_REASON_NO_WORKER), "no_worker");
  EXPECT_EQ(FallbackReasonName(farm::v1::FALLBACK_REASON_UNSPECIFIED), "");
  EXPECT_EQ(FallbackReasonName(static_cast<farm::v1::FallbackReason>(99)), "");
  // The apostrophe read as an unclosed quote left "the farm" as this one's class.
  EXPECT_EQ(FallbackKey(Fallback(farm::v1::FALLBACK_REASON_FARM_COMPILE_FAILED,
                                 "the farm's compile failed (exit 1, worker w1) where the local "
                                 "one passed")),
            "farm_compile_failed");
  // A launcher older than the codes: its text's class, as before.
  EXPECT_EQ(FallbackKey(Report(farm::v1::NVCC_CALL_OUTCOME_FALLBACK,
                               "not decomposable: unknown nvcc option '-Wextra'")),
            "unknown nvcc option");
}

// -fprofile-use=PATH once per profile made a class per path and filled the build's 32 places:
// with a code it is one count, and its first texts stay as examples.
TEST(CountNvccCallTest, ReasonsCarryingAValueCountAsOneCodeWithItsFirstExamples) {
  farm::v1::NvccCalls calls;
  for (int i = 0; i < 40; ++i) {
    Count(calls, Fallback(farm::v1::FALLBACK_REASON_COMMAND_LINE,
                          absl::StrCat("-fprofile-use=/prof/unit", i, ".gcda: profile data")));
  }
  Count(calls, Fallback(farm::v1::FALLBACK_REASON_SCAN_FAILED, "the dependency scan failed"));
  EXPECT_EQ(calls.fallbacks(), 41u);
  ASSERT_EQ(calls.fallback_reasons().size(), 2u);
  EXPECT_EQ(calls.fallback_reasons().at("command_line"), 40u);
  EXPECT_EQ(calls.fallback_reasons().at("scan_failed"), 1u);
  ASSERT_EQ(calls.fallback_examples().at("command_line").details_size(),
            static_cast<int>(kMaxFallbackExamples));
  EXPECT_EQ(calls.fallback_examples().at("command_line").details(0),
            "-fprofile-use=/prof/unit0.gcda: profile data");
  EXPECT_EQ(calls.fallback_examples().at("command_line").details(2),
            "-fprofile-use=/prof/unit2.gcda: profile data");
}

TEST(CountNvccCallTest, ExamplesAreDistinctOneLineAndCutOnACharacter) {
  farm::v1::NvccCalls calls;
  for (int i = 0; i < 3; ++i) {
    Count(calls, Fallback(farm::v1::FALLBACK_REASON_FARM_ERROR, "lost worker w1\nretry"));
  }
  Count(calls, Fallback(farm::v1::FALLBACK_REASON_FARM_ERROR, std::string(199, 'x') + "\u00e9"));
  const auto& examples = calls.fallback_examples().at("farm_error").details();
  ASSERT_EQ(examples.size(), 2);
  EXPECT_EQ(examples[0], "lost worker w1 retry");
  // The two bytes of 'é' would end past 200 bytes: cut before it, not through it.
  EXPECT_EQ(examples[1], std::string(199, 'x'));
}

// Codes are a fixed few: however many classes of text came first, a code has its own count.
TEST(CountNvccCallTest, ACodeIsNeverPushedIntoOther) {
  farm::v1::NvccCalls calls;
  for (int i = 0; i < 100; ++i) {
    CountNvccCall(calls, farm::v1::NVCC_CALL_OUTCOME_FALLBACK, absl::StrCat("reason ", i));
  }
  Count(calls, Fallback(farm::v1::FALLBACK_REASON_DISABLED, "FARM_CC_DISABLE=1"));
  EXPECT_EQ(calls.fallback_reasons().at("disabled"), 1u);
}

TEST(CheckNvccCallReportTest, RefusesMalformedReports) {
  EXPECT_TRUE(CheckNvccCallReport(Report(farm::v1::NVCC_CALL_OUTCOME_SPLIT)).ok());
  EXPECT_TRUE(
      CheckNvccCallReport(Report(farm::v1::NVCC_CALL_OUTCOME_FALLBACK, std::string(1024, 'r')))
          .ok());
  auto too_long = Report(farm::v1::NVCC_CALL_OUTCOME_FALLBACK, std::string(1025, 'r'));
  EXPECT_EQ(CheckNvccCallReport(too_long).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckNvccCallReport(Report(farm::v1::NVCC_CALL_OUTCOME_UNSPECIFIED)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckNvccCallReport(Report(static_cast<farm::v1::NvccCallOutcome>(77))).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckNvccCallReport(Report(farm::v1::NVCC_CALL_OUTCOME_SPLIT, "why")).code(),
            absl::StatusCode::kInvalidArgument);
  auto no_build = Report(farm::v1::NVCC_CALL_OUTCOME_SPLIT);
  no_build.set_build_id(std::string(129, 'b'));
  EXPECT_EQ(CheckNvccCallReport(no_build).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(CheckNvccCallReport(Fallback(farm::v1::FALLBACK_REASON_NO_WORKER, "")).ok());
  const absl::Status unknown_code =
      CheckNvccCallReport(Fallback(static_cast<farm::v1::FallbackReason>(99), "why"));
  EXPECT_EQ(unknown_code.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown_code.message(), HasSubstr("Fix:"));
  auto split_with_code = Report(farm::v1::NVCC_CALL_OUTCOME_SPLIT);
  split_with_code.set_reason_code(farm::v1::FALLBACK_REASON_DISABLED);
  EXPECT_EQ(CheckNvccCallReport(split_with_code).code(), absl::StatusCode::kInvalidArgument);
}

TEST(CheckNvccCallReportTest, TakesHostCompilesWithTheSameChecksAndRefusesUnknownKinds) {
  auto host = Report(farm::v1::NVCC_CALL_OUTCOME_FALLBACK, "-E output differs");
  host.set_kind(farm::v1::COMPILE_CALL_KIND_HOST);
  EXPECT_TRUE(CheckNvccCallReport(host).ok());
  host.set_reason(std::string(1025, 'r'));
  const absl::Status too_long = CheckNvccCallReport(host);
  EXPECT_EQ(too_long.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_long.message(), HasSubstr("a host compile"));
  auto host_split_with_reason = Report(farm::v1::NVCC_CALL_OUTCOME_SPLIT, "why");
  host_split_with_reason.set_kind(farm::v1::COMPILE_CALL_KIND_HOST);
  EXPECT_EQ(CheckNvccCallReport(host_split_with_reason).code(), absl::StatusCode::kInvalidArgument);
  auto unknown_kind = Report(farm::v1::NVCC_CALL_OUTCOME_SPLIT);
  unknown_kind.set_kind(static_cast<farm::v1::CompileCallKind>(9));
  const absl::Status refused = CheckNvccCallReport(unknown_kind);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("Fix:"));
}

TEST(CallCountsOfTest, HostCompilesAndNvccCallsAreCountedApart) {
  farm::v1::Build build;
  CountNvccCall(CallCountsOf(build, farm::v1::COMPILE_CALL_KIND_HOST),
                farm::v1::NVCC_CALL_OUTCOME_FALLBACK, "no worker has the toolchain");
  CountNvccCall(CallCountsOf(build, farm::v1::COMPILE_CALL_KIND_HOST),
                farm::v1::NVCC_CALL_OUTCOME_SPLIT, "");
  CountNvccCall(CallCountsOf(build, farm::v1::COMPILE_CALL_KIND_NVCC),
                farm::v1::NVCC_CALL_OUTCOME_FALLBACK, "unknown nvcc option");
  EXPECT_EQ(build.host_compiles().total(), 2u);
  EXPECT_EQ(build.host_compiles().split(), 1u);
  EXPECT_EQ(build.host_compiles().fallbacks(), 1u);
  ASSERT_EQ(build.host_compiles().fallback_reasons().size(), 1u);
  EXPECT_EQ(build.host_compiles().fallback_reasons().at("no worker has the toolchain"), 1u);
  EXPECT_EQ(build.nvcc().total(), 1u);
  ASSERT_EQ(build.nvcc().fallback_reasons().size(), 1u);
  EXPECT_EQ(build.nvcc().fallback_reasons().at("unknown nvcc option"), 1u);
}

TEST(CountNvccCallTest, CountsEachOutcomeAndCapsReasonsPerBuild) {
  farm::v1::NvccCalls calls;
  CountNvccCall(calls, farm::v1::NVCC_CALL_OUTCOME_SPLIT, "");
  CountNvccCall(calls, farm::v1::NVCC_CALL_OUTCOME_CACHED, "");
  CountNvccCall(calls, farm::v1::NVCC_CALL_OUTCOME_COMPILE_ERROR, "");
  CountNvccCall(calls, farm::v1::NVCC_CALL_OUTCOME_FALLBACK, "unknown nvcc option");
  CountNvccCall(calls, farm::v1::NVCC_CALL_OUTCOME_FALLBACK, "unknown nvcc option");
  EXPECT_EQ(calls.total(), 5u);
  EXPECT_EQ(calls.split(), 1u);
  EXPECT_EQ(calls.cached(), 1u);
  EXPECT_EQ(calls.compile_errors(), 1u);
  EXPECT_EQ(calls.fallbacks(), 2u);
  EXPECT_EQ(calls.fallback_reasons().at("unknown nvcc option"), 2u);

  for (int i = 0; i < 100; ++i) {
    CountNvccCall(calls, farm::v1::NVCC_CALL_OUTCOME_FALLBACK, absl::StrCat("reason ", i));
  }
  EXPECT_EQ(calls.fallback_reasons().size(), kMaxNvccReasonsPerBuild);
  EXPECT_EQ(calls.fallbacks(), 102u);
  // 1 + 30 named classes, 70 under "other".
  EXPECT_EQ(calls.fallback_reasons().at("other"), 70u);
  EXPECT_EQ(calls.fallback_reasons().at("reason 29"), 1u);
  EXPECT_EQ(calls.fallback_reasons().count("reason 30"), 0u);
  // A class already counted keeps its own count.
  CountNvccCall(calls, farm::v1::NVCC_CALL_OUTCOME_FALLBACK, "reason 3");
  EXPECT_EQ(calls.fallback_reasons().at("reason 3"), 2u);
}

TEST(NvccCallMetricsTest, ExposesOutcomesAndCapsReasonLabels) {
  MetricsRegistry metrics;
  NvccCallMetrics counter(&metrics);
  counter.Count(farm::v1::NVCC_CALL_OUTCOME_SPLIT, "");
  counter.Count(farm::v1::NVCC_CALL_OUTCOME_SPLIT, "");
  counter.Count(farm::v1::NVCC_CALL_OUTCOME_FALLBACK, "unknown nvcc option");
  for (int i = 0; i < 200; ++i) {
    counter.Count(farm::v1::NVCC_CALL_OUTCOME_FALLBACK, absl::StrCat("reason ", i));
  }
  const std::string text = metrics.Render();
  EXPECT_THAT(text, HasSubstr("farm_nvcc_calls_total{outcome=\"split\",reason=\"\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("farm_nvcc_calls_total{outcome=\"fallback\",reason=\"unknown nvcc "
                              "option\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("reason=\"reason 61\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("reason=\"reason 62\"")));
  EXPECT_THAT(text,
              HasSubstr("farm_nvcc_calls_total{outcome=\"fallback\",reason=\"other\"} 138\n"));
  // A code's name is one of a fixed few label values: past the cap of classes, still its own.
  counter.Count(farm::v1::NVCC_CALL_OUTCOME_FALLBACK, "no_coordinator");
  EXPECT_THAT(metrics.Render(), HasSubstr("farm_nvcc_calls_total{outcome=\"fallback\",reason="
                                          "\"no_coordinator\"} 1\n"));
}

TEST(NvccCallMetricsTest, HostCompilesHaveTheirOwnMetricAndReasonCap) {
  MetricsRegistry metrics;
  NvccCallMetrics nvcc(&metrics, farm::v1::COMPILE_CALL_KIND_NVCC);
  NvccCallMetrics host(&metrics, farm::v1::COMPILE_CALL_KIND_HOST);
  for (int i = 0; i < 100; ++i) {
    nvcc.Count(farm::v1::NVCC_CALL_OUTCOME_FALLBACK, absl::StrCat("nvcc reason ", i));
  }
  host.Count(farm::v1::NVCC_CALL_OUTCOME_SPLIT, "");
  host.Count(farm::v1::NVCC_CALL_OUTCOME_CACHED, "");
  host.Count(farm::v1::NVCC_CALL_OUTCOME_FALLBACK, "no worker has the toolchain");
  const std::string text = metrics.Render();
  EXPECT_THAT(text, HasSubstr("farm_cc_calls_total{outcome=\"worker\",reason=\"\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("farm_cc_calls_total{outcome=\"cached\",reason=\"\"} 1\n"));
  // nvcc's reasons filled nvcc's label cap, not farm-cc's.
  EXPECT_THAT(text, HasSubstr("farm_cc_calls_total{outcome=\"fallback\",reason=\"no worker has "
                              "the toolchain\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("farm_nvcc_calls_total{outcome=\"split\"")));
  EXPECT_THAT(text, Not(HasSubstr("farm_cc_calls_total{outcome=\"split\"")));
}

}  // namespace
}  // namespace farm::coordinator
