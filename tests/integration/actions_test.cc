// Actions end to end with real processes: a coordinator, two workers, real commands in
// scratch directories, the CAS in between; workers and the coordinator killed mid-run.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "farm/v1/actions.grpc.pb.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/auth/token.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/grpc_status.h"
#include "libfarm/rpc/retry.h"
#include "libfarm/rpc/token_auth.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

using ::testing::HasSubstr;

class ActionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto farm = TestFarm::Start(dir_.path(),
                                {.coordinator_args = {"--worker-timeout", "2s"},
                                 .workers = NumberedWorkers(2, {.args = {"--cuda-path", "none"}})});
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
    Connect();
  }
  void Connect() {
    token_ = farm_->AdminToken();
    actions_ = ActionClient::Connect(farm_->address(), token_);
    cas_ = CasClient::Connect(farm_->address(), token_);
  }
  farm::v1::Action Shell(const std::string& script, const std::string& build = "b") {
    farm::v1::Action a;
    a.add_argv("/bin/sh");
    a.add_argv("-c");
    a.add_argv(script);
    (*a.mutable_env())["PATH"] = "/usr/bin:/bin";
    a.set_build_id(build);
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

  TempDir dir_{"actions"};
  std::unique_ptr<TestFarm> farm_;
  // What the coordinator's and the workers' logs say of one action: why it ran where it did.
  std::string LinesMentioning(const std::string& id) {
    std::string out;
    auto add = [&](const std::string& who, const std::string& log) {
      for (absl::string_view line : absl::StrSplit(log, '\n')) {
        if (absl::StrContains(line, id)) absl::StrAppend(&out, who, ": ", line, "\n");
      }
    };
    add("coordinator", ReadFile(farm_->coordinator().log_path()));
    for (const char* name : {"w1", "w2"}) add(name, ReadFile(farm_->worker(name).log_path()));
    return out;
  }
  std::string token_;
  std::unique_ptr<ActionClient> actions_;
  std::unique_ptr<CasClient> cas_;
};

TEST_F(ActionsTest, RunsWithInputsAndOutputsThroughTheCasThenHitsTheCache) {
  auto input = cas_->UploadBytes("hello from the client\n");
  ASSERT_TRUE(input.ok()) << input.status();
  auto action = Shell("mkdir -p out && tr a-z A-Z < src/in.txt > out/upper.txt && echo ran");
  auto* in = action.add_inputs();
  in->set_path("src/in.txt");
  *in->mutable_digest() = *input;
  action.add_output_paths("out/upper.txt");

  auto status = RunOne(action);
  ASSERT_EQ(status.state(), farm::v1::ACTION_STATE_COMPLETED) << status.DebugString();
  EXPECT_EQ(status.result().exit_code(), 0);
  EXPECT_EQ(status.result().stdout_tail(), "ran\n");
  EXPECT_FALSE(status.result().cache_hit());
  EXPECT_GT(status.result().wall_seconds(), 0);
  ASSERT_EQ(status.result().outputs_size(), 1);
  auto out = cas_->DownloadBytes(status.result().outputs(0).digest(), 1 << 20);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "HELLO FROM THE CLIENT\n");
  auto log = cas_->DownloadBytes(status.result().stdout_digest(), 1 << 20);
  EXPECT_EQ(*log, "ran\n");

  auto again = RunOne(action);
  EXPECT_EQ(again.state(), farm::v1::ACTION_STATE_COMPLETED);
  EXPECT_TRUE(again.result().cache_hit());
  EXPECT_EQ(again.result().outputs(0).digest().hash(), status.result().outputs(0).digest().hash());
}

TEST_F(ActionsTest, TheFarmSaysWhatAUnitTookBeforeByItsHistoryKey) {
  auto action = Shell("sleep 0.3");
  action.set_history_key("native/cuda/Sort.cu sm_90");
  auto before = actions_->GetExpectedCosts({"native/cuda/Sort.cu sm_90", "never/seen.cu sm_90"});
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(*before, (std::vector<double>{0, 0}));
  ASSERT_EQ(RunOne(action).state(), farm::v1::ACTION_STATE_COMPLETED);
  auto after = actions_->GetExpectedCosts({"native/cuda/Sort.cu sm_90", "never/seen.cu sm_90"});
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_EQ(after->size(), 2u);
  EXPECT_GE((*after)[0], 0.3);
  EXPECT_LT((*after)[0], 60);
  EXPECT_EQ((*after)[1], 0);

  std::vector<std::string> many(65, "k sm_90");
  auto too_many = actions_->GetExpectedCosts(many);
  EXPECT_EQ(too_many.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(too_many.status().message()), HasSubstr("the limit is 64"));
  auto too_long = actions_->GetExpectedCosts({std::string(257, 'k')});
  EXPECT_EQ(too_long.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(too_long.status().message()), HasSubstr("history key of 257 bytes"));
}

TEST_F(ActionsTest, EscapingPathsAreRefused) {
  auto up = Shell("echo x > ../../escaped");
  up.add_output_paths("../../escaped");
  auto r = actions_->Execute({up});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("climbs out"));
  auto abs = Shell("true");
  auto* in = abs.add_inputs();
  in->set_path("/etc/passwd");
  *in->mutable_digest() = *cas_->UploadBytes("x");
  EXPECT_EQ(actions_->Execute({abs}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ActionsTest, SymlinkedOutputIsNotUploaded) {
  auto a = Shell("ln -s /etc/passwd leak");
  a.add_output_paths("leak");
  auto status = RunOne(a);
  ASSERT_EQ(status.state(), farm::v1::ACTION_STATE_COMPLETED);
  EXPECT_EQ(status.result().outputs_size(), 0);
}

TEST_F(ActionsTest, UnsatisfiableActionFailsFastUnlessAskedToWait) {
  auto a = Shell("true");
  a.mutable_requirements()->set_cuda_version("12.9");
  auto r = actions_->Execute({a});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->front().state(), farm::v1::ACTION_STATE_FAILED);
  EXPECT_THAT(r->front().error(), HasSubstr("needs CUDA 12.9, has no CUDA toolkit"));
  a.set_wait_for_worker(true);
  auto waiting = actions_->Execute({a});
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ(waiting->front().state(), farm::v1::ACTION_STATE_QUEUED);
  EXPECT_EQ(actions_->Cancel(waiting->front().action_id())->state(),
            farm::v1::ACTION_STATE_CANCELLED);
}

TEST_F(ActionsTest, FailingCommandReportsItsErrorAndTimeoutsAreEnforced) {
  auto status = RunOne(Shell("echo 'k.cu(3): error: expected a ;' >&2; exit 2"));
  ASSERT_EQ(status.state(), farm::v1::ACTION_STATE_COMPLETED);
  EXPECT_EQ(status.result().exit_code(), 2);
  EXPECT_EQ(status.result().stderr_tail(), "k.cu(3): error: expected a ;\n");
  auto slow = Shell("sleep 30");
  slow.set_timeout_seconds(1);
  auto timed = RunOne(slow);
  EXPECT_EQ(timed.result().exit_code(), 128 + 9);
  EXPECT_THAT(timed.result().stderr_tail(), HasSubstr("timeout of 1 s"));
}

TEST_F(ActionsTest, KilledWorkerMidActionCompletesOnTheOther) {
  auto submitted = actions_->Execute({Shell("sleep 2; echo finished")});
  ASSERT_TRUE(submitted.ok());
  const std::string id = submitted->front().action_id();
  std::string first_worker;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto s = actions_->Get(id);
        if (s.ok() && s->state() == farm::v1::ACTION_STATE_RUNNING) first_worker = s->worker();
        return !first_worker.empty();
      },
      absl::Seconds(20)));
  farm_->KillWorker(first_worker);
  auto done = actions_->WaitAll({id}, absl::Seconds(60));
  ASSERT_TRUE(done.ok());
  const auto& status = done->front();
  ASSERT_EQ(status.state(), farm::v1::ACTION_STATE_COMPLETED) << status.DebugString();
  EXPECT_NE(status.result().worker(), first_worker);
  EXPECT_EQ(status.result().stdout_tail(), "finished\n");
  EXPECT_EQ(status.attempts(), 2u) << ReadFile(farm_->coordinator().log_path());
}

TEST_F(ActionsTest, Kill9CoordinatorWithQueuedAndRunningActionsEachRunsExactlyOnce) {
  std::vector<farm::v1::Action> batch;
  for (int i = 0; i < 6; ++i) {
    batch.push_back(Shell(absl::StrCat("sleep 1; echo ", i), "b"));
  }
  auto submitted = actions_->Execute(batch);
  ASSERT_TRUE(submitted.ok());
  std::vector<std::string> ids;
  for (const auto& s : *submitted) ids.push_back(s.action_id());
  // Sandboxed actions cannot write a file the test reads: the workers' logs count the runs,
  // one "running action ID" line each.
  auto runs_of = [&](const std::string& id) {
    int n = 0;
    for (const char* name : {"w1", "w2"}) {
      n += CountOccurrences(ReadFile(farm_->worker(name).log_path()),
                            absl::StrCat("running action ", id, " "));
    }
    return n;
  };
  // Two run (one slot per worker), four wait in the queue.
  ASSERT_TRUE(WaitFor(
      [&] {
        return std::any_of(ids.begin(), ids.end(),
                           [&](const std::string& id) { return runs_of(id) > 0; });
      },
      absl::Seconds(20)));
  farm_->StopCoordinator();
  absl::SleepFor(absl::Milliseconds(500));
  absl::Status restarted = farm_->RestartCoordinator();
  ASSERT_TRUE(restarted.ok()) << restarted;
  Connect();
  auto done = actions_->WaitAll(ids, absl::Seconds(90));
  ASSERT_TRUE(done.ok()) << done.status();
  for (size_t i = 0; i < done->size(); ++i) {
    const auto& s = (*done)[i];
    ASSERT_EQ(s.state(), farm::v1::ACTION_STATE_COMPLETED) << s.DebugString();
    EXPECT_EQ(s.result().stdout_tail(), absl::StrCat(i, "\n"));
    EXPECT_EQ(runs_of(ids[i]), 1) << "action " << i << "\n" << LinesMentioning(ids[i]);
  }
}

// Sandboxed, the command cannot leave a file behind for the test: its process is watched.
TEST_F(ActionsTest, CancelStopsARunningAction) {
  const std::string marker = absl::StrCat("wheelfarm-cancelled-", ::getpid());
  auto submitted = actions_->Execute({Shell(absl::StrCat("sleep 300; echo ", marker))});
  ASSERT_TRUE(submitted.ok());
  const std::string id = submitted->front().action_id();
  ASSERT_TRUE(WaitFor([&] { return actions_->Get(id)->state() == farm::v1::ACTION_STATE_RUNNING; },
                      absl::Seconds(20)));
  ASSERT_TRUE(WaitFor([&] { return AnyProcessCommandLineContains(marker); }, absl::Seconds(20)));
  EXPECT_EQ(actions_->Cancel(id)->state(), farm::v1::ACTION_STATE_CANCELLED);
  EXPECT_TRUE(WaitFor([&] { return !AnyProcessCommandLineContains(marker); }, absl::Seconds(10)))
      << ReadFile(farm_->worker("w1").log_path()) << ReadFile(farm_->worker("w2").log_path())
      << ReadFile(farm_->coordinator().log_path());
}

TEST_F(ActionsTest, MissingTokenIsUnauthenticated) {
  auto anonymous = ActionClient::Connect(farm_->address(), "wrong-token-wrong-token");
  EXPECT_EQ(anonymous->Execute({Shell("true")}).status().code(),
            absl::StatusCode::kUnauthenticated);
}

// Issue 14: a farm may keep the actions that name no CPU arch (farm-nvcc's device compiles)
// on workers of the CPU archs it lists. An x86_64 worker then gets none of them, and the
// refusal names the rule and its flag; an action naming x86_64 still runs there.
TEST(DeviceCpuArchsTest, ActionsNamingNoCpuArchGoOnlyToTheListedArchs) {
  TempDir dir("device-cpu-archs");
  auto test_farm = TestFarm::Start(
      dir.path(), {.coordinator_args = {"--worker-timeout", "2s", "--device-cpu-archs", "aarch64"},
                   .workers = {{.name = "x1", .args = {"--cuda-path", "none"}}}});
  ASSERT_TRUE(test_farm.ok()) << test_farm.status();
  auto actions = ActionClient::Connect((*test_farm)->address(), (*test_farm)->AdminToken());
  farm::v1::Action anywhere;
  anywhere.add_argv("/bin/sh");
  anywhere.add_argv("-c");
  anywhere.add_argv("echo portable");
  (*anywhere.mutable_env())["PATH"] = "/usr/bin:/bin";
  farm::v1::Action on_x86 = anywhere;
  on_x86.mutable_requirements()->set_cpu_arch("x86_64");

  auto refused = actions->Execute({anywhere});
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->front().state(), farm::v1::ACTION_STATE_FAILED);
  EXPECT_THAT(refused->front().error(),
              HasSubstr("x1 the farm runs actions that name no CPU arch only on aarch64 workers "
                        "(--device-cpu-archs), has x86_64"));
  auto submitted = actions->Execute({on_x86});
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  auto done = actions->WaitAll({submitted->front().action_id()}, absl::Seconds(60));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->front().state(), farm::v1::ACTION_STATE_COMPLETED) << done->front().DebugString();
  EXPECT_EQ(done->front().result().stdout_tail(), "portable\n");
}

// Issue 24: the gRPC server took any number of calls at once, each holding a thread; under
// --grpc-max-calls the extra ones were refused. Issue 45: a launcher's Wait holds no thread, so
// waits beyond that cap are served; open waits are bounded at 4 x the cap, one token to half
// of them, and a wait beyond that is answered "busy" (UNAVAILABLE) at once, which clients
// retry. The farm's own traffic (the worker's long polls and heartbeats, CAS streams) goes on.
TEST(GrpcCallCapTest, WaitsBeyondTheCapAreServedAndBeyondTheirBoundAnsweredBusyAtOnce) {
  constexpr int kCap = 6;
  TempDir dir("grpc-cap");
  auto started = TestFarm::Start(
      dir.path(), {.coordinator_args = {"--grpc-max-calls", absl::StrCat(kCap)},
                   .workers = NumberedWorkers(1, {.args = {"--cuda-path", "none"}})});
  ASSERT_TRUE(started.ok()) << started.status();
  TestFarm& test_farm = **started;
  const std::string token = test_farm.AdminToken();
  auto actions = ActionClient::Connect(test_farm.address(), token);
  auto cas = CasClient::Connect(test_farm.address(), token);
  auto run = [&](const std::string& script, const farm::v1::Digest* input) {
    farm::v1::Action a;
    a.add_argv("/bin/sh");
    a.add_argv("-c");
    a.add_argv(script);
    (*a.mutable_env())["PATH"] = "/usr/bin:/bin";
    a.add_output_paths("out.txt");
    if (input != nullptr) {
      auto* in = a.add_inputs();
      in->set_path("in.txt");
      *in->mutable_digest() = *input;
    }
    auto submitted = actions->Execute({a});
    EXPECT_TRUE(submitted.ok()) << submitted.status();
    if (!submitted.ok()) return farm::v1::ActionStatus();
    auto done = actions->WaitAll({submitted->front().action_id()}, absl::Seconds(60));
    EXPECT_TRUE(done.ok()) << done.status();
    return done.ok() ? done->front() : farm::v1::ActionStatus();
  };
  auto input = cas->UploadBytes("under the cap\n");
  ASSERT_TRUE(input.ok()) << input.status();
  farm::v1::ActionStatus first = run("tr a-z A-Z < in.txt > out.txt", &*input);
  ASSERT_EQ(first.state(), farm::v1::ACTION_STATE_COMPLETED) << first.DebugString();
  ASSERT_EQ(first.result().outputs_size(), 1);
  EXPECT_EQ(*cas->DownloadBytes(first.result().outputs(0).digest(), 1 << 20), "UNDER THE CAP\n");

  // Waits at once on an action no worker can run, each answered at its 4 s deadline.
  farm::v1::Action stuck;
  stuck.add_argv("/bin/true");
  stuck.mutable_requirements()->set_cuda_version("99.0");
  stuck.set_wait_for_worker(true);
  auto queued = actions->Execute({stuck});
  ASSERT_TRUE(queued.ok()) << queued.status();
  auto stub = farm::v1::ActionService::NewStub(DialCoordinator(test_farm.address()));
  struct Outcomes {
    std::atomic<int> served = 0, busy = 0, other = 0, slow_refusals = 0;
  };
  auto wait_at_once = [&](int n, Outcomes& out) {
    std::vector<std::thread> waiters;
    for (int i = 0; i < n; ++i) {
      waiters.emplace_back([&] {
        grpc::ClientContext ctx;
        AttachToken(ctx, token);
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
        farm::v1::WaitRequest req;
        req.add_action_ids(queued->front().action_id());
        req.set_timeout_ms(4000);
        farm::v1::WaitResponse resp;
        const absl::Time start = absl::Now();
        const absl::Status s = FromGrpcStatus(stub->Wait(&ctx, req, &resp));
        if (s.ok()) {
          ++out.served;
        } else if (IsCoordinatorBusy(s)) {
          ++out.busy;
          if (absl::Now() - start > absl::Seconds(2)) ++out.slow_refusals;
        } else {
          ++out.other;
        }
      });
    }
    for (auto& t : waiters) t.join();
  };
  // Twice the cap: every one served, none holding a thread.
  Outcomes twice;
  wait_at_once(2 * kCap, twice);
  EXPECT_EQ(twice.served.load(), 2 * kCap);
  EXPECT_EQ(twice.busy.load() + twice.other.load(), 0);
  // Beyond one token's share of the bound (half of 4 x 6): the rest answered busy at once.
  Outcomes beyond;
  wait_at_once(5 * kCap, beyond);
  EXPECT_EQ(beyond.served.load(), 2 * kCap);
  EXPECT_EQ(beyond.busy.load(), 3 * kCap);
  EXPECT_EQ(beyond.other.load(), 0);
  EXPECT_EQ(beyond.slow_refusals.load(), 0);

  // The worker outlasted it: it is online and runs the next action.
  farm::v1::ActionStatus after = run("echo after > out.txt", nullptr);
  EXPECT_EQ(after.state(), farm::v1::ACTION_STATE_COMPLETED) << after.DebugString();
  EXPECT_EQ(test_farm.WorkerState("w1"), "online");
}

}  // namespace
}  // namespace farm::testing
