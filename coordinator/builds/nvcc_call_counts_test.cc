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
