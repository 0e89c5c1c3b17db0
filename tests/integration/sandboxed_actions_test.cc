// The hostile probe of issue 15 (items 2 and 3), each attack as an action on a real worker:
// poisoning an input, writing outside the scratch dir, reading the worker's token, running as
// root, leaving processes behind (normal exit, timeout, cancel, worker killed), scratch dirs
// left by a dead worker. Workers sandbox by default; one started with --no-sandbox says so.
#include <signal.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/auth/token.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/cc/file_tree_builder.h"
#include "libfarm/cc/loader_closure.h"
#include "libfarm/file_tree/file_tree.h"
#include "libfarm/process/process_table.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class SandboxedActionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto farm = TestFarm::Start(dir_.path(), {.coordinator_args = {"--worker-timeout", "2s"},
                                              .workers = {WorkerSpec("w1")}});
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
    token_ = farm_->AdminToken();
    actions_ = ActionClient::Connect(farm_->address(), token_);
    cas_ = CasClient::Connect(farm_->address(), token_);
  }
  static TestWorker WorkerSpec(const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--cuda-path", "none"};
    args.insert(args.end(), extra.begin(), extra.end());
    return {.name = name, .args = args};
  }
  std::string ScratchRoot(const std::string& worker) { return dir_ / (worker + "/scratch"); }
  farm::v1::Action Shell(const std::string& script) {
    farm::v1::Action a;
    a.add_argv("/bin/sh");
    a.add_argv("-c");
    a.add_argv(script);
    (*a.mutable_env())["PATH"] = "/usr/bin:/bin";
    a.set_build_id("b");
    return a;
  }
  farm::v1::ActionStatus RunOne(const farm::v1::Action& a) {
    auto submitted = actions_->Execute({a});
    EXPECT_TRUE(submitted.ok()) << submitted.status();
    if (!submitted.ok()) return {};
    auto done = actions_->WaitAll({submitted->front().action_id()}, absl::Seconds(60));
    EXPECT_TRUE(done.ok()) << done.status();
    return done.ok() ? done->front() : farm::v1::ActionStatus();
  }
  // Submits `a` and waits until a process carrying `marker` runs: the action started its
  // escapee. Returns the action id.
  std::string StartWithEscapee(const farm::v1::Action& a, const std::string& marker) {
    auto submitted = actions_->Execute({a});
    EXPECT_TRUE(submitted.ok()) << submitted.status();
    if (!submitted.ok()) return "";
    // The command itself, not bwrap, whose arguments name the marker from the moment it is
    // spawned: a worker killed while bwrap still sets the sandbox up can leave it running
    // (its init binds itself to its parent only then), which the restart's cleanup is for.
    EXPECT_TRUE(WaitFor(
        [&] {
          for (const ProcessEntry& p : ListProcesses()) {
            if (fs::path(p.args[0]).filename() == "bwrap") continue;
            if (absl::StrJoin(p.args, " ").find(marker) != std::string::npos) return true;
          }
          return false;
        },
        absl::Seconds(30)))
        << ReadFile(farm_->worker("w1").log_path());
    return submitted->front().action_id();
  }
  // A grandchild in a session of its own (out of the action's process group), found by the
  // marker on its command line.
  std::string Escapee(const std::string& marker) {
    return absl::StrCat("setsid sh -c 'sleep 300; echo ", marker, "' & ");
  }
  std::string Marker(const std::string& what) {
    return absl::StrCat("wheelfarm-", what, "-", ::getpid(), "-", dir_.path().filename().string());
  }
  std::string Describe(const farm::v1::ActionStatus& s) {
    return absl::StrCat(s.DebugString(), "\nworker log:\n",
                        ReadFile(farm_->worker("w1").log_path()));
  }

  TempDir dir_{"sandbox"};
  std::unique_ptr<TestFarm> farm_;
  std::string token_;
  std::unique_ptr<ActionClient> actions_;
  std::unique_ptr<CasClient> cas_;
};

TEST_F(SandboxedActionsTest, PoisoningAnInputLeavesLaterActionsTheCleanBytes) {
  auto clean = cas_->UploadBytes("clean input\n");
  ASSERT_TRUE(clean.ok());
  auto with_input = [&](const std::string& script) {
    auto a = Shell(script);
    auto* in = a.add_inputs();
    in->set_path("in.txt");
    *in->mutable_digest() = *clean;
    return a;
  };
  // The probe's attack: its own copy changes, nothing else does.
  auto poisoner = RunOne(with_input("chmod u+w in.txt; echo POISON >> in.txt; cat in.txt"));
  ASSERT_EQ(poisoner.state(), farm::v1::ACTION_STATE_COMPLETED) << Describe(poisoner);
  EXPECT_EQ(poisoner.result().stdout_tail(), "clean input\nPOISON\n");
  // Another action (not an action-cache hit) on the same and only worker.
  auto reader = RunOne(with_input("cat in.txt; echo read"));
  ASSERT_EQ(reader.state(), farm::v1::ACTION_STATE_COMPLETED) << Describe(reader);
  EXPECT_FALSE(reader.result().cache_hit());
  EXPECT_EQ(reader.result().stdout_tail(), "clean input\nread\n");
  // The blob cache itself is not even visible to an action.
  auto seeker = RunOne(Shell(absl::StrCat("ls ", dir_ / "w1/cache", " 2>&1; echo $?")));
  EXPECT_THAT(seeker.result().stdout_tail(), HasSubstr("No such file or directory"));
}

// An image action's inputs outside its outputs' directories are hard links to the worker's
// cached copies (BlobCache::LinkAt), which the next action links too. The probe's attack on
// such an input must fail, and the next action must read the clean bytes.
TEST_F(SandboxedActionsTest, AnImageActionCannotChangeAnInputLinkedIntoTheNextOne) {
  // The toolchain: bash (the "compiler": the worker checks it with --version), stat, chmod and
  // cat, with what they load.
  cc::FileTreeBuilder toolchain;
  for (const std::string program :
       {"/bin/bash", "/usr/bin/stat", "/usr/bin/chmod", "/usr/bin/cat"}) {
    ASSERT_TRUE(toolchain.Add(program, "/").ok()) << program;
    auto closure = cc::LoaderClosure(program);
    ASSERT_TRUE(closure.ok()) << closure.status();
    for (const std::string& path : *closure) ASSERT_TRUE(toolchain.Add(path, "/").ok()) << path;
  }
  // The inputs: a header in a source directory of this test (under /tmp, which stays writable:
  // the image's /tmp entries are shown in a private one) and a system header.
  const fs::path src = dir_.path() / "src";
  fs::create_directories(src);
  fs::create_directories(dir_.path() / "out");
  // same.h: in.h's bytes and mtime again; out/gen.h: an input in the output's directory.
  for (const fs::path& file : {src / "in.h", src / "same.h", dir_.path() / "out" / "gen.h"}) {
    std::ofstream(file) << "clean header\n";
    fs::last_write_time(file, fs::last_write_time(src / "in.h"));
  }
  cc::FileTreeBuilder inputs;
  for (const std::string file : {"in.h", "same.h", "../out/gen.h", "/usr/include/stdio.h"}) {
    ASSERT_TRUE(inputs.Add(file, src.string()).ok()) << file;
  }
  for (const cc::FileTreeBuilder* tree : {&toolchain, &inputs}) {
    for (const auto& [path, digest] : tree->FilesToUpload()) {
      auto uploaded = cas_->UploadFile(path);
      ASSERT_TRUE(uploaded.ok()) << uploaded.status();
    }
  }
  auto toolchain_digest = cas_->UploadBytes(SerializeFileTree(toolchain.Tree()));
  auto inputs_digest = cas_->UploadBytes(SerializeFileTree(inputs.Tree()));
  ASSERT_TRUE(toolchain_digest.ok() && inputs_digest.ok());
  const std::string out = (dir_.path() / "out" / "o.txt").string();
  struct utsname host {};
  ASSERT_EQ(::uname(&host), 0);
  const std::string cpu_arch = host.machine;
  auto image_action = [&](const std::string& script) {
    farm::v1::Action a;
    for (const std::string arg : {"/bin/bash", "-c", script.c_str()}) a.add_argv(arg);
    (*a.mutable_env())["PATH"] = "/usr/bin:/bin";
    a.set_working_directory(src.string());
    a.add_output_paths(out.substr(1));
    *a.mutable_toolchain()->mutable_tree() = *toolchain_digest;
    a.mutable_toolchain()->set_compiler("/bin/bash");
    a.mutable_toolchain()->set_cpu_arch(cpu_arch);
    *a.mutable_input_tree() = *inputs_digest;
    a.mutable_requirements()->set_os("linux");
    a.mutable_requirements()->set_cpu_arch(cpu_arch);
    a.mutable_requirements()->set_sandbox(true);
    a.set_build_id("b");
    return a;
  };
  const std::string poison =
      "for f in in.h /usr/include/stdio.h; do chmod u+w $f; echo POISON >> $f; done; ";
  auto poisoner =
      RunOne(image_action(absl::StrCat("stat -c %h in.h /usr/include/stdio.h same.h ../out/gen.h; ",
                                       poison, "cat in.h > ", out, "; echo done")));
  ASSERT_EQ(poisoner.state(), farm::v1::ACTION_STATE_COMPLETED) << Describe(poisoner);
  // Links (the cached copy is the other name), that neither chmod nor a write can change; a
  // second path of the same bytes and mtime, and an input where the action may write: copies.
  EXPECT_EQ(poisoner.result().stdout_tail(), "2\n2\n1\n1\ndone\n") << Describe(poisoner);
  for (const std::string file : {"'in.h'", "'/usr/include/stdio.h'"}) {
    EXPECT_THAT(poisoner.result().stderr_tail(),
                HasSubstr(absl::StrCat(file, ": Read-only file system")));
  }
  auto reader = RunOne(image_action(
      absl::StrCat("cat in.h > ", out, "; cat in.h; mapfile -t l < /usr/include/stdio.h; ",
                   "echo \"${l[-1]}\"")));
  ASSERT_EQ(reader.state(), farm::v1::ACTION_STATE_COMPLETED) << Describe(reader);
  EXPECT_FALSE(reader.result().cache_hit());
  EXPECT_EQ(reader.result().stdout_tail(), "clean header\n#endif /* <stdio.h> included.  */\n")
      << Describe(reader);
}

TEST_F(SandboxedActionsTest, WritingOutsideTheScratchDirFails) {
  const std::string tag = std::to_string(::getpid());
  // The system is read-only and the rest of the host is not there at all.
  const std::vector<std::string> refused = {
      absl::StrCat("/usr/local/escaped-", tag),
      absl::StrCat("/etc/escaped-", tag),
      absl::StrCat("/var/tmp/escaped-", tag),
      absl::StrCat("/root/escaped-", tag),
  };
  // Under /tmp, which is the action's own (writes land in its private tmpfs): the test's
  // temp dir, the worker's work dir beside the scratch dir, /tmp itself.
  const std::vector<std::string> private_tmp = {dir_ / "escaped", dir_ / "w1/escaped",
                                                absl::StrCat("/tmp/escaped-", tag)};
  std::string script = "echo mine > mine.txt && echo wrote-scratch; ";
  for (const std::string& t : refused) {
    absl::StrAppend(&script, "echo x > ", t, " && echo WROTE ", t, "; ");
  }
  for (const std::string& t : private_tmp) {
    absl::StrAppend(&script, "mkdir -p $(dirname ", t, ") && echo x > ", t, "; ");
  }
  auto a = Shell(absl::StrCat(script, "true"));
  a.add_output_paths("mine.txt");
  auto status = RunOne(a);
  ASSERT_EQ(status.state(), farm::v1::ACTION_STATE_COMPLETED) << Describe(status);
  EXPECT_EQ(status.result().stdout_tail(), "wrote-scratch\n") << status.result().stderr_tail();
  EXPECT_THAT(status.result().stderr_tail(), HasSubstr("Read-only file system"));
  for (const std::string& t : refused) EXPECT_FALSE(fs::exists(t)) << t;
  for (const std::string& t : private_tmp) EXPECT_FALSE(fs::exists(t)) << t;
  ASSERT_EQ(status.result().outputs_size(), 1);
}

TEST_F(SandboxedActionsTest, TheWorkersTokenFileIsUnreadable) {
  auto status =
      RunOne(Shell(absl::StrCat("cat ", farm_->admin_token_file(),
                                " 2>&1; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; "
                                "ls /etc/wheelfarm 2>&1; true")));
  ASSERT_EQ(status.state(), farm::v1::ACTION_STATE_COMPLETED) << Describe(status);
  EXPECT_THAT(status.result().stdout_tail(), Not(HasSubstr(token_)));
  EXPECT_THAT(status.result().stdout_tail(), HasSubstr("No such file or directory"));
}

TEST_F(SandboxedActionsTest, RunsAsAnUnprivilegedUserWhoseOutputsTheWorkerStillReadsAndRemoves) {
  auto a = Shell(
      "id -u; id -g; umask 077; mkdir -p out; echo secret > out/private.txt; "
      "chmod 500 out; id -u > uid.txt");
  a.add_output_paths("out/private.txt");
  auto status = RunOne(a);
  ASSERT_EQ(status.state(), farm::v1::ACTION_STATE_COMPLETED) << Describe(status);
  EXPECT_EQ(status.result().stdout_tail(), "65534\n65534\n");
  ASSERT_EQ(status.result().outputs_size(), 1) << Describe(status);
  EXPECT_EQ(*cas_->DownloadBytes(status.result().outputs(0).digest(), 1 << 20), "secret\n");
  // The worker removed the scratch dir, read-only directory and all.
  EXPECT_TRUE(WaitFor([&] { return fs::is_empty(ScratchRoot("w1")); }, absl::Seconds(5)));
}

TEST_F(SandboxedActionsTest, SetsidGrandchildDiesWhenTheActionExits) {
  const std::string marker = Marker("exit");
  auto status = RunOne(Shell(Escapee(marker) + "sleep 1; echo done"));
  ASSERT_EQ(status.state(), farm::v1::ACTION_STATE_COMPLETED) << Describe(status);
  EXPECT_EQ(status.result().stdout_tail(), "done\n");
  EXPECT_TRUE(WaitFor([&] { return !AnyProcessCommandLineContains(marker); }, absl::Seconds(5)));
}

TEST_F(SandboxedActionsTest, SetsidGrandchildDiesOnTimeout) {
  const std::string marker = Marker("timeout");
  auto a = Shell(Escapee(marker) + "sleep 300");
  a.set_timeout_seconds(2);
  auto status = RunOne(a);
  ASSERT_EQ(status.state(), farm::v1::ACTION_STATE_COMPLETED) << Describe(status);
  EXPECT_EQ(status.result().exit_code(), 128 + 9);
  EXPECT_THAT(status.result().stderr_tail(), HasSubstr("timeout of 2 s"));
  EXPECT_TRUE(WaitFor([&] { return !AnyProcessCommandLineContains(marker); }, absl::Seconds(5)));
}

TEST_F(SandboxedActionsTest, SetsidGrandchildDiesOnCancel) {
  const std::string marker = Marker("cancel");
  const std::string id = StartWithEscapee(Shell(Escapee(marker) + "sleep 300"), marker);
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(actions_->Cancel(id)->state(), farm::v1::ACTION_STATE_CANCELLED);
  EXPECT_TRUE(WaitFor([&] { return !AnyProcessCommandLineContains(marker); }, absl::Seconds(10)))
      << ReadFile(farm_->worker("w1").log_path());
  EXPECT_TRUE(WaitFor([&] { return fs::is_empty(ScratchRoot("w1")); }, absl::Seconds(5)));
}

TEST_F(SandboxedActionsTest, KilledWorkersActionDiesAndItsScratchDirGoesOnRestart) {
  const std::string marker = Marker("kill9");
  const std::string id =
      StartWithEscapee(Shell(Escapee(marker) + "echo left-behind > left.txt; sleep 300"), marker);
  ASSERT_FALSE(id.empty());
  farm_->KillWorker("w1");
  EXPECT_TRUE(WaitFor([&] { return !AnyProcessCommandLineContains(marker); }, absl::Seconds(10)));
  ASSERT_FALSE(fs::is_empty(ScratchRoot("w1")));  // what the dead worker could not clean
  // The action is not to run again: the restart's cleanup is what is looked at.
  EXPECT_TRUE(actions_->Cancel(id).ok());
  // A sandbox that outlived its worker all the same (as --die-with-parent should not allow):
  // the restart kills it.
  const std::string straggler = Marker("straggler");
  const std::string leftover = ScratchRoot("w1") + "/leftover/root";
  fs::create_directories(leftover);
  auto outlived = Subprocess::Spawn(
      {"/usr/bin/bwrap", "--unshare-user", "--unshare-pid", "--ro-bind", "/", "/", "--bind",
       leftover, leftover, "--", "sh", "-c", absl::StrCat("sleep 300; echo ", straggler)},
      {.new_session = true});
  ASSERT_TRUE(outlived.ok()) << outlived.status();
  ASSERT_TRUE(WaitFor([&] { return AnyProcessCommandLineContains(straggler); }, absl::Seconds(10)));
  // Until the coordinator sees the dead worker lost, "online" would be about it.
  ASSERT_TRUE(WaitFor([&] { return farm_->WorkerState("w1") == "lost"; }, absl::Seconds(30)));
  absl::Status restarted = farm_->RestartWorker("w1");
  ASSERT_TRUE(restarted.ok()) << restarted;
  absl::Status online = farm_->WaitUntilOnline({"w1"});
  ASSERT_TRUE(online.ok()) << online;
  EXPECT_TRUE(fs::is_empty(ScratchRoot("w1"))) << ReadFile(farm_->worker("w1").log_path());
  EXPECT_THAT(ReadFile(farm_->worker("w1").log_path()), HasSubstr("left by an earlier run"));
  EXPECT_TRUE(outlived->Wait(absl::Seconds(10)).has_value());
  EXPECT_FALSE(AnyProcessCommandLineContains(straggler));
  EXPECT_THAT(ReadFile(farm_->worker("w1").log_path()),
              HasSubstr("sandbox process(es) left by an earlier run"));
}

TEST_F(SandboxedActionsTest, NoSandboxWorkerShowsInFarmctlWorkers) {
  auto w2 = farm_->StartWorker(WorkerSpec("w2", {"--no-sandbox"}));
  ASSERT_TRUE(w2.ok()) << w2.status();
  absl::Status online = farm_->WaitUntilOnline({"w2"});
  ASSERT_TRUE(online.ok()) << online;
  auto listed = farm_->ListWorkers();
  bool saw_w1 = false, saw_w2 = false;
  for (const auto& w : listed) {
    if (w.value("name", "") == "w1") saw_w1 = w.value("sandboxed", false);
    if (w.value("name", "") == "w2") saw_w2 = !w.value("sandboxed", true);
  }
  EXPECT_TRUE(saw_w1) << listed.dump(2);
  EXPECT_TRUE(saw_w2) << listed.dump(2);
  CommandResult table = farm_->Farmctl({"workers"});
  ASSERT_EQ(table.exit_code, 0) << Output(table);
  EXPECT_THAT(table.stdout_text, HasSubstr("SANDBOX"));
  EXPECT_THAT(table.stdout_text, ::testing::ContainsRegex("w1 .* yes "));
  EXPECT_THAT(table.stdout_text, ::testing::ContainsRegex("w2 .* NO "));
  EXPECT_THAT(ReadFile(farm_->worker("w2").log_path()), HasSubstr("--no-sandbox"));
}

// A host where bubblewrap cannot run: the worker refuses to start (exit 2, like other
// configuration errors) and says how to fix it.
TEST_F(SandboxedActionsTest, WorkerWithoutBubblewrapRefusesToStart) {
  const std::string bin = dir_ / "fake-bin";
  WriteText(bin + "/bwrap",
            "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n");
  fs::permissions(bin + "/bwrap", fs::perms(0755));
  auto no_userns = RunCommand(
      {FarmBinary("farm-worker"), "--coordinator", farm_->address(), "--token-file",
       farm_->admin_token_file(), "--name", "w3", "--work-dir", dir_ / "w3", "--cuda-path", "none"},
      absl::Seconds(30), {absl::StrCat("PATH=", bin, ":/usr/bin:/bin")});
  ASSERT_TRUE(no_userns.ok());
  EXPECT_EQ(no_userns->exit_code, 2) << Output(*no_userns);
  EXPECT_THAT(no_userns->stderr_text + no_userns->stdout_text,
              HasSubstr("No permissions to creating new namespace"));
  EXPECT_THAT(no_userns->stderr_text + no_userns->stdout_text, HasSubstr("--no-sandbox"));
  auto missing = RunCommand(
      {FarmBinary("farm-worker"), "--coordinator", farm_->address(), "--token-file",
       farm_->admin_token_file(), "--name", "w4", "--work-dir", dir_ / "w4", "--cuda-path", "none"},
      absl::Seconds(30), {"PATH=" + dir_ / "empty-bin"});
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->exit_code, 2) << Output(*missing);
  EXPECT_THAT(missing->stderr_text + missing->stdout_text, HasSubstr("apt-get install bubblewrap"));
}

}  // namespace
}  // namespace farm::testing
