// Roles and tokens (issue 15 item 4), against a real coordinator and workers: tokens made,
// listed and revoked by farmctl without a restart; each role refused what it may not do; a
// worker name bound to the token that registered it, on every call (issue 24); tokens stored
// only as hashes.
// (A wheel build's own token is in submit_test: AWheelBuildsTokenActsForThatBuild...)
#include <filesystem>

#include <httplib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "farm/v1/worker_service.grpc.pb.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/auth/token.h"
#include "libfarm/net/address.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/token_auth.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class RolesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto farm = TestFarm::Start(dir_.path(), FarmOptions{});
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }

  CommandResult Farmctl(const std::vector<std::string>& args, const std::string& token_file) {
    return farm_->Farmctl(args, {}, absl::Seconds(120), token_file);
  }
  CommandResult Admin(const std::vector<std::string>& args) { return farm_->Farmctl(args); }
  // A new token of `role` in a file named after it; its id.
  std::string MakeToken(const std::string& role, const std::string& name) {
    auto made = farm_->CreateToken(role, name);
    EXPECT_TRUE(made.ok()) << made.status();
    return made.ok() ? made->id : "";
  }
  std::string TokenFile(const std::string& name) { return dir_ / (name + ".token"); }

  // Starts worker `name` with the token made for `token_name`, its work dir under `home`; the
  // worker started last.
  WorkerProcess* StartWorker(const std::string& name, const std::string& token_name,
                             const std::string& home) {
    auto w =
        farm_->StartWorker({.name = name, .token_file = TokenFile(token_name), .dir = dir_ / home});
    EXPECT_TRUE(w.ok()) << w.status();
    return w.ok() ? *w : nullptr;
  }
  std::string WorkerState(const std::string& name) { return farm_->WorkerState(name); }

  TempDir dir_{"roles"};
  std::unique_ptr<TestFarm> farm_;
};

TEST_F(RolesTest, EachRoleDoesItsJobAndIsRefusedTheRestWithTheFix) {
  MakeToken("read", "dash");
  MakeToken("submit", "ci");
  // read: reads, never submits, never makes tokens.
  EXPECT_EQ(Farmctl({"status"}, TokenFile("dash")).exit_code, 0);
  EXPECT_EQ(Farmctl({"builds"}, TokenFile("dash")).exit_code, 0);
  CommandResult submit = Farmctl({"submit", "demo-0.1.0", "--archs", "9.0"}, TokenFile("dash"));
  EXPECT_NE(submit.exit_code, 0);
  EXPECT_THAT(submit.stderr_text,
              HasSubstr("'read' token may not call BuildService.SubmitBuild (roles that may: "
                        "admin, submit)"))
      << Output(submit);
  EXPECT_THAT(submit.stderr_text, HasSubstr("farmctl token create")) << Output(submit);
  EXPECT_NE(Farmctl({"token", "list"}, TokenFile("dash")).exit_code, 0);
  // submit: may not make tokens, take backups or act as a worker.
  CommandResult make =
      Farmctl({"token", "create", "--role", "admin", "--name", "me"}, TokenFile("ci"));
  EXPECT_NE(make.exit_code, 0);
  EXPECT_THAT(make.stderr_text, HasSubstr("may not call TokenService.CreateToken")) << Output(make);
  CommandResult backup = Farmctl({"admin", "backup", dir_ / "backup"}, TokenFile("ci"));
  EXPECT_NE(backup.exit_code, 0);
  EXPECT_THAT(backup.stderr_text, HasSubstr("may not call AdminService.Backup")) << Output(backup);
  WorkerProcess* w_ci = StartWorker("w-ci", "ci", "ci-home");
  ASSERT_NE(w_ci, nullptr);
  // A refused role is a configuration error: the worker exits at once, saying why.
  std::optional<int> exited = w_ci->process().Wait(absl::Seconds(20));
  ASSERT_TRUE(exited.has_value()) << ReadFile(w_ci->log_path());
  EXPECT_NE(*exited, 0);
  EXPECT_THAT(ReadFile(w_ci->log_path()),
              HasSubstr("'submit' token may not call WorkerService.Register"));
  EXPECT_EQ(WorkerState("w-ci"), "");
  // Unknown roles are named.
  CommandResult root = Admin({"token", "create", "--role", "root", "--name", "x"});
  EXPECT_NE(root.exit_code, 0);
  EXPECT_THAT(root.stderr_text, HasSubstr("unknown role 'root'")) << Output(root);
}

TEST_F(RolesTest, ARevokedTokenIsRefusedAtOnceWithoutARestart) {
  const std::string id = MakeToken("read", "laptop");
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(Farmctl({"status"}, TokenFile("laptop")).exit_code, 0);
  CommandResult list = Admin({"token", "list"});
  EXPECT_THAT(list.stdout_text, HasSubstr(id)) << Output(list);
  EXPECT_THAT(list.stdout_text, HasSubstr("laptop")) << Output(list);
  const std::string token = ReadFile(TokenFile("laptop")).substr(0, 64);
  EXPECT_THAT(list.stdout_text, Not(HasSubstr(token))) << Output(list);
  CommandResult revoke = Admin({"token", "revoke", id});
  ASSERT_EQ(revoke.exit_code, 0) << Output(revoke);
  CommandResult after = Farmctl({"status"}, TokenFile("laptop"));
  EXPECT_NE(after.exit_code, 0);
  EXPECT_THAT(after.stderr_text, HasSubstr("token does not match")) << Output(after);
  EXPECT_THAT(Admin({"token", "list"}).stdout_text, Not(HasSubstr(id)));
  CommandResult twice = Admin({"token", "revoke", id});
  EXPECT_NE(twice.exit_code, 0);
  EXPECT_THAT(twice.stderr_text, HasSubstr("no token with id")) << Output(twice);
}

TEST_F(RolesTest, TokensAreStoredOnlyAsHashesAndSurviveARestart) {
  const std::string id = MakeToken("submit", "ci");
  const std::string token = ReadFile(TokenFile("ci")).substr(0, 64);
  farm_->StopCoordinator();
  // Nothing in the data dir holds the token's text; its SHA-256 is there.
  bool text_found = false;
  bool digest_found = false;
  for (const auto& entry : fs::recursive_directory_iterator(dir_ / "data")) {
    if (!entry.is_regular_file()) continue;
    const std::string bytes = ReadFile(entry.path().string());
    text_found |= bytes.find(token) != std::string::npos;
    digest_found |= bytes.find(TokenDigest(token)) != std::string::npos;
  }
  EXPECT_FALSE(text_found);
  EXPECT_TRUE(digest_found);
  absl::Status restarted = farm_->RestartCoordinator();
  ASSERT_TRUE(restarted.ok()) << restarted;
  EXPECT_EQ(Farmctl({"status"}, TokenFile("ci")).exit_code, 0);
  EXPECT_THAT(Admin({"token", "list"}).stdout_text, HasSubstr(id));
}

TEST_F(RolesTest, AWorkerNameIsBoundToTheTokenThatRegisteredItFirst) {
  const std::string first = MakeToken("worker", "grace-1");
  MakeToken("worker", "grace-2");
  ASSERT_NE(StartWorker("w1", "grace-1", "home-1"), nullptr);
  absl::Status online = farm_->WaitUntilOnline({"w1"}, absl::Seconds(20));
  ASSERT_TRUE(online.ok()) << online;
  // The first worker stops; another token's worker may not take its name...
  farm_->KillWorker("w1");
  WorkerProcess* other = StartWorker("w1", "grace-2", "home-2");
  ASSERT_NE(other, nullptr);
  EXPECT_TRUE(WaitFor(
      [&] {
        return ReadFile(other->log_path()).find("is bound to token " + first) != std::string::npos;
      },
      absl::Seconds(20)))
      << ReadFile(other->log_path());
  std::optional<int> exited = other->process().Wait(absl::Seconds(20));
  ASSERT_TRUE(exited.has_value());
  EXPECT_NE(*exited, 0);
  // ...until that token is revoked.
  ASSERT_EQ(Admin({"token", "revoke", first}).exit_code, 0);
  ASSERT_NE(StartWorker("w1", "grace-2", "home-3"), nullptr);
  online = farm_->WaitUntilOnline({"w1"}, absl::Seconds(20));
  EXPECT_TRUE(online.ok()) << online;
}

// Issue 24, hole 6: with a worker token of its own, and a worker's name and the session that
// ListWorkers and the token-less loopback /api/v1/workers used to show, anyone drained that
// worker, leased its work and forced it offline (a repeated Leave failed its action).
TEST_F(RolesTest, AnotherWorkerTokenCannotActForAWorker) {
  MakeToken("worker", "grace-1");
  MakeToken("worker", "grace-2");
  ASSERT_NE(StartWorker("w1", "grace-1", "home-1"), nullptr);
  absl::Status online = farm_->WaitUntilOnline({"w1"}, absl::Seconds(20));
  ASSERT_TRUE(online.ok()) << online;

  // The fleet as a reader sees it, and as anyone on this host sees it without a token.
  for (const auto& w : farm_->ListWorkers()) {
    EXPECT_FALSE(w.contains("session_id")) << "farmctl workers --json";
  }
  auto hp = ParseHostPort(farm_->coordinator().http_address());
  ASSERT_TRUE(hp.ok()) << hp.status();
  httplib::Client http(hp->host, hp->port);
  auto listed = http.Get("/api/v1/workers");
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->status, 200) << listed->body;
  nlohmann::json fleet = nlohmann::json::parse(listed->body, nullptr, false);
  ASSERT_TRUE(fleet.is_object()) << listed->body;
  ASSERT_EQ(fleet.value("workers", nlohmann::json::array()).size(), 1u);
  const nlohmann::json& w1 = fleet["workers"][0];
  EXPECT_EQ(w1.value("name", ""), "w1");
  EXPECT_FALSE(w1.contains("session_id")) << "/api/v1/workers";
  const std::string session = w1.value("session_id", "unknown");

  // grace-2 acts as w1, with w1's session where a listing gave it away.
  auto stub = farm::v1::WorkerService::NewStub(DialCoordinator(farm_->address()));
  const std::string other = *ReadTokenFile(TokenFile("grace-2"));
  auto refused = [&](auto method, auto request, auto response, const char* call) {
    request.set_name("w1");
    request.set_session_id(session);
    grpc::ClientContext ctx;
    AttachToken(ctx, other);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    const grpc::Status s = ((*stub).*method)(&ctx, request, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED)
        << call << ": " << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr("worker name 'w1' is bound to token")) << call;
  };
  farm::v1::HeartbeatRequest drain;
  drain.set_draining(true);
  refused(&farm::v1::WorkerService::Stub::Heartbeat, drain, farm::v1::HeartbeatResponse(),
          "Heartbeat");
  farm::v1::LeaseActionsRequest lease;
  lease.set_free_slots(1);
  refused(&farm::v1::WorkerService::Stub::LeaseActions, lease, farm::v1::LeaseActionsResponse(),
          "LeaseActions");
  refused(&farm::v1::WorkerService::Stub::CompleteActions, farm::v1::CompleteActionsRequest(),
          farm::v1::CompleteActionsResponse(), "CompleteActions");
  for (int i = 0; i < 3; ++i) {
    refused(&farm::v1::WorkerService::Stub::Leave, farm::v1::LeaveRequest(),
            farm::v1::LeaveResponse(), "Leave");
  }

  // w1 is still online and runs the farm's work.
  EXPECT_EQ(WorkerState("w1"), "online");
  auto actions = ActionClient::Connect(farm_->address(), farm_->AdminToken());
  farm::v1::Action a;
  a.add_argv("/bin/true");
  a.set_build_id("after-the-attempt");
  auto submitted = actions->Execute({a});
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  auto done = actions->WaitAll({submitted->front().action_id()}, absl::Seconds(60));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->front().state(), farm::v1::ACTION_STATE_COMPLETED) << done->front().DebugString();
  EXPECT_EQ(done->front().result().worker(), "w1");
  EXPECT_EQ(WorkerState("w1"), "online");
}

}  // namespace
}  // namespace farm::testing
