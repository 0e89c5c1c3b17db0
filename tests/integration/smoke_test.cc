// The smoke stage of a wheel build (issue 28): after verification, a worker with a GPU of each
// requested SM installs the wheel into a fresh environment and runs the recipe's [smoke]
// command; the recipe's policy decides whether the wheel is published. CI has no GPU, so the
// worker declares one (--gpu sm_90) and the demo recipe's own smoke command runs its part that
// needs none (compiled_archs() holds the SM). One farm for the suite: the demo builds are the
// cost (device compiles are cached after the first).
#include <rocksdb/db.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/support/demo_recipe.h"
#include "tests/support/suite_fixture.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A smoke command that installs and imports the wheel, then fails with its own words.
const std::string kFailingSmoke =
    "[smoke]\ncommand = [\"python\", \"-c\", \"import demo_cuda_ext, sys; "
    "print('archs', demo_cuda_ext.compiled_archs()); sys.exit('kernel check failed on "
    "purpose')\"]\n";

// A smoke test that takes a while: long enough for the coordinator to restart under it.
const std::string kSlowSmoke =
    "[smoke]\ncommand = [\"python\", \"-c\", \"import demo_cuda_ext, time; time.sleep(20); "
    "print('slow smoke test passed', demo_cuda_ext.compiled_archs())\"]\n";

class SmokeTest : public SuiteFixture<SmokeTest> {
 protected:
  static void SetUpSuite() {
    // As in submit_test: the workers make the recipe's environment themselves.
    LeaveVirtualenvs();
    dir_ = std::make_unique<TempDir>("smoke-test");
    const fs::path src = *dir_ / "src";
    fs::copy(FARM_SOURCE_DIR "/examples/demo-cuda-ext", src, fs::copy_options::recursive);
    for (const char* leftover : {"build", "dist", "demo_cuda_ext.egg-info"}) {
      fs::remove_all(src / leftover);
    }
    const std::string recipes = *dir_ / "recipes";
    // Each recipe publishes to its own directory: what is there is what was published.
    auto recipe = [&](const std::string& name, const std::string& smoke_policy,
                      const std::string& smoke_section) {
      fs::create_directories(*dir_ / ("published/" + name));
      std::string text = DemoRecipe(
          name,
          {{FARM_SOURCE_DIR "/examples/demo-cuda-ext", src.string()},
           {"[[publish]]\nkind = \"builtin\"\n",
            absl::StrCat("[[publish]]\nkind = \"command\"\ncommand = [\"cp\", \"{wheel}\", \"",
                         *dir_ / ("published/" + name), "/\"]\n")}});
      if (!smoke_section.empty()) text = text.substr(0, text.find("[smoke]")) + smoke_section;
      const size_t smoke = text.find("[smoke]\n");
      EXPECT_NE(smoke, std::string::npos) << "recipes/demo.toml has no [smoke] section";
      text.insert(smoke + 8, smoke_policy);
      WriteText(absl::StrCat(recipes, "/", name, ".toml"), text);
    };
    recipe("shipped", "", "");                       // the demo's own smoke test
    recipe("required", "require_gpu = true\n", "");  // every SM must be tested
    recipe("impatient", "require_gpu = true\ngpu_wait = \"3s\"\n", "");
    recipe("abandoned", "require_gpu = true\n", "");  // cancelled while it waits
    recipe("blocked", "", kFailingSmoke);             // on_failure = "block", the default
    recipe("marked", "on_failure = \"mark\"\n", kFailingSmoke);
    recipe("slow", "require_gpu = true\n", kSlowSmoke);   // runs through a restart
    recipe("slow2", "require_gpu = true\n", kSlowSmoke);  // queued behind it
    recipe("lost", "require_gpu = true\n", kSlowSmoke);   // its action lost in a restart

    auto farm = TestFarm::Start(
        dir_->path(),
        {.coordinator_args = {"--recipes-dir", *dir_ / "recipes"},
         .workers = {{.name = "gpu1",
                      .args = {"--builds-dir", *dir_ / "builds", "--gpu", "sm_90:CI stand-in"},
                      .slots = 2}}});
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }

  static bool Online(const std::string& worker) { return farm_->WorkerState(worker) == "online"; }

  // Polls build `id`'s JSON until `holds`; the last JSON read.
  static nlohmann::json WaitForBuild(const std::string& id,
                                     const std::function<bool(const nlohmann::json&)>& holds) {
    nlohmann::json build;
    WaitFor(
        [&] {
          build = BuildJson(id);
          return holds(build);
        },
        absl::Seconds(300));
    return build;
  }

  static void TearDownSuite() {
    farm_.reset();
    dir_.reset();
  }

  static CommandResult Farmctl(const std::vector<std::string>& args) {
    return farm_->Farmctl(args);
  }

  static nlohmann::json BuildJson(const std::string& id) {
    return nlohmann::json::parse(Farmctl({"--json", "build", id}).stdout_text, nullptr, false);
  }

  // The smoke result of `sm` in a build's JSON, or {}.
  static nlohmann::json SmokeOf(const nlohmann::json& build, const std::string& sm) {
    for (const auto& r : build.value("smoke", nlohmann::json::array())) {
      if (r.value("sm", "") == sm) return r;
    }
    return nlohmann::json::object();
  }

  static std::vector<std::string> Published(const std::string& recipe) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(*dir_ / ("published/" + recipe))) {
      names.push_back(e.path().filename().string());
    }
    return names;
  }

  static std::string Log(const std::string& id) { return Farmctl({"logs", id}).stdout_text; }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<TestFarm> farm_;
};

// sm_90 on the declared GPU: the demo's own smoke command passes there; sm_75 has no GPU
// worker, so it is reported not smoke-tested and (require_gpu = false) the wheel is published.
TEST_F(SmokeTest, TheDemoSmokeTestPassesOnTheDeclaredGpuAndAnSmWithoutOneIsNotSmokeTested) {
  CommandResult r = Farmctl({"submit", "shipped-0.1.0", "--archs", "7.5;9.0", "--wait"});
  ASSERT_EQ(r.exit_code, 0) << Output(r) << ReadFile(farm_->worker("gpu1").log_path());
  EXPECT_THAT(r.stdout_text, HasSubstr("smoke tests"));
  EXPECT_THAT(r.stdout_text, ::testing::ContainsRegex("sm_90 +passed +sm_90 +gpu1"));
  EXPECT_THAT(r.stdout_text, ::testing::ContainsRegex("sm_75 +not run"));
  EXPECT_THAT(r.stdout_text, HasSubstr("sm_75 not smoke-tested: no online GPU worker"));
  const std::string id = SubmittedBuildId(r);
  const nlohmann::json build = BuildJson(id);
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_SUCCEEDED") << build.dump(2);
  const nlohmann::json sm90 = SmokeOf(build, "sm_90");
  EXPECT_EQ(sm90.value("state", ""), "passed") << build.dump(2);
  EXPECT_EQ(sm90.value("worker", ""), "gpu1");
  // The command's own output, kept with the build.
  EXPECT_THAT(sm90.value("output", ""), HasSubstr("has sm_90")) << sm90.dump(2);
  EXPECT_THAT(sm90.value("output", ""), HasSubstr("kernels not run")) << sm90.dump(2);
  EXPECT_EQ(SmokeOf(build, "sm_75").value("state", ""), "not run") << build.dump(2);
  EXPECT_THAT(build.value("reason", ""), HasSubstr("sm_75 was not smoke-tested"));
  EXPECT_THAT(Log(id), HasSubstr("wheelfarm: smoke test sm_90 on gpu1 (sm_90 GPU): passed"));
  EXPECT_THAT(Published("shipped"), ::testing::SizeIs(1));
}

// require_gpu: sm_75 waits for a GPU worker that runs it, up to the recipe's gpu_wait (3s),
// then the build fails naming the SM, how long it waited and the fix.
TEST_F(SmokeTest, ARequiredSmWhoseWaitForAGpuWorkerRunsOutFailsTheBuildWithTheFix) {
  CommandResult r =
      Farmctl({"submit", "impatient-0.1.0", "--archs", "7.5;9.0", "--wait", "--interval", "0.2"});
  EXPECT_NE(r.exit_code, 0) << Output(r);
  // While it waited, `submit --wait` said what for.
  EXPECT_THAT(r.stdout_text,
              ::testing::ContainsRegex("verifying: .* - smoke testing demo_cuda_ext-0.1.0\\+"))
      << Output(r);
  EXPECT_THAT(r.stdout_text, HasSubstr("; sm_75 waiting for a GPU worker that runs it (up to 3s)"))
      << Output(r);
  const std::string said = r.stderr_text + r.stdout_text;
  EXPECT_THAT(said, HasSubstr("sm_75 was not smoke-tested: waited 3s (the recipe's [smoke] "
                              "gpu_wait) for a GPU worker"));
  EXPECT_THAT(said, HasSubstr("that runs sm_75 (none online; GPUs online: sm_90 on gpu1)"));
  EXPECT_THAT(said, HasSubstr("require_gpu = true). Fix: bring a GPU worker that runs sm_75 "
                              "online (farm-worker --gpu sm_75) and submit again, or set "
                              "require_gpu = false"));
  const std::string id = SubmittedBuildId(r);
  const nlohmann::json build = BuildJson(id);
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_FAILED") << build.dump(2);
  EXPECT_EQ(SmokeOf(build, "sm_90").value("state", ""), "passed") << build.dump(2);
  EXPECT_EQ(SmokeOf(build, "sm_75").value("state", ""), "not run") << build.dump(2);
  const std::string log = Log(id);
  EXPECT_THAT(log, HasSubstr("wheelfarm: smoke test sm_75: waiting for a GPU worker"));
  EXPECT_THAT(log, HasSubstr("it waits up to 3s (the recipe's [smoke] has require_gpu = true)"));
  EXPECT_THAT(log, HasSubstr("wheelfarm: smoke test sm_75: not run: waited 3s"));
  EXPECT_THAT(Published("impatient"), ::testing::IsEmpty());
}

// Cancelling a build that waits for a GPU worker ends the wait.
TEST_F(SmokeTest, CancellingABuildThatWaitsForAGpuWorkerEndsTheWait) {
  CommandResult r = Farmctl({"submit", "abandoned-0.1.0", "--archs", "7.5"});
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  const std::string id = SubmittedBuildId(r);
  nlohmann::json build = WaitForBuild(
      id, [](const auto& b) { return SmokeOf(b, "sm_75").value("state", "") == "waiting"; });
  ASSERT_EQ(SmokeOf(build, "sm_75").value("state", ""), "waiting") << build.dump(2) << Log(id);
  CommandResult cancel = Farmctl({"cancel", id});
  ASSERT_EQ(cancel.exit_code, 0) << Output(cancel);
  build = BuildJson(id);
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_CANCELLED") << build.dump(2);
  EXPECT_EQ(SmokeOf(build, "sm_75").value("state", ""), "not run") << build.dump(2);
  EXPECT_EQ(SmokeOf(build, "sm_75").value("reason", ""), "the build was cancelled while it waited");
  EXPECT_THAT(Published("abandoned"), ::testing::IsEmpty());
}

TEST_F(SmokeTest, AFailedSmokeTestBlocksPublishingAndShowsTheCommandsOutput) {
  CommandResult r = Farmctl({"submit", "blocked-0.1.0", "--archs", "9.0", "--wait"});
  EXPECT_NE(r.exit_code, 0) << Output(r);
  EXPECT_THAT(r.stderr_text + r.stdout_text, HasSubstr("the smoke test failed on sm_90 (gpu1)"));
  EXPECT_THAT(r.stdout_text, ::testing::ContainsRegex("sm_90 +FAILED"));
  EXPECT_THAT(r.stdout_text, HasSubstr("kernel check failed on purpose"));
  const std::string id = SubmittedBuildId(r);
  const nlohmann::json build = BuildJson(id);
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_FAILED") << build.dump(2);
  EXPECT_THAT(build.value("reason", ""), HasSubstr("not published"));
  EXPECT_THAT(SmokeOf(build, "sm_90").value("output", ""), HasSubstr("archs ['sm_90']"));
  EXPECT_THAT(Log(id), HasSubstr("kernel check failed on purpose"));
  EXPECT_THAT(Published("blocked"), ::testing::IsEmpty());
}

TEST_F(SmokeTest, AFailedSmokeTestOnlyMarksTheBuildWhenThePolicyIsMark) {
  CommandResult r = Farmctl({"submit", "marked-0.1.0", "--archs", "9.0", "--wait"});
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  EXPECT_THAT(r.stdout_text, ::testing::ContainsRegex("sm_90 +FAILED"));
  const nlohmann::json build = BuildJson(SubmittedBuildId(r));
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_SUCCEEDED") << build.dump(2);
  EXPECT_EQ(SmokeOf(build, "sm_90").value("state", ""), "failed");
  EXPECT_THAT(build.value("reason", ""), HasSubstr("marked: the smoke test failed on sm_90"));
  EXPECT_THAT(Published("marked"), ::testing::SizeIs(1));
}

// require_gpu: a smoke test running when the coordinator restarts is followed to its end after
// the restart, and the wheel published: its action is the scheduler's, kept across the restart.
TEST_F(SmokeTest, ARequiredSmokeTestRunningAcrossACoordinatorRestartIsFollowedToItsEnd) {
  CommandResult r = Farmctl({"submit", "slow-0.1.0", "--archs", "9.0"});
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  const std::string id = SubmittedBuildId(r);
  nlohmann::json build = WaitForBuild(
      id, [](const auto& b) { return SmokeOf(b, "sm_90").value("state", "") == "running"; });
  ASSERT_EQ(SmokeOf(build, "sm_90").value("state", ""), "running") << build.dump(2) << Log(id);

  farm_->StopCoordinator();
  absl::Status restarted = farm_->RestartCoordinator();
  ASSERT_TRUE(restarted.ok()) << restarted;

  build = WaitForBuild(id, [](const auto& b) {
    return b.value("state", "") != "BUILD_STATE_VERIFYING" &&
           b.value("state", "") != "BUILD_STATE_PUBLISHING";
  });
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_SUCCEEDED")
      << build.dump(2) << Log(id) << ReadFile(farm_->worker("gpu1").log_path());
  const nlohmann::json sm90 = SmokeOf(build, "sm_90");
  EXPECT_EQ(sm90.value("state", ""), "passed") << build.dump(2);
  EXPECT_EQ(sm90.value("worker", ""), "gpu1");
  EXPECT_THAT(sm90.value("output", ""), HasSubstr("slow smoke test passed")) << sm90.dump(2);
  EXPECT_THAT(Published("slow"), ::testing::SizeIs(1));
}

// Deletes action `id`'s record from the stopped coordinator's store, as a record that left it
// (pruned, quarantined at start) is gone.
void ForgetAction(const std::string& data_dir, const std::string& id) {
  const std::string dir = data_dir + "/state";
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const auto& n : names) families.emplace_back(n, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(rocksdb::Options(), dir, families, &handles, &raw);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::ColumnFamilyHandle* actions = nullptr;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "actions") actions = handles[i];
  }
  std::string value;
  EXPECT_TRUE(actions != nullptr && db->Get(rocksdb::ReadOptions(), actions, id, &value).ok())
      << "no action " << id;
  rocksdb::WriteOptions sync;
  sync.sync = true;
  EXPECT_TRUE(actions != nullptr && db->Delete(sync, actions, id).ok());
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  db->Close();
}

// require_gpu: a smoke test whose action the coordinator lost across a restart (its record left
// the store) is placed and queued again, and the wheel published: not the build failed for an
// SM "not run".
TEST_F(SmokeTest, ARequiredSmokeTestWhoseActionIsLostAcrossARestartIsQueuedAgain) {
  CommandResult r = Farmctl({"submit", "lost-0.1.0", "--archs", "9.0"});
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  const std::string id = SubmittedBuildId(r);
  nlohmann::json build = WaitForBuild(
      id, [](const auto& b) { return SmokeOf(b, "sm_90").value("state", "") == "running"; });
  const std::string lost = SmokeOf(build, "sm_90").value("action_id", "");
  ASSERT_FALSE(lost.empty()) << build.dump(2) << Log(id);

  farm_->StopCoordinator();
  ForgetAction(*dir_ / "data", lost);
  absl::Status restarted = farm_->RestartCoordinator();
  ASSERT_TRUE(restarted.ok()) << restarted;

  build = WaitForBuild(id, [](const auto& b) {
    return b.value("state", "") != "BUILD_STATE_VERIFYING" &&
           b.value("state", "") != "BUILD_STATE_PUBLISHING";
  });
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_SUCCEEDED") << build.dump(2) << Log(id);
  const nlohmann::json sm90 = SmokeOf(build, "sm_90");
  EXPECT_EQ(sm90.value("state", ""), "passed") << build.dump(2);
  EXPECT_NE(sm90.value("action_id", ""), lost);
  const std::string log = Log(id);
  EXPECT_THAT(log, HasSubstr("wheelfarm: smoke test sm_90: its action is gone"));
  EXPECT_THAT(log, HasSubstr("the test is placed again"));
  EXPECT_THAT(Published("lost"), ::testing::SizeIs(1));
}

// require_gpu: a smoke test still queued for a GPU worker's slot when the coordinator restarts
// runs once the slot is free, after the restart, and the wheel is published.
TEST_F(SmokeTest, ARequiredSmokeTestQueuedAcrossACoordinatorRestartRunsAfterIt) {
  auto gpu3 = farm_->StartWorker(
      {.name = "gpu3", .args = {"--builds-dir", *dir_ / "builds3", "--gpu", "sm_80:CI stand-in"}});
  ASSERT_TRUE(gpu3.ok()) << gpu3.status();
  absl::Status online = farm_->WaitUntilOnline({"gpu3"});
  ASSERT_TRUE(online.ok()) << online;
  std::vector<std::string> ids;
  for (const char* ref : {"slow-0.1.0", "slow2-0.1.0"}) {
    CommandResult r = Farmctl({"submit", ref, "--archs", "8.0"});
    ASSERT_EQ(r.exit_code, 0) << Output(r);
    ids.push_back(SubmittedBuildId(r));
  }
  // gpu3's one slot runs one test; the other waits for it in the queue.
  std::string queued;
  ASSERT_TRUE(WaitFor(
      [&] {
        std::set<std::string> states;
        for (const std::string& id : ids) {
          const std::string state = SmokeOf(BuildJson(id), "sm_80").value("state", "");
          states.insert(state);
          if (state == "queued") queued = id;
        }
        return states == std::set<std::string>{"running", "queued"};
      },
      absl::Seconds(300)))
      << BuildJson(ids[0]).dump(2) << BuildJson(ids[1]).dump(2);

  farm_->StopCoordinator();
  absl::Status restarted = farm_->RestartCoordinator();
  ASSERT_TRUE(restarted.ok()) << restarted;

  for (const std::string& id : ids) {
    SCOPED_TRACE(id == queued ? "queued at the restart" : "running at the restart");
    const nlohmann::json build = WaitForBuild(id, [](const auto& b) {
      return b.value("state", "") != "BUILD_STATE_VERIFYING" &&
             b.value("state", "") != "BUILD_STATE_PUBLISHING";
    });
    EXPECT_EQ(build.value("state", ""), "BUILD_STATE_SUCCEEDED") << build.dump(2) << Log(id);
    const nlohmann::json sm80 = SmokeOf(build, "sm_80");
    EXPECT_EQ(sm80.value("state", ""), "passed") << build.dump(2);
    EXPECT_EQ(sm80.value("worker", ""), "gpu3");
  }
  // gpu3 leaves cleanly: the next test sees no sm_80 GPU online.
  farm_->StopWorker("gpu3", absl::Seconds(30));
  ASSERT_TRUE(WaitFor([] { return !Online("gpu3"); }, absl::Seconds(30)));
}

// require_gpu: with no GPU worker that runs sm_75 online, the build is not failed: sm_75 waits,
// through a coordinator restart, and is tested once a worker with such a GPU comes online.
// Last in the suite: the sm_75 worker it starts stays listed online for a while after it stops.
TEST_F(SmokeTest, ARequiredSmWaitsForAGpuWorkerAcrossARestartAndIsTestedWhenOneComesOnline) {
  CommandResult r = Farmctl({"submit", "required-0.1.0", "--archs", "7.5;9.0"});
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  const std::string id = SubmittedBuildId(r);
  auto waiting = [](const nlohmann::json& b) {
    return SmokeOf(b, "sm_75").value("state", "") == "waiting" &&
           SmokeOf(b, "sm_90").value("state", "") == "passed";
  };
  nlohmann::json build = WaitForBuild(id, waiting);
  ASSERT_TRUE(waiting(build)) << build.dump(2) << Log(id);
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_VERIFYING") << build.dump(2);
  EXPECT_THAT(build.value("reason", ""),
              HasSubstr("; sm_75 waiting for a GPU worker that runs it (up to 6h)"));
  CommandResult shown = Farmctl({"build", id});
  EXPECT_THAT(shown.stdout_text, ::testing::ContainsRegex("sm_75 +waiting"));
  EXPECT_THAT(shown.stdout_text,
              HasSubstr("that runs sm_75 (none online; GPUs online: sm_90 on gpu1); waited "));
  EXPECT_THAT(shown.stdout_text,
              HasSubstr("of 6h00m (the recipe's gpu_wait), then the build fails"));
  EXPECT_THAT(Log(id), HasSubstr("wheelfarm: smoke test sm_75: waiting for a GPU worker"));
  EXPECT_THAT(Published("required"), ::testing::IsEmpty());

  // The coordinator restarts: the build is still verifying, sm_75 still waiting.
  farm_->StopCoordinator();
  absl::Status restarted = farm_->RestartCoordinator();
  ASSERT_TRUE(restarted.ok()) << restarted;
  ASSERT_TRUE(WaitFor([] { return Online("gpu1"); }, absl::Seconds(60)));
  build = BuildJson(id);
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_VERIFYING") << build.dump(2);
  EXPECT_EQ(SmokeOf(build, "sm_75").value("state", ""), "waiting") << build.dump(2);

  // A worker whose GPU runs sm_75 comes online: the test runs there and the wheel is published.
  auto w = farm_->StartWorker(
      {.name = "gpu2", .args = {"--builds-dir", *dir_ / "builds2", "--gpu", "sm_75:CI stand-in"}});
  ASSERT_TRUE(w.ok()) << w.status();
  build = WaitForBuild(id, [](const auto& b) {
    return b.value("state", "") != "BUILD_STATE_VERIFYING" &&
           b.value("state", "") != "BUILD_STATE_PUBLISHING";
  });
  const std::string worker_log = ReadFile((*w)->log_path());
  farm_->KillWorker("gpu2");
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_SUCCEEDED") << build.dump(2) << worker_log;
  const nlohmann::json sm75 = SmokeOf(build, "sm_75");
  EXPECT_EQ(sm75.value("state", ""), "passed") << build.dump(2);
  EXPECT_EQ(sm75.value("worker", ""), "gpu2");
  EXPECT_THAT(sm75.value("output", ""), HasSubstr("has sm_75")) << sm75.dump(2);
  const std::string log = Log(id);
  EXPECT_THAT(log, HasSubstr("wheelfarm: smoke test sm_75: an online GPU worker runs it now"));
  EXPECT_THAT(log, HasSubstr("wheelfarm: smoke test sm_75 on gpu2 (sm_75 GPU): passed"));
  EXPECT_THAT(Published("required"), ::testing::SizeIs(1));
}

}  // namespace
}  // namespace farm::testing
