#include "coordinator/builds/build_registry.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/builds/build_log_blocks.h"
#include "coordinator/scheduler/scheduler.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class NoBlobs : public BlobIndex {
 public:
  bool Contains(const farm::v1::Digest&) override { return true; }
  absl::StatusOr<std::string> Read(const farm::v1::Digest& d, int64_t) override {
    return absl::NotFoundError(d.hash());
  }
  void Pin(const std::string&, const std::vector<farm::v1::Digest>&) override {}
  void Unpin(const std::string&) override {}
};

class BuildRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("build_registry_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    worker_.set_name("w1");
    worker_.set_state(farm::v1::WORKER_STATE_ONLINE);
    worker_.mutable_capabilities()->set_os("linux");
    worker_.mutable_capabilities()->set_cpu_arch("aarch64");
    worker_.mutable_capabilities()->set_slots(8);
    Reopen();
  }
  void TearDown() override {
    scheduler_.reset();
    builds_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }
  // A coordinator restart: everything rebuilt from the store.
  void Reopen() {
    scheduler_.reset();
    builds_.reset();
    store_.reset();
    metrics_ = std::make_unique<MetricsRegistry>();
    auto store = StateStore::Open(dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    scheduler_ = std::make_unique<Scheduler>(
        store_.get(), &blobs_, [this] { return std::vector<farm::v1::Worker>{worker_}; },
        metrics_.get(), SchedulerOptions{}, [this] { return now_; });
    ASSERT_TRUE(scheduler_->Load().ok());
    builds_ =
        std::make_unique<BuildRegistry>(store_.get(), metrics_.get(), [this] { return now_; });
    ASSERT_TRUE(builds_->Load().ok());
    scheduler_->AddObserver(builds_.get());
  }
  farm::v1::Action Shell(const std::string& script, const std::string& shard) {
    farm::v1::Action a;
    a.add_argv("sh");
    a.add_argv("-c");
    a.add_argv(script);
    a.set_build_id("b1");
    a.set_shard(shard);
    return a;
  }
  // Leases everything queued and completes it with `exit_code` per script.
  void RunAll(const std::map<std::string, int>& exit_by_script) {
    auto leases = scheduler_->Lease("w1", "s1", worker_.capabilities(), 8, absl::ZeroDuration());
    ASSERT_TRUE(leases.ok());
    now_ += absl::Seconds(3);
    std::vector<farm::v1::Completion> done;
    for (const auto& l : *leases) {
      farm::v1::Completion c;
      c.set_lease_id(l.lease_id());
      c.set_action_id(l.action_id());
      c.mutable_result()->set_exit_code(exit_by_script.at(l.action().argv(2)));
      c.mutable_result()->set_wall_seconds(3);
      if (c.result().exit_code() != 0) c.mutable_result()->set_stderr_tail("k.cu: error: boom\n");
      done.push_back(c);
    }
    ASSERT_TRUE(scheduler_->Complete("w1", done).ok());
  }

  fs::path dir_;
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  farm::v1::Worker worker_;
  NoBlobs blobs_;
  std::unique_ptr<MetricsRegistry> metrics_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<BuildRegistry> builds_;
};

TEST_F(BuildRegistryTest, ShardsFollowActionsAndSurviveARestart) {
  ASSERT_TRUE(
      scheduler_->Execute({Shell("a", "sm_90"), Shell("b", "sm_90"), Shell("c", "sm_80")}).ok());
  auto queued = builds_->Get("b1");
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(queued->kind(), farm::v1::BUILD_KIND_COMPILE);
  EXPECT_EQ(queued->state(), farm::v1::BUILD_STATE_QUEUED);
  ASSERT_EQ(queued->shards_size(), 2);
  EXPECT_EQ(queued->shards(1).name(), "sm_90");
  EXPECT_EQ(queued->shards(1).queued(), 2u);

  RunAll({{"a", 0}, {"b", 2}, {"c", 0}});
  auto check = [](const farm::v1::Build& b) {
    EXPECT_EQ(b.state(), farm::v1::BUILD_STATE_FAILED);
    EXPECT_THAT(b.reason(), HasSubstr("1 of 3 actions failed; first in sm_90 with exit code 2"));
    const auto& sm90 = b.shards(1);
    EXPECT_EQ(sm90.total(), 2u);
    EXPECT_EQ(sm90.done(), 1u);
    EXPECT_EQ(sm90.failed(), 1u);
    EXPECT_EQ(sm90.error(), "k.cu: error: boom\n");
    EXPECT_EQ(sm90.failed_exit_code(), 2);
    EXPECT_EQ(sm90.workers_size(), 1);
    // Which CPU compiled the shard: device compiles of any build host run on any CPU.
    EXPECT_EQ(sm90.worker_cpu_archs().at("w1"), "aarch64");
    EXPECT_DOUBLE_EQ(sm90.wall_seconds(), 6);
    EXPECT_EQ(b.shards(0).done(), 1u);
    EXPECT_TRUE(b.has_finished_at());
  };
  auto finished = builds_->Get("b1");
  ASSERT_TRUE(finished.ok());
  check(*finished);
  EXPECT_THAT(metrics_->Render(),
              HasSubstr("farm_builds_finished_total{kind=\"compile\",state=\"failed\"} 1\n"));
  EXPECT_THAT(metrics_->Render(), HasSubstr("farm_shard_duration_seconds_count 2\n"));

  Reopen();
  auto again = builds_->Get("b1");
  ASSERT_TRUE(again.ok());
  check(*again);
  // History is not counted again after a restart.
  EXPECT_THAT(metrics_->Render(), Not(HasSubstr("farm_builds_finished_total")));
  auto actions = builds_->Actions("b1", farm::v1::ACTION_STATE_UNSPECIFIED, 0);
  ASSERT_TRUE(actions.ok());
  EXPECT_EQ(actions->size(), 3u);
  for (const auto& a : *actions) EXPECT_EQ(a.worker_cpu_arch(), "aarch64") << a.action_id();
}

TEST_F(BuildRegistryTest, AFinishedBuildGoesWithItsActionsPastTheirRetentionLogIncluded) {
  ASSERT_TRUE(scheduler_->Execute({Shell("a", "sm_90"), Shell("b", "sm_80")}).ok());
  RunAll({{"a", 0}, {"b", 0}});
  ASSERT_TRUE(builds_->AppendLog("b1", "compiled\n").ok());
  // A live build beside it keeps everything.
  farm::v1::Action live = Shell("c", "sm_90");
  live.set_build_id("b2");
  ASSERT_TRUE(scheduler_->Execute({live}).ok());
  scheduler_->Sweep();
  ASSERT_TRUE(builds_->Get("b1").ok());

  now_ += absl::Hours(24 * 7) + absl::Minutes(11);  // past the default retention
  scheduler_->Sweep();
  EXPECT_EQ(builds_->Get("b1").status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(builds_->ReadLog("b1", 0, 1024).ok());
  EXPECT_TRUE(builds_->Get("b2").ok());
  Reopen();
  EXPECT_EQ(builds_->Get("b1").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(builds_->Get("b2")->state(), farm::v1::BUILD_STATE_QUEUED);
  // Its log blocks are gone from the store too: a build of the same id starts empty.
  ASSERT_TRUE(scheduler_->Execute({Shell("d", "sm_90")}).ok());
  auto log = builds_->ReadLog("b1", 0, 1024);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->data(), "");
}

TEST_F(BuildRegistryTest, WheelBuildsAreDrivenThroughTheApi) {
  auto b = builds_->CreateWheelBuild({.package = "torch", .version = "2.9.1", .archs = {"sm_90"}});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT(b->id(), HasSubstr("torch-2.9.1-"));
  EXPECT_EQ(
      builds_->CreateWheelBuild({.package = "x", .version = "1", .id = b->id()}).status().code(),
      absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(
      builds_->CreateWheelBuild({.package = "x", .version = "1", .id = "../etc"}).status().code(),
      absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(builds_->SetState(b->id(), farm::v1::BUILD_STATE_BUILDING, "").ok());
  farm::v1::WheelInfo wheel;
  wheel.set_filename("torch.whl");
  (*wheel.mutable_device_code_bytes())["sm_90"] = 1234;
  ASSERT_TRUE(builds_->SetWheel(b->id(), wheel).ok());
  ASSERT_TRUE(builds_->AddPublished(b->id(), "https://pypi.example/simple/").ok());
  ASSERT_TRUE(builds_->SetBuildHost(b->id(), "w1").ok());
  ASSERT_TRUE(builds_->SetState(b->id(), farm::v1::BUILD_STATE_SUCCEEDED, "").ok());
  EXPECT_EQ(builds_->SetState(b->id(), farm::v1::BUILD_STATE_FAILED, "late").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(builds_->SetState("nope", farm::v1::BUILD_STATE_FAILED, "").code(),
            absl::StatusCode::kNotFound);

  Reopen();
  auto got = builds_->Get(b->id());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state(), farm::v1::BUILD_STATE_SUCCEEDED);
  EXPECT_EQ(got->wheel().device_code_bytes().at("sm_90"), 1234u);
  EXPECT_EQ(got->published_to(0), "https://pypi.example/simple/");
  EXPECT_EQ(got->build_host(), "w1");
  EXPECT_TRUE(got->has_started_at());
  EXPECT_TRUE(got->has_finished_at());
}

// A stack's build keeps its host action until its dependencies succeeded: durable across a
// restart, never shown, dropped once the action is queued.
TEST_F(BuildRegistryTest, AStackBuildKeepsItsWaitingActionUntilItIsQueued) {
  farm::v1::Action waiting = Shell("build", "host");
  waiting.mutable_wheel_build()->set_version("0.24.1");
  auto b = builds_->CreateWheelBuild({.package = "torchvision",
                                      .version = "0.24.1",
                                      .id = "tv",
                                      .stack_id = "stack-1",
                                      .depends_on = {"torch-1"},
                                      .waiting_action = waiting});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FALSE(b->has_waiting_action());
  Reopen();
  auto shown = builds_->Get("tv");
  ASSERT_TRUE(shown.ok());
  EXPECT_EQ(shown->stack_id(), "stack-1");
  EXPECT_THAT(shown->depends_on(), ::testing::ElementsAre("torch-1"));
  EXPECT_FALSE(shown->has_waiting_action());
  auto kept = builds_->WaitingAction("tv");
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->wheel_build().version(), "0.24.1");
  ASSERT_TRUE(builds_->SetBuildAction("tv", "a1").ok());
  EXPECT_EQ(builds_->WaitingAction("tv").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(BuildRegistryTest, AReasonQuotingLatin1MemberNamesIsKeptEscapedAndReadableByEveryone) {
  auto b = builds_->CreateWheelBuild({.package = "demo", .version = "1.0", .archs = {"sm_90"}});
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE(builds_
                  ->SetState(b->id(), farm::v1::BUILD_STATE_FAILED,
                             "the wheel cannot be tagged: member 'demo/caf\xe9.py' is odd")
                  .ok());
  const std::string escaped = "the wheel cannot be tagged: member 'demo/caf\\xe9.py' is odd";
  auto got = builds_->Get(b->id());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->reason(), escaped);
  // What ListBuilds sends parses on the client, and the stored record parses on restart.
  farm::v1::Build sent;
  EXPECT_TRUE(sent.ParseFromString(builds_->List(10).front().SerializeAsString()));
  Reopen();
  EXPECT_EQ(builds_->Get(b->id())->reason(), escaped);
  EXPECT_EQ(store_->QuarantinedRecords(), 0u);
}

TEST_F(BuildRegistryTest, LogsKeepTheirTailAcrossBlocksAndRestarts) {
  auto b = builds_->CreateWheelBuild({.package = "p", .version = "1", .id = "logs"});
  ASSERT_TRUE(b.ok());
  std::string all;
  const std::string chunk(700 * 1024 + 13, 'x');
  for (int i = 0; i < 14; ++i) {
    std::string piece = chunk;
    piece[0] = static_cast<char>('a' + i);
    auto end = builds_->AppendLog("logs", piece);
    ASSERT_TRUE(end.ok()) << end.status();
    all += piece;
    EXPECT_EQ(*end, all.size());
  }
  Reopen();
  ASSERT_TRUE(builds_->AppendLog("logs", "tail\n").ok());
  all += "tail\n";
  const uint64_t first = BuildLogBlocks::FirstKeptOffset(all.size());
  EXPECT_GT(first, 0u);
  EXPECT_LE(all.size() - first, BuildLogBlocks::kKeepBytes + BuildLogBlocks::kBlockBytes);
  std::string read;
  uint64_t offset = 0;
  while (true) {
    auto c = builds_->ReadLog("logs", offset, 1 << 20);
    ASSERT_TRUE(c.ok()) << c.status();
    if (read.empty()) {
      EXPECT_EQ(c->offset(), first);
    }
    if (c->data().empty()) break;
    read += c->data();
    offset = c->next_offset();
  }
  EXPECT_EQ(read, all.substr(first));
}

TEST_F(BuildRegistryTest, NvccCallsAreCountedPerBuildAndSurviveARestart) {
  auto report = [](farm::v1::NvccCallOutcome outcome, const std::string& reason) {
    farm::v1::ReportNvccCallRequest r;
    r.set_build_id("b1");
    r.set_outcome(outcome);
    r.set_reason(reason);
    return r;
  };
  // A call that ran anything (here or on the farm) never creates a build: its actions do.
  for (auto outcome : {farm::v1::NVCC_CALL_OUTCOME_SPLIT, farm::v1::NVCC_CALL_OUTCOME_FALLBACK,
                       farm::v1::NVCC_CALL_OUTCOME_COMPILE_ERROR}) {
    EXPECT_EQ(builds_->CountNvccCall("b1", report(outcome, "")).code(),
              absl::StatusCode::kNotFound);
  }
  ASSERT_TRUE(scheduler_->Execute({Shell("a", "sm_90")}).ok());
  for (auto outcome : {farm::v1::NVCC_CALL_OUTCOME_SPLIT, farm::v1::NVCC_CALL_OUTCOME_SPLIT,
                       farm::v1::NVCC_CALL_OUTCOME_CACHED}) {
    ASSERT_TRUE(builds_->CountNvccCall("b1", report(outcome, "")).ok());
  }
  ASSERT_TRUE(builds_
                  ->CountNvccCall("b1", report(farm::v1::NVCC_CALL_OUTCOME_FALLBACK,
                                               "not decomposable: unknown nvcc option '-Wextra'"))
                  .ok());
  EXPECT_EQ(builds_
                ->CountNvccCall(
                    "b1", report(farm::v1::NVCC_CALL_OUTCOME_FALLBACK, std::string(2000, 'x')))
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(metrics_->Render(),
              HasSubstr("farm_nvcc_calls_total{outcome=\"fallback\",reason=\"unknown nvcc "
                        "option\"} 1\n"));
  RunAll({{"a", 0}});  // the compile build's state moves on; its counts stay
  auto check = [](const farm::v1::Build& b) {
    EXPECT_EQ(b.state(), farm::v1::BUILD_STATE_SUCCEEDED);
    EXPECT_EQ(b.nvcc().total(), 4u);
    EXPECT_EQ(b.nvcc().split(), 2u);
    EXPECT_EQ(b.nvcc().cached(), 1u);
    EXPECT_EQ(b.nvcc().fallbacks(), 1u);
    ASSERT_EQ(b.nvcc().fallback_reasons().size(), 1u);
    EXPECT_EQ(b.nvcc().fallback_reasons().at("unknown nvcc option"), 1u);
  };
  auto counted = builds_->Get("b1");
  ASSERT_TRUE(counted.ok());
  check(*counted);
  Reopen();
  auto again = builds_->Get("b1");
  ASSERT_TRUE(again.ok());
  check(*again);
}

// Reports arriving together are written in groups (one synced batch each): every one is
// counted once, a report for an unknown build among them fails alone, and what was stored
// equals what was kept.
TEST_F(BuildRegistryTest, ReportsSentTogetherAreEachCountedOnceAndStored) {
  farm::v1::Action other = Shell("b", "sm_80");
  other.set_build_id("b2");
  ASSERT_TRUE(scheduler_->Execute({Shell("a", "sm_90"), other}).ok());
  constexpr int kThreads = 8;
  constexpr int kEach = 50;
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const std::string id = i % 10 == 9 ? "no-such-build" : (t % 2 == 0 ? "b1" : "b2");
        farm::v1::ReportNvccCallRequest r;
        r.set_build_id(id);
        r.set_outcome(farm::v1::NVCC_CALL_OUTCOME_SPLIT);
        absl::Status s = builds_->CountNvccCall(id, r);
        if (id == "no-such-build") {
          EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
          ++refused;
        } else {
          EXPECT_TRUE(s.ok()) << s;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(refused.load(), kThreads * kEach / 10);
  farm::v1::ReportNvccCallRequest timed;
  timed.set_build_id("b1");
  timed.set_kind(farm::v1::COMPILE_CALL_KIND_HOST);
  timed.set_outcome(farm::v1::NVCC_CALL_OUTCOME_SPLIT);
  timed.set_unit("src/a.cc");
  timed.set_wall_seconds(1.5);
  timed.mutable_phases()->set_run(1.0);
  timed.mutable_phases()->set_other(0.5);
  ASSERT_TRUE(builds_->CountNvccCall("b1", timed).ok());
  const uint32_t per_build = kThreads / 2 * kEach * 9 / 10;
  for (const char* id : {"b1", "b2"}) {
    auto b = builds_->Get(id);
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(b->nvcc().total(), per_build) << id;
  }
  Reopen();
  for (const char* id : {"b1", "b2"}) {
    auto b = builds_->Get(id);
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(b->nvcc().total(), per_build) << id << " after a restart";
  }
  auto b1 = builds_->Get("b1");
  ASSERT_TRUE(b1.ok());
  EXPECT_EQ(b1->host_compiles().times().calls(), 1u);
  ASSERT_EQ(b1->host_compiles().times().slowest_size(), 1);
  EXPECT_EQ(b1->host_compiles().times().slowest(0).unit(), "src/a.cc");
  EXPECT_DOUBLE_EQ(b1->host_compiles().times().phases().run(), 1.0);
}

// A rebuild the compile cache answers whole runs no action, so nothing but its calls' reports
// says it happened: the first cached call starts the build, each call ends it again, and it
// is listed, counted as finished and kept across a restart like a build whose actions ran.
TEST_F(BuildRegistryTest, ABuildWhoseEveryCallTheCompileCacheAnsweredIsListedAndCounted) {
  auto report = [](const std::string& id, farm::v1::CompileCallKind kind,
                   farm::v1::NvccCallOutcome outcome) {
    farm::v1::ReportNvccCallRequest r;
    r.set_build_id(id);
    r.set_kind(kind);
    r.set_outcome(outcome);
    return r;
  };
  const absl::Time first = now_;
  ASSERT_TRUE(builds_
                  ->CountNvccCall("rebuild", report("rebuild", farm::v1::COMPILE_CALL_KIND_NVCC,
                                                    farm::v1::NVCC_CALL_OUTCOME_CACHED))
                  .ok());
  now_ += absl::Seconds(4);
  ASSERT_TRUE(builds_
                  ->CountNvccCall("rebuild", report("rebuild", farm::v1::COMPILE_CALL_KIND_HOST,
                                                    farm::v1::NVCC_CALL_OUTCOME_CACHED))
                  .ok());
  auto check = [&](const farm::v1::Build& b) {
    EXPECT_EQ(b.id(), "rebuild");
    EXPECT_EQ(b.kind(), farm::v1::BUILD_KIND_COMPILE);
    EXPECT_EQ(b.state(), farm::v1::BUILD_STATE_SUCCEEDED) << b.reason();
    EXPECT_EQ(b.nvcc().total(), 1u);
    EXPECT_EQ(b.nvcc().cached(), 1u);
    EXPECT_EQ(b.host_compiles().cached(), 1u);
    EXPECT_EQ(b.shards_size(), 0);
    EXPECT_EQ(b.submitted_at().seconds(), absl::ToUnixSeconds(first));
    EXPECT_EQ(b.started_at().seconds(), absl::ToUnixSeconds(first));
    EXPECT_EQ(b.finished_at().seconds(), absl::ToUnixSeconds(first + absl::Seconds(4)));
  };
  auto b = builds_->Get("rebuild");
  ASSERT_TRUE(b.ok()) << b.status();
  check(*b);
  const std::vector<farm::v1::Build> listed = builds_->List(0);
  ASSERT_EQ(listed.size(), 1u);
  check(listed[0]);
  const std::string metrics = metrics_->Render();
  EXPECT_THAT(metrics,
              HasSubstr("farm_builds_finished_total{kind=\"compile\",state=\"succeeded\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("farm_builds{kind=\"compile\",state=\"succeeded\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("farm_build_duration_seconds_count{kind=\"compile\"} 1\n"));

  // A compile error reported in such a build fails it.
  ASSERT_TRUE(builds_
                  ->CountNvccCall("broken", report("broken", farm::v1::COMPILE_CALL_KIND_NVCC,
                                                   farm::v1::NVCC_CALL_OUTCOME_CACHED))
                  .ok());
  ASSERT_TRUE(builds_
                  ->CountNvccCall("broken", report("broken", farm::v1::COMPILE_CALL_KIND_NVCC,
                                                   farm::v1::NVCC_CALL_OUTCOME_COMPILE_ERROR))
                  .ok());
  auto broken = builds_->Get("broken");
  ASSERT_TRUE(broken.ok());
  EXPECT_EQ(broken->state(), farm::v1::BUILD_STATE_FAILED);
  EXPECT_THAT(broken->reason(), HasSubstr("1 of 2 compile calls stopped at a compile error"));

  Reopen();
  auto again = builds_->Get("rebuild");
  ASSERT_TRUE(again.ok()) << again.status();
  check(*again);
  EXPECT_EQ(builds_->Get("broken")->state(), farm::v1::BUILD_STATE_FAILED);

  // Actions arriving later make it a build like any other.
  farm::v1::Action a = Shell("a", "sm_90");
  a.set_build_id("rebuild");
  ASSERT_TRUE(scheduler_->Execute({a}).ok());
  EXPECT_EQ(builds_->Get("rebuild")->state(), farm::v1::BUILD_STATE_QUEUED);

  // With no action to go with, such a build leaves once it has been finished for the actions'
  // retention, its log with it.
  ASSERT_TRUE(builds_->AppendLog("broken", "log line\n").ok());
  EXPECT_EQ(builds_->DeleteBuildsWithoutActions(now_ - absl::Seconds(1)), 0u);
  EXPECT_TRUE(builds_->Get("broken").ok());
  EXPECT_EQ(builds_->DeleteBuildsWithoutActions(now_ + absl::Seconds(1)), 1u);
  EXPECT_EQ(builds_->Get("broken").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(builds_->Get("rebuild").ok());  // it has an action now
  Reopen();
  EXPECT_EQ(builds_->Get("broken").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(BuildRegistryTest, HostCompilesAreCountedApartFromNvccCalls) {
  auto report = [](farm::v1::CompileCallKind kind, farm::v1::NvccCallOutcome outcome,
                   const std::string& reason) {
    farm::v1::ReportNvccCallRequest r;
    r.set_build_id("b1");
    r.set_kind(kind);
    r.set_outcome(outcome);
    r.set_reason(reason);
    return r;
  };
  constexpr auto kHost = farm::v1::COMPILE_CALL_KIND_HOST;
  constexpr auto kNvcc = farm::v1::COMPILE_CALL_KIND_NVCC;
  ASSERT_TRUE(scheduler_->Execute({Shell("a", "sm_90")}).ok());
  for (auto outcome :
       {farm::v1::NVCC_CALL_OUTCOME_SPLIT, farm::v1::NVCC_CALL_OUTCOME_SPLIT,
        farm::v1::NVCC_CALL_OUTCOME_CACHED, farm::v1::NVCC_CALL_OUTCOME_COMPILE_ERROR}) {
    ASSERT_TRUE(builds_->CountNvccCall("b1", report(kHost, outcome, "")).ok());
  }
  ASSERT_TRUE(builds_
                  ->CountNvccCall("b1", report(kHost, farm::v1::NVCC_CALL_OUTCOME_FALLBACK,
                                               "no worker has the toolchain: 'g++-13'"))
                  .ok());
  ASSERT_TRUE(builds_
                  ->CountNvccCall("b1", report(kNvcc, farm::v1::NVCC_CALL_OUTCOME_FALLBACK,
                                               "not decomposable: unknown nvcc option '-Wextra'"))
                  .ok());
  EXPECT_EQ(builds_
                ->CountNvccCall("b1", report(kHost, farm::v1::NVCC_CALL_OUTCOME_FALLBACK,
                                             std::string(2000, 'x')))
                .code(),
            absl::StatusCode::kInvalidArgument);
  const std::string metrics = metrics_->Render();
  EXPECT_THAT(metrics, HasSubstr("farm_cc_calls_total{outcome=\"worker\",reason=\"\"} 2\n"));
  EXPECT_THAT(metrics, HasSubstr("farm_cc_calls_total{outcome=\"fallback\",reason=\"no worker "
                                 "has the toolchain\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("farm_nvcc_calls_total{outcome=\"fallback\",reason=\"unknown "
                                 "nvcc option\"} 1\n"));
  auto check = [](const farm::v1::Build& b) {
    EXPECT_EQ(b.host_compiles().total(), 5u);
    EXPECT_EQ(b.host_compiles().split(), 2u);
    EXPECT_EQ(b.host_compiles().cached(), 1u);
    EXPECT_EQ(b.host_compiles().compile_errors(), 1u);
    EXPECT_EQ(b.host_compiles().fallbacks(), 1u);
    ASSERT_EQ(b.host_compiles().fallback_reasons().size(), 1u);
    EXPECT_EQ(b.host_compiles().fallback_reasons().at("no worker has the toolchain"), 1u);
    EXPECT_EQ(b.nvcc().total(), 1u);
    EXPECT_EQ(b.nvcc().split(), 0u);
    ASSERT_EQ(b.nvcc().fallback_reasons().size(), 1u);
    EXPECT_EQ(b.nvcc().fallback_reasons().at("unknown nvcc option"), 1u);
  };
  auto counted = builds_->Get("b1");
  ASSERT_TRUE(counted.ok());
  check(*counted);
  Reopen();
  auto again = builds_->Get("b1");
  ASSERT_TRUE(again.ok());
  check(*again);
}

// A report with a code counts under the code's name, whatever its text says (the apostrophe
// of "the farm's" once made "the farm" this one's class); its text stays as an example, and
// both survive a restart.
TEST_F(BuildRegistryTest, AFallbackCountsByItsCodeAndKeepsItsText) {
  farm::v1::ReportNvccCallRequest r;
  r.set_build_id("b1");
  r.set_kind(farm::v1::COMPILE_CALL_KIND_HOST);
  r.set_outcome(farm::v1::NVCC_CALL_OUTCOME_FALLBACK);
  r.set_reason_code(farm::v1::FALLBACK_REASON_FARM_COMPILE_FAILED);
  r.set_reason("the farm's compile failed (exit 1, worker w1) where the local one passed");
  ASSERT_TRUE(scheduler_->Execute({Shell("a", "sm_90")}).ok());
  ASSERT_TRUE(builds_->CountNvccCall("b1", r).ok());
  EXPECT_THAT(metrics_->Render(), HasSubstr("farm_cc_calls_total{outcome=\"fallback\",reason="
                                            "\"farm_compile_failed\"} 1\n"));
  auto check = [](const farm::v1::Build& b) {
    ASSERT_EQ(b.host_compiles().fallback_reasons().size(), 1u);
    EXPECT_EQ(b.host_compiles().fallback_reasons().at("farm_compile_failed"), 1u);
    ASSERT_EQ(b.host_compiles().fallback_examples().count("farm_compile_failed"), 1u);
    EXPECT_THAT(b.host_compiles().fallback_examples().at("farm_compile_failed").details(),
                ::testing::ElementsAre("the farm's compile failed (exit 1, worker w1) where the "
                                       "local one passed"));
  };
  auto counted = builds_->Get("b1");
  ASSERT_TRUE(counted.ok());
  check(*counted);
  Reopen();
  auto again = builds_->Get("b1");
  ASSERT_TRUE(again.ok());
  check(*again);
}

}  // namespace
}  // namespace farm::coordinator
