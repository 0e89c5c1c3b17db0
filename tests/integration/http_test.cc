// The coordinator's HTTP side as a client sees it: /healthz and Prometheus /metrics.
#include <signal.h>

#include <httplib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libfarm/net/address.h"
#include "tests/support/farm_processes.h"

namespace farm::testing {
namespace {

using ::testing::HasSubstr;

TEST(HttpTest, HealthzAndMetricsFollowTheFleet) {
  TempDir dir("http");
  auto c = CoordinatorProcess::Start(dir / "data");
  ASSERT_TRUE(c.ok()) << c.status();
  auto hp = ParseHostPort(c->http_address());
  ASSERT_TRUE(hp.ok());
  httplib::Client http(hp->host, hp->port);

  auto health = http.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");

  auto before = http.Get("/metrics");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->status, 200);
  EXPECT_THAT(before->get_header_value("Content-Type"), HasSubstr("text/plain; version=0.0.4"));
  EXPECT_THAT(before->body, HasSubstr("farm_workers{state=\"online\"} 0\n"));

  auto w = WorkerProcess::Start(c->grpc_address(), c->token_file(), "w1", dir.path().string(),
                                {"--slots", "3", "--cuda-path", "none"});
  ASSERT_TRUE(w.ok());
  std::string body;
  EXPECT_TRUE(WaitFor(
      [&] {
        auto m = http.Get("/metrics");
        body = m ? m->body : "";
        return body.find("farm_workers{state=\"online\"} 1\n") != std::string::npos;
      },
      absl::Seconds(30)))
      << body;
  EXPECT_THAT(body, HasSubstr("farm_worker_slots_online 3\n"));
  EXPECT_THAT(body, HasSubstr("farm_rpc_requests_total{code=\"OK\",method=\"Register\"} 1\n"));
  EXPECT_THAT(body, HasSubstr("# TYPE farm_workers gauge\n"));

  auto missing = http.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);

  w->process().Signal(SIGKILL);
  c->process().Signal(SIGKILL);
  w->process().Wait(absl::Seconds(5));
  c->process().Wait(absl::Seconds(5));
}

}  // namespace
}  // namespace farm::testing
