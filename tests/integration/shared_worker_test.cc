// One tenant against the others on a shared worker (issue 42, the third hostile probe), each
// attack with a legitimate low-privilege credential against a real coordinator and a sandboxed
// worker of 4 slots: a toolchain check poisoned for everyone, one lock that stalls every host
// compile, a disk filled by one action, learnt timings read and rewritten across tenants.
#include <sys/utsname.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/auth/token.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/cc/file_tree_builder.h"
#include "libfarm/cc/loader_closure.h"
#include "libfarm/file_tree/file_tree.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string CpuArch() {
  struct utsname host {};
  return ::uname(&host) == 0 ? host.machine : "";
}

class SharedWorkerTest : public ::testing::Test {
 protected:
  // The worker's disk limit is small so that the tests can go over it cheaply.
  void SetUp() override {
    auto farm = TestFarm::Start(
        dir_.path(), {.workers = {{.name = "w1",
                                   .args = {"--cuda-path", "none", "--max-action-disk", "32MiB"},
                                   .slots = 4}}});
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
    admin_token_ = farm_->AdminToken();
    cas_ = CasClient::Connect(farm_->address(), admin_token_);
  }

  // A submit token of its own: one tenant.
  std::unique_ptr<ActionClient> Tenant(const std::string& name) {
    auto made = farm_->CreateToken("submit", name);
    EXPECT_TRUE(made.ok()) << made.status();
    auto token = ReadTokenFile(dir_ / (name + ".token"));
    EXPECT_TRUE(token.ok()) << token.status();
    return ActionClient::Connect(farm_->address(), token.ok() ? *token : "");
  }

  // The files of `programs` and what they load, plus `extra` {path, text, executable}, as a
  // tree in the CAS.
  farm::v1::Digest Toolchain(const std::vector<std::string>& programs,
                             const std::map<std::string, std::string>& scripts = {}) {
    cc::FileTreeBuilder tree;
    for (const std::string& program : programs) {
      EXPECT_TRUE(tree.Add(program, "/").ok()) << program;
      auto closure = cc::LoaderClosure(program);
      EXPECT_TRUE(closure.ok()) << closure.status();
      for (const std::string& path : closure.ok() ? *closure : std::vector<std::string>{}) {
        EXPECT_TRUE(tree.Add(path, "/").ok()) << path;
      }
    }
    for (const auto& [name, text] : scripts) {
      const std::string path = dir_ / name;
      WriteText(path, text);
      fs::permissions(path, fs::perms::owner_exec, fs::perm_options::add);
      EXPECT_TRUE(tree.Add(path, "/").ok()) << path;
    }
    return Upload(tree);
  }
  farm::v1::Digest Upload(const cc::FileTreeBuilder& tree) {
    for (const auto& [path, digest] : tree.FilesToUpload()) {
      auto uploaded = cas_->UploadFile(path);
      EXPECT_TRUE(uploaded.ok()) << uploaded.status();
    }
    auto digest = cas_->UploadBytes(SerializeFileTree(tree.Tree()));
    EXPECT_TRUE(digest.ok()) << digest.status();
    return digest.ok() ? *digest : farm::v1::Digest();
  }
  // An input tree of one small source.
  farm::v1::Digest Sources() {
    const std::string src = dir_ / "src/a.txt";
    WriteText(src, "source\n");
    cc::FileTreeBuilder tree;
    EXPECT_TRUE(tree.Add(src, "/").ok());
    return Upload(tree);
  }
  farm::v1::Action ImageAction(const farm::v1::Digest& toolchain, const std::string& compiler,
                               const farm::v1::Digest& inputs, const std::string& script) {
    farm::v1::Action a;
    for (const std::string arg : {"/bin/bash", "-c", script.c_str()}) a.add_argv(arg);
    (*a.mutable_env())["PATH"] = "/usr/bin:/bin";
    a.set_working_directory(dir_ / "src");
    a.add_output_paths((dir_ / "src/out.txt").substr(1));
    *a.mutable_toolchain()->mutable_tree() = toolchain;
    a.mutable_toolchain()->set_compiler(compiler);
    a.mutable_toolchain()->set_cpu_arch(CpuArch());
    *a.mutable_input_tree() = inputs;
    a.mutable_requirements()->set_os("linux");
    a.mutable_requirements()->set_cpu_arch(CpuArch());
    a.mutable_requirements()->set_sandbox(true);
    a.set_skip_cache(true);
    return a;
  }
  static farm::v1::ActionStatus RunOne(ActionClient& client, const farm::v1::Action& a,
                                       absl::Duration timeout = absl::Seconds(60)) {
    auto submitted = client.Execute({a});
    EXPECT_TRUE(submitted.ok()) << submitted.status();
    if (!submitted.ok()) return {};
    auto done = client.WaitAll({submitted->front().action_id()}, timeout);
    EXPECT_TRUE(done.ok()) << done.status();
    return done.ok() ? done->front() : farm::v1::ActionStatus();
  }
  std::string Describe(const farm::v1::ActionStatus& s) {
    return absl::StrCat(s.DebugString(), "\nworker log:\n",
                        ReadFile(farm_->worker("w1").log_path()));
  }

  TempDir dir_{"shared-worker"};
  std::unique_ptr<TestFarm> farm_;
  std::string admin_token_;
  std::unique_ptr<CasClient> cas_;
};

// Hole 1: the probe sent the victims' toolchain digest with a compiler that is not there; the
// worker remembered that failure by the digest alone and failed everyone's compiles on it with
// the attacker's text. A check's answer is now kept by digest, compiler and arch, and the
// compiler must be a file of the tree.
TEST_F(SharedWorkerTest, AToolchainCheckAnswersOnlyTheRequestThatMadeIt) {
  auto attacker = Tenant("attacker");
  auto victim = Tenant("victim");
  // The victims' toolchain, with one more file the attacker names as its "compiler": a script
  // whose check fails with the attacker's words.
  const farm::v1::Digest toolchain =
      Toolchain({"/bin/bash", "/usr/bin/cat"},
                {{"fail/cc", "#!/bin/bash\necho ATTACKER TEXT >&2\nexit 1\n"}});
  const farm::v1::Digest sources = Sources();
  const std::string copy = absl::StrCat("cat a.txt > ", dir_ / "src/out.txt");
  const auto missing =
      RunOne(*attacker, ImageAction(toolchain, "/usr/bin/no-such-compiler", sources, "true"));
  EXPECT_EQ(missing.result().exit_code(), 126) << Describe(missing);
  EXPECT_THAT(missing.result().stderr_tail(), HasSubstr("is not a file of its tree"))
      << Describe(missing);
  const auto failing = RunOne(*attacker, ImageAction(toolchain, dir_ / "fail/cc", sources, "true"));
  EXPECT_EQ(failing.result().exit_code(), 126) << Describe(failing);
  EXPECT_THAT(failing.result().stderr_tail(),
              AllOf(HasSubstr("does not run on this worker"), HasSubstr("ATTACKER TEXT")))
      << Describe(failing);
  // The same digest with the victims' compiler: checked for itself, and it runs.
  for (int i = 0; i < 2; ++i) {
    auto a = ImageAction(toolchain, "/bin/bash", sources, copy);
    a.add_argv(absl::StrCat("run-", i));
    const auto compile = RunOne(*victim, a);
    ASSERT_EQ(compile.state(), farm::v1::ACTION_STATE_COMPLETED) << Describe(compile);
    EXPECT_EQ(compile.result().exit_code(), 0) << Describe(compile);
    EXPECT_EQ(compile.result().outputs_size(), 1) << Describe(compile);
    EXPECT_THAT(compile.result().stderr_tail(), Not(HasSubstr("ATTACKER TEXT")));
  }
}

// Hole 2: preparing a toolchain held one lock through its 60 s check, so two actions whose
// "compiler" hangs stalled every host compile on the worker for two minutes. Now a toolchain
// being checked holds up only requests for the same check.
TEST_F(SharedWorkerTest, AToolchainThatHangsHoldsUpNoOtherCompile) {
  auto attacker = Tenant("attacker");
  auto victim = Tenant("victim");
  const farm::v1::Digest hanging =
      Toolchain({"/bin/bash", "/usr/bin/sleep"}, {{"hang/cc", "#!/bin/bash\nsleep 600\n"}});
  const farm::v1::Digest toolchain = Toolchain({"/bin/bash", "/usr/bin/cat"});
  const farm::v1::Digest sources = Sources();
  std::vector<std::string> attacks;
  for (int i = 0; i < 2; ++i) {
    auto a = ImageAction(hanging, dir_ / "hang/cc", sources, "true");
    a.add_argv(absl::StrCat("attack-", i));
    auto submitted = attacker->Execute({a});
    ASSERT_TRUE(submitted.ok()) << submitted.status();
    attacks.push_back(submitted->front().action_id());
  }
  // Both attacks are leased (their checks hang) before the victim's compile is sent.
  auto running = [&](const std::string& id) {
    auto s = attacker->Get(id);
    return s.ok() && s->state() == farm::v1::ACTION_STATE_RUNNING;
  };
  ASSERT_TRUE(
      WaitFor([&] { return running(attacks[0]) && running(attacks[1]); }, absl::Seconds(30)));
  absl::SleepFor(absl::Seconds(1));
  const absl::Time start = absl::Now();
  const auto compile =
      RunOne(*victim, ImageAction(toolchain, "/bin/bash", sources,
                                  absl::StrCat("cat a.txt > ", dir_ / "src/out.txt")));
  const absl::Duration took = absl::Now() - start;
  ASSERT_EQ(compile.state(), farm::v1::ACTION_STATE_COMPLETED) << Describe(compile);
  EXPECT_EQ(compile.result().exit_code(), 0) << Describe(compile);
  // Seconds, not the minutes the hanging checks take (60 s each).
  EXPECT_LT(took, absl::Seconds(20)) << Describe(compile);
  EXPECT_TRUE(running(attacks[0]) && running(attacks[1]));
}

// Hole 3: a tree naming one 256 KiB blob 650 times wrote 162 MiB on the worker, outside every
// bound. The coordinator weighs an action's inputs at submission (its test is in the
// scheduler's unit tests); the worker weighs them again before writing anything, and stops an
// action that writes more than its limit while running. Another tenant's compile still runs.
TEST_F(SharedWorkerTest, AnActionOverTheWorkersDiskLimitIsRefusedOrStopped) {
  auto attacker = Tenant("attacker");
  auto victim = Tenant("victim");
  const farm::v1::Digest toolchain = Toolchain({"/bin/bash", "/usr/bin/head", "/usr/bin/cat"});
  // 650 paths of one 256 KiB blob in the output's directory (each a copy there): 162.5 MiB
  // against the worker's 32 MiB.
  const std::string blob_path = dir_ / "blob";
  WriteText(blob_path, std::string(256 << 10, 'x'));
  auto blob = cas_->UploadFile(blob_path);
  ASSERT_TRUE(blob.ok());
  farm::v1::FileTree flood;
  for (int i = 0; i < 650; ++i) {
    auto* f = flood.add_files();
    f->set_path(absl::StrCat((dir_ / "src/f").substr(1), i));
    *f->mutable_digest() = *blob;
  }
  auto flood_digest = cas_->UploadBytes(SerializeFileTree(flood));
  ASSERT_TRUE(flood_digest.ok());
  const auto refused =
      RunOne(*attacker, ImageAction(toolchain, "/bin/bash", *flood_digest, "true"));
  EXPECT_EQ(refused.result().exit_code(), 126) << Describe(refused);
  EXPECT_THAT(refused.result().stderr_tail(), AllOf(HasSubstr("162.5 MiB"), HasSubstr("32.0 MiB"),
                                                    HasSubstr("farm-worker --max-action-disk")))
      << Describe(refused);
  // Nothing of it was written: the scratch directory is empty again and no copy was made.
  EXPECT_TRUE(fs::is_empty(dir_ / "w1/scratch")) << Describe(refused);

  // An action that writes past the limit while it runs is stopped, and says why.
  const auto writer =
      RunOne(*attacker, ImageAction(toolchain, "/bin/bash", Sources(),
                                    absl::StrCat("head -c 200000000 /dev/zero > ",
                                                 dir_ / "src/out.txt", "; echo never")));
  EXPECT_NE(writer.result().exit_code(), 0) << Describe(writer);
  EXPECT_THAT(writer.result().stderr_tail(),
              AllOf(HasSubstr("wheelfarm: stopped: the action wrote"),
                    HasSubstr("farm-worker --max-action-disk")))
      << Describe(writer);
  EXPECT_TRUE(writer.result().outputs().empty());

  const auto compile =
      RunOne(*victim, ImageAction(toolchain, "/bin/bash", Sources(),
                                  absl::StrCat("cat a.txt > ", dir_ / "src/out.txt")));
  EXPECT_EQ(compile.result().exit_code(), 0) << Describe(compile);
  EXPECT_EQ(compile.result().outputs_size(), 1) << Describe(compile);
}

// Hole 4: GetExpectedCosts answered any history key for any caller, and any action could carry
// any key, rewriting what the farm learnt of another tenant's unit. Each tenant's history is
// now its own (coordinator/scheduler/history_scope.h).
TEST_F(SharedWorkerTest, LearntTimingsStayWithTheTenantThatTaughtThem) {
  auto attacker = Tenant("attacker");
  auto victim = Tenant("victim");
  auto keyed = [](const std::string& script) {
    farm::v1::Action a;
    for (const std::string arg : {"/bin/sh", "-c", script.c_str()}) a.add_argv(arg);
    (*a.mutable_env())["PATH"] = "/usr/bin:/bin";
    a.set_history_key("native/cuda/Sort.cu sm_90");
    return a;
  };
  const auto learnt = RunOne(*victim, keyed("sleep 0.2"));
  ASSERT_EQ(learnt.result().exit_code(), 0) << Describe(learnt);
  auto seen = victim->GetExpectedCosts({"native/cuda/Sort.cu sm_90"});
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_GT(seen->at(0), 0.1);
  EXPECT_LT(seen->at(0), 2.0);
  // The attacker learns nothing of it...
  EXPECT_THAT(*attacker->GetExpectedCosts({"native/cuda/Sort.cu sm_90"}), ElementsAre(0));
  // ...and its own run under the same key teaches only its own scope.
  const auto rewrite = RunOne(*attacker, keyed("sleep 3"));
  ASSERT_EQ(rewrite.result().exit_code(), 0) << Describe(rewrite);
  EXPECT_GT(attacker->GetExpectedCosts({"native/cuda/Sort.cu sm_90"})->at(0), 2.5);
  EXPECT_THAT(*victim->GetExpectedCosts({"native/cuda/Sort.cu sm_90"}), ElementsAre(seen->at(0)));
}

}  // namespace
}  // namespace farm::testing
