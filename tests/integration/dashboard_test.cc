// The dashboard in a real headless Chromium against a live farm running a build: the build
// is listed, its page shows per-arch progress, the timeline picture has bars, the failing
// action's error text is on the page, and a screenshot is kept as a test artifact.
#include <signal.h>

#include <filesystem>

#include <httplib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "farm/v1/builds.grpc.pb.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/auth/token.h"
#include "libfarm/net/address.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/token_auth.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kBuild[] = "dash-b1";

TEST(DashboardTest, ChromiumShowsABuildInProgress) {
  for (const char* tool : {FARM_TOOLS_PYTHON, "/usr/bin/chromium", "/usr/bin/chromedriver"}) {
    ASSERT_TRUE(std::filesystem::exists(tool))
        << tool << " is missing. Fix: run scripts/install-deps.sh";
  }
  TempDir dir("dashboard");
  auto started = TestFarm::Start(
      dir.path(), {.workers = NumberedWorkers(2, {.args = {"--cuda-path", "none"}, .slots = 2})});
  ASSERT_TRUE(started.ok()) << started.status();
  TestFarm& test_farm = **started;

  auto actions = ActionClient::Connect(test_farm.address(), test_farm.AdminToken());
  const std::string salt = std::to_string(absl::ToUnixNanos(absl::Now()));
  std::vector<farm::v1::Action> batch;
  auto shell = [&](const std::string& script, const std::string& shard) {
    farm::v1::Action a;
    a.add_argv("/bin/sh");
    a.add_argv("-c");
    a.add_argv(absl::StrCat(script, " # ", salt));
    (*a.mutable_env())["PATH"] = "/usr/bin:/bin";
    a.set_build_id(kBuild);
    a.set_shard(shard);
    batch.push_back(a);
  };
  // Quick actions first so the page has finished bars, then slow ones it sees running.
  for (int i = 0; i < 3; ++i) shell(absl::StrCat("echo quick ", i), i % 2 ? "sm_80" : "sm_90");
  // Its error text carries a terminal escape (a window title): shown, not obeyed.
  shell(
      "printf '\\033]0;owned\\007' >&2; echo 'nvlink error: undefined reference to cuLaunch' >&2; "
      "exit 2",
      "sm_80");
  for (int i = 0; i < 6; ++i)
    shell(absl::StrCat("sleep 3; echo slow ", i), i % 2 ? "sm_80" : "sm_90");
  auto submitted = actions->Execute(batch);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  // farm-nvcc's reports for two calls: one split, one ran plain nvcc.
  auto builds = farm::v1::BuildService::NewStub(DialCoordinator(test_farm.address()));
  for (const char* reason : {"", "not decomposable: unknown nvcc option '-Wextra'"}) {
    grpc::ClientContext ctx;
    AttachToken(ctx, test_farm.AdminToken());
    farm::v1::ReportNvccCallRequest report;
    report.set_build_id(kBuild);
    report.set_outcome(*reason ? farm::v1::NVCC_CALL_OUTCOME_FALLBACK
                               : farm::v1::NVCC_CALL_OUTCOME_SPLIT);
    report.set_reason(reason);
    farm::v1::ReportNvccCallResponse response;
    grpc::Status s = builds->ReportNvccCall(&ctx, report, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  // farm-cc's reports for two host compiles: one ran on a worker, one ran locally, counted by
  // its code (the nvcc report above has none, as an older farm-nvcc's: counted by its text).
  for (const char* reason : {"", "no worker has the toolchain: 'g++-13'"}) {
    grpc::ClientContext ctx;
    AttachToken(ctx, test_farm.AdminToken());
    farm::v1::ReportNvccCallRequest report;
    report.set_build_id(kBuild);
    report.set_kind(farm::v1::COMPILE_CALL_KIND_HOST);
    report.set_outcome(*reason ? farm::v1::NVCC_CALL_OUTCOME_FALLBACK
                               : farm::v1::NVCC_CALL_OUTCOME_SPLIT);
    if (*reason) report.set_reason_code(farm::v1::FALLBACK_REASON_NO_WORKER);
    report.set_reason(reason);
    farm::v1::ReportNvccCallResponse response;
    grpc::Status s = builds->ReportNvccCall(&ctx, report, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  {
    grpc::ClientContext ctx;
    AttachToken(ctx, test_farm.AdminToken());
    farm::v1::AppendBuildLogRequest req;
    req.set_build_id(kBuild);
    req.set_data(
        "linking\n\x1b[2J\x1b]52;c;ZXZpbA==\x07"
        "done \xe2\x9c\x93\n");
    farm::v1::AppendBuildLogResponse resp;
    ASSERT_TRUE(builds->AppendBuildLog(&ctx, req, &resp).ok());
  }

  const std::string artifacts = absl::StrCat(FARM_BUILD_DIR, "/test-artifacts");
  std::filesystem::create_directories(artifacts);
  const std::string screenshot = artifacts + "/dashboard.png";
  std::filesystem::remove(screenshot);
  auto r = RunCommand(
      {FARM_TOOLS_PYTHON, absl::StrCat(FARM_TEST_SCRIPTS_DIR, "/dashboard_driver.py"),
       absl::StrCat("http://", test_farm.coordinator().http_address()), kBuild, screenshot},
      absl::Seconds(60));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->exit_code, 0) << r->stderr_text << r->stdout_text;
  const nlohmann::json seen = nlohmann::json::parse(r->stdout_text, nullptr, false);
  ASSERT_TRUE(seen.is_object()) << r->stdout_text;

  // Per-arch progress: one row and bar per shard, with done/total.
  ASSERT_TRUE(seen["shards"].contains("sm_80")) << seen.dump();
  ASSERT_TRUE(seen["shards"].contains("sm_90")) << seen.dump();
  EXPECT_THAT(seen["shards"]["sm_80"].get<std::string>(), HasSubstr("/5"));
  EXPECT_THAT(seen["shards"]["sm_90"].get<std::string>(), HasSubstr("/5"));
  EXPECT_EQ(seen["progress_bars"], 2);
  // The timeline is a picture with bars for actions that ran, in both shards' colours.
  EXPECT_GE(seen["timeline_bars"].get<int>(), 4);
  EXPECT_THAT(seen["timeline_shards"], Contains("sm_80"));
  EXPECT_THAT(seen["timeline_shards"], Contains("sm_90"));
  EXPECT_EQ(seen["timeline_lanes"], 2) << "one lane per worker";
  ASSERT_EQ(seen["failures"].size(), 1u) << seen.dump();
  EXPECT_THAT(seen["failures"][0].get<std::string>(),
              HasSubstr("nvlink error: undefined reference"));
  // Control characters from the build are shown as text (issue 15, item 7).
  EXPECT_THAT(seen["failures"][0].get<std::string>(), HasSubstr("\\x1b]0;owned\\x07"));
  EXPECT_EQ(seen["log"], "linking\n\\x1b[2J\\x1b]52;c;ZXZpbA==\\x07done \xe2\x9c\x93\n");
  EXPECT_THAT(seen["title"].get<std::string>(), HasSubstr(kBuild));
  EXPECT_EQ(seen["problem"], "");
  EXPECT_THAT(seen["facts"].get<std::string>(), HasSubstr("sm_80 sm_90"));
  EXPECT_THAT(seen["facts"].get<std::string>(),
              HasSubstr("1 of 2 calls split; 1 ran plain nvcc: unknown nvcc option × 1"));
  EXPECT_THAT(seen["facts"].get<std::string>(),
              HasSubstr("2 compiles: 1 on workers; 1 ran locally: no_worker × 1"));
  // The reason's text, as farm-cc said it, behind its count.
  EXPECT_EQ(seen["host_compiles_examples"], "no_worker: no worker has the toolchain: 'g++-13'");
  EXPECT_THAT(seen["page_text"].get<std::string>(), Not(HasSubstr("[object")));
  EXPECT_EQ(seen["console_errors"].size(), 0u) << seen["console_errors"].dump();
  EXPECT_GT(std::filesystem::file_size(screenshot), 10000u) << "the screenshot is missing or empty";

  // The page works offline: every asset it loads is served by the coordinator itself.
  auto hp = ParseHostPort(test_farm.coordinator().http_address());
  ASSERT_TRUE(hp.ok());
  httplib::Client http(hp->host, hp->port);
  auto page = http.Get(absl::StrCat("/builds/", kBuild).c_str());
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_THAT(page->body, Not(HasSubstr("http")));
  for (const char* asset : {"/assets/app.js", "/assets/style.css"}) {
    auto a = http.Get(asset);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->status, 200) << asset;
  }
}

// Issue 15, item 8: beyond loopback the dashboard needs the token, and the token never
// goes into a URL: the page asks for it (or reads it once from the #fragment, which is
// not sent) and sends it as a header; a ?token= query is refused by the server.
TEST(DashboardTest, TheTokenIsAskedForAndNeverPutInAUrl) {
  for (const char* tool : {FARM_TOOLS_PYTHON, "/usr/bin/chromium", "/usr/bin/chromedriver"}) {
    ASSERT_TRUE(std::filesystem::exists(tool))
        << tool << " is missing. Fix: run scripts/install-deps.sh";
  }
  TempDir dir("dashboard-token");
  auto started = TestFarm::Start(dir.path(), {.http_listen = "0.0.0.0:0"});
  ASSERT_TRUE(started.ok()) << started.status();
  TestFarm& test_farm = **started;
  const std::string token = test_farm.AdminToken();
  auto actions = ActionClient::Connect(test_farm.address(), token);
  farm::v1::Action a;
  a.add_argv("/bin/true");
  a.set_build_id("dash-signin");
  a.set_shard("sm_90");
  ASSERT_TRUE(actions->Execute({a}).ok());
  auto hp = ParseHostPort(test_farm.coordinator().http_address());
  ASSERT_TRUE(hp.ok());
  const std::string base = absl::StrCat("http://127.0.0.1:", hp->port);

  httplib::Client http("127.0.0.1", hp->port);
  auto in_query = http.Get(("/api/v1/status?token=" + token).c_str());
  ASSERT_TRUE(in_query);
  EXPECT_EQ(in_query->status, 400);
  EXPECT_THAT(in_query->body, HasSubstr("a token in the URL is refused"));
  auto as_header = http.Get("/api/v1/status", {{"Authorization", "Bearer " + token}});
  ASSERT_TRUE(as_header);
  EXPECT_EQ(as_header->status, 200);
  auto without = http.Get("/api/v1/status");
  ASSERT_TRUE(without);
  EXPECT_EQ(without->status, 401);
  EXPECT_THAT(without->body, Not(HasSubstr("?token")));

  auto r =
      RunCommand({FARM_TOOLS_PYTHON, absl::StrCat(FARM_TEST_SCRIPTS_DIR, "/dashboard_driver.py"),
                  "--sign-in", base, "dash-signin", token},
                 absl::Seconds(90));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->exit_code, 0) << r->stderr_text << r->stdout_text;
  const nlohmann::json seen = nlohmann::json::parse(r->stdout_text, nullptr, false);
  ASSERT_TRUE(seen.is_object()) << r->stdout_text;
  EXPECT_THAT(seen["asked"].get<std::string>(), HasSubstr("needs the farm token"));
  for (const char* session : {"signed_in", "fragment"}) {
    SCOPED_TRACE(session);
    ASSERT_TRUE(seen[session]["urls"].is_array()) << seen.dump();
    EXPECT_GT(seen[session]["urls"].size(), 3u) << seen.dump();
    for (const auto& url : seen[session]["urls"]) {
      EXPECT_THAT(url.get<std::string>(), Not(HasSubstr(token)));
      EXPECT_THAT(url.get<std::string>(), Not(HasSubstr("token")));
    }
  }
  EXPECT_EQ(seen["fragment"]["href"], base + "/builds/dash-signin");
  EXPECT_EQ(seen["fragment_problem"], "");
  EXPECT_EQ(seen["console_errors"].size(), 0u) << seen["console_errors"].dump();
}

}  // namespace
}  // namespace farm::testing
