#include "libfarm/metrics/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::HasSubstr;

TEST(MetricsRegistryTest, RendersCountersGaugesAndHistograms) {
  MetricsRegistry r;
  r.GetCounter("farm_requests_total", "Requests.", {{"method", "Register"}})->Increment(3);
  r.GetGauge("farm_workers", "Workers by state.", {{"state", "online"}})->Set(2);
  auto* h = r.GetHistogram("farm_latency_seconds", "Latency.", {0.1, 1});
  h->Observe(0.05);
  h->Observe(0.5);
  h->Observe(5);
  const std::string text = r.Render();
  EXPECT_THAT(text, HasSubstr("# TYPE farm_requests_total counter\n"));
  EXPECT_THAT(text, HasSubstr("farm_requests_total{method=\"Register\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("farm_workers{state=\"online\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("farm_latency_seconds_bucket{le=\"0.1\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("farm_latency_seconds_bucket{le=\"1\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("farm_latency_seconds_bucket{le=\"+Inf\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("farm_latency_seconds_count 3\n"));
  EXPECT_THAT(text, HasSubstr("farm_latency_seconds_sum 5.55\n"));
}

TEST(MetricsRegistryTest, SameSeriesIsReturnedTwice) {
  MetricsRegistry r;
  EXPECT_EQ(r.GetCounter("c", "h", {{"a", "1"}}), r.GetCounter("c", "h", {{"a", "1"}}));
  EXPECT_NE(r.GetCounter("c", "h", {{"a", "1"}}), r.GetCounter("c", "h", {{"a", "2"}}));
}

TEST(MetricsRegistryTest, EscapesLabelValuesAndRunsHooks) {
  MetricsRegistry r;
  Gauge* g = r.GetGauge("g", "help", {{"path", "a\"b\\c"}});
  r.AddRefreshHook([g] { g->Set(7); });
  EXPECT_THAT(r.Render(), HasSubstr("g{path=\"a\\\"b\\\\c\"} 7\n"));
}

}  // namespace
}  // namespace farm
