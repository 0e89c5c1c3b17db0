// Roles and tokens (issue 15 item 4), against a real coordinator and workers: tokens made,
// listed and revoked by farmctl without a restart; each role refused what it may not do; a
// worker name bound to the token that registered it; tokens stored only as hashes.
// (A wheel build's own token is in submit_test: AWheelBuildsTokenActsForThatBuild...)
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "libfarm/auth/token.h"
#include "tests/support/farm_processes.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class RolesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = CoordinatorProcess::Start(dir_ / "data");
    ASSERT_TRUE(c.ok()) << c.status();
    coordinator_ = std::move(*c);
  }
  void TearDown() override {
    for (WorkerProcess& w : workers_) w.Stop();
    if (coordinator_) coordinator_->Stop();
  }

  CommandResult Farmctl(const std::vector<std::string>& args, const std::string& token_file) {
    std::vector<std::string> all = {"--coordinator", coordinator_->grpc_address(), "--token-file",
                                    token_file};
    all.insert(all.end(), args.begin(), args.end());
    return RunFarmctl(all, {"XDG_STATE_HOME=" + (dir_ / "state"), "FARM_TOKEN_FILE="});
  }
  CommandResult Admin(const std::vector<std::string>& args) {
    return Farmctl(args, coordinator_->token_file());
  }
  // A new token of `role` in a file named after it; its id.
  std::string MakeToken(const std::string& role, const std::string& name) {
    const std::string file = dir_ / (name + ".token");
    CommandResult r =
        Admin({"--json", "token", "create", "--role", role, "--name", name, "--out", file});
    EXPECT_EQ(r.exit_code, 0) << Output(r);
    nlohmann::json j = nlohmann::json::parse(r.stdout_text, nullptr, false);
    return j.is_object() ? j.value("id", "") : "";
  }
  std::string TokenFile(const std::string& name) { return dir_ / (name + ".token"); }

  bool StartWorker(const std::string& name, const std::string& token_name,
                   const std::string& home) {
    fs::create_directories(dir_ / home);
    auto w = WorkerProcess::Start(coordinator_->grpc_address(), TokenFile(token_name), name,
                                  dir_ / home, {"--slots", "1"});
    if (!w.ok()) return false;
    workers_.push_back(std::move(*w));
    return true;
  }
  std::string WorkerState(const std::string& name) {
    return StateOf(ListWorkersJson(coordinator_->grpc_address(), coordinator_->token_file()), name);
  }

  TempDir dir_{"roles"};
  std::optional<CoordinatorProcess> coordinator_;
  std::vector<WorkerProcess> workers_;
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
  ASSERT_TRUE(StartWorker("w-ci", "ci", "ci-home"));
  // A refused role is a configuration error: the worker exits at once, saying why.
  std::optional<int> exited = workers_.back().process().Wait(absl::Seconds(20));
  ASSERT_TRUE(exited.has_value()) << ReadFile(workers_.back().log_path());
  EXPECT_NE(*exited, 0);
  EXPECT_THAT(ReadFile(workers_.back().log_path()),
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
  coordinator_->Stop();
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
  auto c = CoordinatorProcess::Start(dir_ / "data");
  ASSERT_TRUE(c.ok()) << c.status();
  coordinator_ = std::move(*c);
  EXPECT_EQ(Farmctl({"status"}, TokenFile("ci")).exit_code, 0);
  EXPECT_THAT(Admin({"token", "list"}).stdout_text, HasSubstr(id));
}

TEST_F(RolesTest, AWorkerNameIsBoundToTheTokenThatRegisteredItFirst) {
  const std::string first = MakeToken("worker", "grace-1");
  MakeToken("worker", "grace-2");
  ASSERT_TRUE(StartWorker("w1", "grace-1", "home-1"));
  ASSERT_TRUE(WaitFor([&] { return WorkerState("w1") == "online"; }, absl::Seconds(20)));
  // The first worker stops; another token's worker may not take its name...
  workers_.back().Stop();
  ASSERT_TRUE(StartWorker("w1", "grace-2", "home-2"));
  EXPECT_TRUE(WaitFor(
      [&] {
        return ReadFile(workers_.back().log_path()).find("is bound to token " + first) !=
               std::string::npos;
      },
      absl::Seconds(20)))
      << ReadFile(workers_.back().log_path());
  std::optional<int> exited = workers_.back().process().Wait(absl::Seconds(20));
  ASSERT_TRUE(exited.has_value());
  EXPECT_NE(*exited, 0);
  // ...until that token is revoked.
  ASSERT_EQ(Admin({"token", "revoke", first}).exit_code, 0);
  ASSERT_TRUE(StartWorker("w1", "grace-2", "home-3"));
  EXPECT_TRUE(WaitFor([&] { return WorkerState("w1") == "online"; }, absl::Seconds(20)))
      << ReadFile(workers_.back().log_path());
}

}  // namespace
}  // namespace farm::testing
