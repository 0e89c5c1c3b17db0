// Build status end to end: a live farm (coordinator + 2 workers) runs real actions of one
// build, one of which fails. The gRPC BuildService, the JSON API, /metrics, farmctl and a
// coordinator restart must all tell the same story.
#include <signal.h>

#include <fstream>

#include <google/protobuf/util/json_util.h>
#include <httplib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "farm/v1/builds.grpc.pb.h"
#include "farm/v1/farm_service.grpc.pb.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/auth/token.h"
#include "libfarm/net/address.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/token_auth.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kBuild[] = "status-b1";

// The JSON mapping the coordinator's /api/v1/ promises.
nlohmann::json AsApiJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  o.always_print_primitive_fields = true;
  std::string text;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(m, &text, o).ok());
  return nlohmann::json::parse(text);
}

// /metrics through prometheus_client's parser plus strict checks (parse_metrics.py).
nlohmann::json ParseMetrics(const std::string& text) {
  TempDir dir("metrics");
  {
    std::ofstream out(dir / "metrics.txt");
    out << text;
  }
  auto r = RunCommand({"/bin/sh", "-c",
                       absl::StrCat("'", FARM_TOOLS_PYTHON, "' '", FARM_TEST_SCRIPTS_DIR,
                                    "/parse_metrics.py' < '", dir / "metrics.txt", "'")},
                      absl::Seconds(30));
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return nlohmann::json::object();
  EXPECT_EQ(r->exit_code, 0) << "the /metrics text does not parse: " << r->stderr_text;
  auto j = nlohmann::json::parse(r->stdout_text, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

// The value of the sample `name` whose labels include `labels`, or -1.
double Sample(const nlohmann::json& metrics, const std::string& family, const std::string& name,
              const std::map<std::string, std::string>& labels = {}) {
  if (!metrics.contains(family)) return -1;
  for (const auto& s : metrics[family]["samples"]) {
    if (s["name"] != name) continue;
    bool match = true;
    for (const auto& [k, v] : labels) match = match && s["labels"].value(k, "") == v;
    if (match) return s["value"].get<double>();
  }
  return -1;
}

class StatusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto farm = TestFarm::Start(
        dir_.path(),
        {.coordinator_args = {"--worker-timeout", "2s"},
         .workers = NumberedWorkers(2, {.args = {"--cuda-path", "none"}, .slots = 2})});
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
    Connect();
  }
  // Clients of the coordinator, made again after a restart.
  void Connect() {
    token_ = farm_->AdminToken();
    auto channel = DialCoordinator(farm_->address());
    builds_ = farm::v1::BuildService::NewStub(channel);
    farm_service_ = farm::v1::FarmService::NewStub(channel);
    actions_ = ActionClient::Connect(farm_->address(), token_);
    auto hp = ParseHostPort(farm_->coordinator().http_address());
    ASSERT_TRUE(hp.ok());
    http_ = std::make_unique<httplib::Client>(hp->host, hp->port);
  }
  farm::v1::Action Shell(const std::string& script, const std::string& shard) {
    farm::v1::Action a;
    a.add_argv("/bin/sh");
    a.add_argv("-c");
    a.add_argv(script);
    (*a.mutable_env())["PATH"] = "/usr/bin:/bin";
    a.set_build_id(kBuild);
    a.set_shard(shard);
    return a;
  }
  farm::v1::Build GetBuild() {
    grpc::ClientContext ctx;
    AttachToken(ctx, token_);
    farm::v1::GetBuildRequest req;
    req.set_build_id(kBuild);
    farm::v1::Build b;
    grpc::Status s = builds_->GetBuild(&ctx, req, &b);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return b;
  }
  nlohmann::json GetJson(const std::string& path) {
    auto r = http_->Get(path.c_str());
    EXPECT_TRUE(r) << path;
    if (!r) return nullptr;
    EXPECT_EQ(r->status, 200) << path << ": " << r->body;
    return nlohmann::json::parse(r->body, nullptr, false);
  }
  std::string Metrics() {
    auto r = http_->Get("/metrics");
    return r ? r->body : "";
  }
  std::vector<std::string> Farmctl(std::vector<std::string> args) {
    args.insert(args.begin(),
                {"--coordinator", farm_->address(), "--token-file", farm_->admin_token_file()});
    return args;
  }

  TempDir dir_{"status"};
  std::unique_ptr<TestFarm> farm_;
  std::string token_;
  std::unique_ptr<farm::v1::BuildService::Stub> builds_;
  std::unique_ptr<farm::v1::FarmService::Stub> farm_service_;
  std::unique_ptr<ActionClient> actions_;
  std::unique_ptr<httplib::Client> http_;
};

TEST_F(StatusTest, ProgressFailureApiMetricsFarmctlAndRestartAgree) {
  const nlohmann::json before = ParseMetrics(Metrics());
  const double finished_before = Sample(before, "farm_actions_finished",
                                        "farm_actions_finished_total", {{"state", "completed"}});
  const double cas_in_before = Sample(before, "farm_cas_bytes_in", "farm_cas_bytes_in_total");

  const std::string salt = std::to_string(absl::ToUnixNanos(absl::Now()));
  std::vector<farm::v1::Action> batch = {
      Shell("echo sm90-a " + salt, "sm_90"), Shell("echo sm90-b " + salt, "sm_90"),
      Shell("echo sm90-c " + salt, "sm_90"), Shell("echo sm80-a " + salt, "sm_80"),
      Shell("echo 'ptxas fatal: sm_80 kernel uses too much shared data' >&2; exit 3 # " + salt,
            "sm_80")};
  auto submitted = actions_->Execute(batch);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  std::vector<std::string> ids;
  for (const auto& s : *submitted) ids.push_back(s.action_id());
  auto done = actions_->WaitAll(ids, absl::Seconds(30));
  ASSERT_TRUE(done.ok()) << done.status();

  // gRPC: shards per arch with done/total and the failing action's stderr.
  const farm::v1::Build build = GetBuild();
  EXPECT_EQ(build.kind(), farm::v1::BUILD_KIND_COMPILE);
  EXPECT_EQ(build.state(), farm::v1::BUILD_STATE_FAILED);
  EXPECT_THAT(build.reason(), HasSubstr("first in sm_80 with exit code 3"));
  ASSERT_EQ(build.shards_size(), 2);
  const auto& sm80 = build.shards(0);
  const auto& sm90 = build.shards(1);
  EXPECT_EQ(sm80.name(), "sm_80");
  EXPECT_EQ(sm80.total(), 2u);
  EXPECT_EQ(sm80.done(), 1u);
  EXPECT_EQ(sm80.failed(), 1u);
  EXPECT_EQ(sm80.failed_exit_code(), 3);
  EXPECT_THAT(sm80.error(), HasSubstr("ptxas fatal: sm_80 kernel uses too much shared data"));
  EXPECT_EQ(sm90.name(), "sm_90");
  EXPECT_EQ(sm90.total(), 3u);
  EXPECT_EQ(sm90.done(), 3u);
  EXPECT_GE(sm90.workers_size(), 1);
  EXPECT_TRUE(sm90.has_finished_at());

  // Logs from a build host, then read back over gRPC and JSON.
  {
    grpc::ClientContext ctx;
    farm::v1::AppendBuildLogRequest req;
    req.set_build_id(kBuild);
    req.set_data("no token, no log\n");
    farm::v1::AppendBuildLogResponse resp;
    EXPECT_EQ(builds_->AppendBuildLog(&ctx, req, &resp).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext ctx;
    AttachToken(ctx, token_);
    farm::v1::AppendBuildLogRequest req;
    req.set_build_id(kBuild);
    req.set_data("linking libtorch_cuda.so\n");
    farm::v1::AppendBuildLogResponse resp;
    ASSERT_TRUE(builds_->AppendBuildLog(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.next_offset(), 25u);
  }

  // The JSON API answers exactly what gRPC answers.
  const farm::v1::Build after_log = GetBuild();
  EXPECT_EQ(GetJson(absl::StrCat("/api/v1/builds/", kBuild)), AsApiJson(after_log));
  {
    grpc::ClientContext ctx;
    AttachToken(ctx, token_);
    farm::v1::ListActionsRequest req;
    req.set_build_id(kBuild);
    farm::v1::ListActionsResponse resp;
    ASSERT_TRUE(builds_->ListActions(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.actions_size(), 5);
    EXPECT_EQ(GetJson(absl::StrCat("/api/v1/builds/", kBuild, "/actions")), AsApiJson(resp));
  }
  {
    grpc::ClientContext ctx;
    AttachToken(ctx, token_);
    farm::v1::ListBuildsResponse resp;
    ASSERT_TRUE(builds_->ListBuilds(&ctx, farm::v1::ListBuildsRequest(), &resp).ok());
    EXPECT_EQ(GetJson("/api/v1/builds"), AsApiJson(resp));
  }
  {
    grpc::ClientContext ctx;
    AttachToken(ctx, token_);
    farm::v1::GetBuildLogsRequest req;
    req.set_build_id(kBuild);
    farm::v1::GetBuildLogsResponse resp;
    ASSERT_TRUE(builds_->GetBuildLogs(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.data(), "linking libtorch_cuda.so\n");
    const nlohmann::json j = GetJson(absl::StrCat("/api/v1/builds/", kBuild, "/logs"));
    EXPECT_EQ(j, AsApiJson(resp));
    std::string decoded;
    ASSERT_TRUE(absl::Base64Unescape(j["data"].get<std::string>(), &decoded));
    EXPECT_EQ(decoded, "linking libtorch_cuda.so\n");
  }
  {
    grpc::ClientContext ctx;
    AttachToken(ctx, token_);
    farm::v1::GetStatusResponse resp;
    ASSERT_TRUE(farm_service_->GetStatus(&ctx, farm::v1::GetStatusRequest(), &resp).ok());
    EXPECT_EQ(GetJson("/api/v1/status"), AsApiJson(resp));
  }
  auto missing = http_->Get("/api/v1/builds/no-such-build");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_THAT(missing->body, HasSubstr("farmctl builds"));
  auto wrong_token = http_->Get("/api/v1/builds", {{"Authorization", "Bearer wrong"}});
  ASSERT_TRUE(wrong_token);
  EXPECT_EQ(wrong_token->status, 401);
  auto bad_param = http_->Get("/api/v1/builds?limit=lots");
  ASSERT_TRUE(bad_param);
  EXPECT_EQ(bad_param->status, 400);

  // /metrics parses strictly and its counters moved with the build.
  const nlohmann::json after = ParseMetrics(Metrics());
  EXPECT_EQ(Sample(after, "farm_actions_finished", "farm_actions_finished_total",
                   {{"state", "completed"}}) -
                std::max(0.0, finished_before),
            5);
  EXPECT_GT(Sample(after, "farm_cas_bytes_in", "farm_cas_bytes_in_total"), cas_in_before);
  EXPECT_GE(Sample(after, "farm_action_duration_seconds", "farm_action_duration_seconds_count"), 5);
  EXPECT_EQ(Sample(after, "farm_builds_finished", "farm_builds_finished_total",
                   {{"kind", "compile"}, {"state", "failed"}}),
            1);
  EXPECT_EQ(Sample(after, "farm_shard_duration_seconds", "farm_shard_duration_seconds_count"), 2);
  EXPECT_EQ(Sample(after, "farm_builds", "farm_builds", {{"kind", "compile"}, {"state", "failed"}}),
            1);
  EXPECT_GE(Sample(after, "farm_action_cache_requests", "farm_action_cache_requests_total",
                   {{"outcome", "miss"}}),
            5);
  EXPECT_EQ(Sample(after, "farm_queue_depth", "farm_queue_depth", {{"cpu_arch", "any"}}), 0);
  EXPECT_EQ(Sample(after, "farm_workers", "farm_workers", {{"state", "online"}}), 2);

  // farmctl shows the failure text, the shards and the log.
  CommandResult shown = RunFarmctl(Farmctl({"build", kBuild}));
  EXPECT_EQ(shown.exit_code, 0) << shown.stderr_text;
  EXPECT_THAT(shown.stdout_text, HasSubstr("ptxas fatal: sm_80 kernel uses too much shared data"));
  EXPECT_THAT(shown.stdout_text, HasSubstr("sm_90"));
  EXPECT_THAT(shown.stdout_text, HasSubstr("3/3"));
  EXPECT_THAT(shown.stdout_text, HasSubstr("1/2"));
  CommandResult as_json = RunFarmctl(Farmctl({"--json", "build", kBuild}));
  EXPECT_EQ(nlohmann::json::parse(as_json.stdout_text, nullptr, false), AsApiJson(after_log));
  CommandResult listed = RunFarmctl(Farmctl({"builds"}));
  EXPECT_THAT(listed.stdout_text, HasSubstr(kBuild));
  EXPECT_THAT(listed.stdout_text, HasSubstr("failed"));
  CommandResult watched = RunFarmctl(Farmctl({"watch", kBuild}));
  EXPECT_EQ(watched.exit_code, 1) << "a failed build makes watch fail";
  EXPECT_THAT(watched.stdout_text, HasSubstr("status-b1 failed: sm_80 1/2 (1 failed), sm_90 3/3"));
  CommandResult logs = RunFarmctl(Farmctl({"logs", kBuild}));
  EXPECT_EQ(logs.stdout_text, "linking libtorch_cuda.so\n");
  CommandResult workers = RunFarmctl(Farmctl({"workers"}));
  EXPECT_THAT(workers.stdout_text, HasSubstr("LOAD"));
  EXPECT_THAT(workers.stdout_text, HasSubstr("RUNNING"));
  CommandResult unknown = RunFarmctl(Farmctl({"build", "no-such-build"}));
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_THAT(unknown.stderr_text, HasSubstr("farmctl builds"));

  // A restart keeps the build record, rebuilt the same.
  farm_->StopCoordinator();
  absl::Status back = farm_->RestartCoordinator();
  ASSERT_TRUE(back.ok()) << back;
  Connect();
  const farm::v1::Build restarted = GetBuild();
  EXPECT_EQ(AsApiJson(restarted), AsApiJson(after_log));
}

// Issue 15, item 7: a build that prints terminal escapes (window title, clear screen, an
// OSC 52 clipboard write) does not reach the user's terminal through farmctl.
TEST_F(StatusTest, TerminalEscapesFromABuildAreShownEscapedByFarmctl) {
  const std::string hostile =
      "step 1\n\x1b]0;owned\x07\x1b[2J\x1b]52;c;ZXZpbA==\x07"
      "done\n";
  // The failing action first: it creates the build the log is appended to.
  const std::string salt = std::to_string(absl::ToUnixNanos(absl::Now()));
  auto submitted = actions_->Execute(
      {Shell("printf 'ptxas \\033]0;pwned\\007fatal\\n' >&2; exit 3 # " + salt, "sm_90")});
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  ASSERT_TRUE(actions_->WaitAll({(*submitted)[0].action_id()}, absl::Seconds(30)).ok());
  {
    grpc::ClientContext ctx;
    AttachToken(ctx, token_);
    farm::v1::AppendBuildLogRequest req;
    req.set_build_id(kBuild);
    req.set_data(hostile);
    farm::v1::AppendBuildLogResponse resp;
    grpc::Status appended = builds_->AppendBuildLog(&ctx, req, &resp);
    ASSERT_TRUE(appended.ok()) << appended.error_message();
  }

  const std::string shown_log = "step 1\n\\x1b]0;owned\\x07\\x1b[2J\\x1b]52;c;ZXZpbA==\\x07done\n";
  CommandResult logs = RunFarmctl(Farmctl({"logs", kBuild}));
  EXPECT_EQ(logs.exit_code, 0) << logs.stderr_text;
  EXPECT_EQ(logs.stdout_text, shown_log);
  CommandResult followed = RunFarmctl(Farmctl({"logs", "--follow", kBuild}));
  EXPECT_EQ(followed.stdout_text, shown_log);
  // --raw is for saving the bytes, and gives them unchanged.
  CommandResult raw = RunFarmctl(Farmctl({"logs", "--raw", kBuild}));
  EXPECT_EQ(raw.stdout_text, hostile);

  CommandResult shown = RunFarmctl(Farmctl({"build", kBuild}));
  EXPECT_EQ(shown.exit_code, 0) << shown.stderr_text;
  EXPECT_THAT(shown.stdout_text, HasSubstr("ptxas \\x1b]0;pwned\\x07"
                                           "fatal"));
  CommandResult watched = RunFarmctl(Farmctl({"watch", kBuild}));
  for (const CommandResult* r : {&logs, &followed, &shown, &watched}) {
    EXPECT_EQ(r->stdout_text.find('\x07'), std::string::npos) << r->stdout_text;
    EXPECT_EQ(r->stdout_text.find("\x1b]"), std::string::npos) << r->stdout_text;
  }
}

TEST_F(StatusTest, RunningActionsShowOnWorkersAndQueueDepthByClass) {
  const std::string salt = std::to_string(absl::ToUnixNanos(absl::Now()));
  std::vector<farm::v1::Action> batch;
  for (int i = 0; i < 6; ++i) {
    batch.push_back(Shell(absl::StrCat("sleep 2; echo ", i, " ", salt), "sm_90"));
  }
  auto submitted = actions_->Execute(batch);
  ASSERT_TRUE(submitted.ok());
  // 4 slots for 6 actions: some run, some wait.
  nlohmann::json workers;
  ASSERT_TRUE(WaitFor(
      [&] {
        CommandResult r = RunFarmctl(Farmctl({"--json", "workers"}));
        workers = nlohmann::json::parse(r.stdout_text, nullptr, false);
        int running = 0;
        if (workers.is_array()) {
          for (const auto& w : workers) running += static_cast<int>(w["current_actions"].size());
        }
        return running == 4;
      },
      absl::Seconds(15)))
      << workers.dump();
  EXPECT_EQ(workers[0]["current_actions"][0]["build_id"], kBuild);
  EXPECT_EQ(workers[0]["current_actions"][0]["shard"], "sm_90");
  const nlohmann::json metrics = ParseMetrics(Metrics());
  EXPECT_EQ(Sample(metrics, "farm_queue_depth", "farm_queue_depth", {{"cpu_arch", "any"}}), 2);
  EXPECT_EQ(Sample(metrics, "farm_actions_running", "farm_actions_running", {{"sms", "any"}}), 4);
  const nlohmann::json running = GetJson("/api/v1/actions?state=running");
  EXPECT_EQ(running["actions"].size(), 4u);
  std::vector<std::string> ids;
  for (const auto& s : *submitted) ids.push_back(s.action_id());
  ASSERT_TRUE(actions_->WaitAll(ids, absl::Seconds(30)).ok());
}

}  // namespace
}  // namespace farm::testing
