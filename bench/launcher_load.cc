#include "bench/launcher_load.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "bench/bench_coordinator.h"
#include "bench/sleeping_worker.h"
#include "farm/v1/tokens.grpc.pb.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/client/build_client.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/grpc_status.h"
#include "libfarm/rpc/token_auth.h"

namespace farm::bench {
namespace {

namespace fs = std::filesystem;

// One launcher's compile, as it saw it.
struct LauncherOutcome {
  std::string outcome;  // "completed", a status code's name, or an action state's
  absl::Time started, ended;
};

struct BuildLoad {
  std::string build_id;
  std::string token;  // a submit token of its own, as each user or build has
  int launchers = 0;
  std::vector<LauncherOutcome> outcomes;
};

// A submit token named after the build, from the coordinator's token service.
absl::StatusOr<std::string> SubmitToken(const std::string& address, const std::string& admin,
                                        const std::string& name) {
  auto stub = farm::v1::TokenService::NewStub(DialCoordinator(address));
  grpc::ClientContext ctx;
  AttachToken(ctx, admin);
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  farm::v1::CreateTokenRequest req;
  req.set_role("submit");
  req.set_name(name);
  farm::v1::CreateTokenResponse resp;
  absl::Status s = FromGrpcStatus(stub->CreateToken(&ctx, req, &resp));
  if (!s.ok()) return s;
  return resp.token();
}

// The calls one farm-nvcc or farm-cc call makes for its compile: Execute, then Wait polls.
LauncherOutcome RunLauncher(const std::string& address, const BuildLoad& build, int index,
                            const LauncherLoadOptions& options, std::atomic<int>& in_flight,
                            std::atomic<int>& peak) {
  LauncherOutcome out;
  out.started = absl::Now();
  const int now = ++in_flight;
  for (int seen = peak.load(); now > seen && !peak.compare_exchange_weak(seen, now);) {
  }
  auto client = ActionClient::Connect(address, build.token);
  farm::v1::Action action;
  action.set_build_id(build.build_id);
  action.add_argv("sh");
  action.add_argv("-c");
  // Unique per launcher: no two are the same action (nothing deduplicated or cached).
  action.add_argv(SimulatedScript(absl::StrCat(build.build_id, "/unit-", index),
                                  absl::ToDoubleSeconds(options.action_time), 100));
  auto submitted = client->Execute({action});
  if (!submitted.ok()) {
    out.outcome = absl::StatusCodeToString(submitted.status().code());
  } else {
    // A killed launcher's call ends at once: its channel closes, as at a deadline.
    const bool abandons = build.build_id == options.abandon_build;
    auto done = client->WaitAll({submitted->front().action_id()},
                                abandons ? options.abandon_after : options.launcher_timeout);
    if (abandons && done.ok() &&
        (done->size() != 1 || !IsTerminalActionState(done->front().state()))) {
      out.outcome = "abandoned";
    } else if (!done.ok()) {
      out.outcome = absl::StatusCodeToString(done.status().code());
    } else if (done->size() != 1) {
      out.outcome = "no answer";
    } else if (done->front().state() != farm::v1::ACTION_STATE_COMPLETED) {
      out.outcome = farm::v1::ActionState_Name(done->front().state());
    } else {
      out.outcome = "completed";
    }
  }
  out.ended = absl::Now();
  --in_flight;
  return out;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(p * static_cast<double>(values.size() - 1))];
}

BuildFigures FiguresOf(const BuildLoad& build) {
  BuildFigures f;
  f.build_id = build.build_id;
  f.launchers = build.launchers;
  absl::Time first = absl::InfiniteFuture(), last = absl::InfinitePast();
  std::vector<double> each;
  for (const LauncherOutcome& o : build.outcomes) {
    if (o.outcome == "completed") {
      ++f.completed;
    } else {
      ++f.failed[o.outcome];
    }
    first = std::min(first, o.started);
    last = std::max(last, o.ended);
    each.push_back(absl::ToDoubleSeconds(o.ended - o.started));
  }
  if (!build.outcomes.empty()) f.wall_s = absl::ToDoubleSeconds(last - first);
  f.p50_s = Percentile(each, 0.5);
  f.p99_s = Percentile(each, 0.99);
  return f;
}

}  // namespace

std::string LauncherLoadReport::Table() const {
  std::string out = absl::StrFormat("%-10s %9s %9s %8s %9s %9s %9s\n", "build", "launchers",
                                    "completed", "failed", "wall s", "p50 s", "p99 s");
  for (const BuildFigures& b : builds) {
    int failed = 0;
    for (const auto& [_, n] : b.failed) failed += n;
    absl::StrAppend(
        &out, absl::StrFormat("%-10s %9d %9d %8d %9.2f %9.2f %9.2f\n", b.build_id, b.launchers,
                              b.completed, failed, b.wall_s, b.p50_s, b.p99_s));
    for (const auto& [why, n] : b.failed) absl::StrAppend(&out, "  failed: ", why, " x", n, "\n");
  }
  absl::StrAppend(&out,
                  absl::StrFormat("all        %9d %9d %8d %9.2f\n", launchers, completed,
                                  launchers - completed, wall_s),
                  absl::StrFormat("launchers in a call at once: %d (peak)\n", peak_concurrent),
                  absl::StrFormat("coordinator: peak RSS %.1f MiB, CPU %.2f s\n",
                                  coordinator_peak_rss_mib, coordinator_cpu_s));
  if (!builds.empty()) {
    const BuildFigures& small = builds.back();
    absl::StrAppend(&out, absl::StrFormat("small build behind the big ones: %.2f s, alone on the "
                                          "fleet %.2f s (ratio %.2f)\n",
                                          small.wall_s, small_alone_s,
                                          small_alone_s > 0 ? small.wall_s / small_alone_s : 0));
  }
  absl::StrAppend(&out, "worker calls answered busy and sent again: ", worker_busy_answers, "\n");
  absl::StrAppend(&out, "left on the coordinator afterwards: ", left_running, " running, ",
                  left_queued, " queued\n");
  if (worker_errors > 0) {
    absl::StrAppend(&out, "worker errors: ", worker_errors, ": ", first_error, "\n");
  }
  return out;
}

absl::StatusOr<LauncherLoadReport> RunLauncherLoad(const LauncherLoadOptions& options) {
  std::error_code ec;
  fs::remove_all(options.work_dir, ec);
  fs::create_directories(options.work_dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat("cannot create ", options.work_dir, ": ",
                                                      ec.message(), ". Fix: pass a writable dir"));
  }
  std::vector<std::string> extra;
  if (options.grpc_max_calls > 0) {
    extra = {"--grpc-max-calls", absl::StrCat(options.grpc_max_calls)};
  }
  if (options.lose_worker) {
    extra.push_back("--worker-timeout");
    extra.push_back(absl::FormatDuration(options.worker_timeout));
  }
  auto coordinator = StartBenchCoordinator(options.work_dir, options.work_dir + "/data", extra);
  if (!coordinator.ok()) return coordinator.status();

  auto shape = KnownHostShape("m8g.4xlarge");
  if (!shape.ok()) return shape.status();
  farm::v1::CudaToolkit toolkit;
  toolkit.set_version("13.0");
  toolkit.set_release("V13.0.88");
  toolkit.set_path("/usr/local/cuda-13.0");
  toolkit.add_sms("sm_90");
  FleetLedger ledger;
  {
    absl::MutexLock lock(&ledger.mu);
    ledger.peak_ram_in_use_mib.assign(options.workers, 0);
  }
  std::vector<SleepingWorkerConfig> configs(options.workers);
  std::atomic<bool> stop{false}, vanish{false};
  std::vector<std::thread> fleet;
  for (int i = 0; i < options.workers; ++i) {
    // Action times are real: 1,000 ms of wall per "second" the script names.
    configs[i] = {coordinator->address, coordinator->token, i, *shape, options.slots, toolkit,
                  TimeScale{1000}};
    if (i == 0 && options.lose_worker) configs[i].vanish = &vanish;
    fleet.emplace_back(RunSleepingWorker, std::cref(configs[i]), std::cref(stop), std::ref(ledger));
  }
  for (const absl::Time deadline = absl::Now() + absl::Minutes(1); absl::Now() < deadline;
       absl::SleepFor(absl::Milliseconds(10))) {
    absl::MutexLock lock(&ledger.mu);
    if (ledger.registered + ledger.errors >= options.workers) break;
  }

  std::vector<BuildLoad> builds;
  for (size_t i = 0; i <= options.big_builds.size(); ++i) {
    const bool small = i == options.big_builds.size();
    BuildLoad b;
    b.build_id = small ? "small" : absl::StrCat("big-", i + 1);
    b.launchers = small ? options.small_build : options.big_builds[i];
    auto token = SubmitToken(coordinator->address, coordinator->token, b.build_id);
    if (!token.ok()) return token.status();
    b.token = *token;
    b.outcomes.resize(b.launchers);
    builds.push_back(std::move(b));
  }

  std::atomic<int> in_flight{0}, peak{0}, started{0};
  const absl::Time start = absl::Now();
  std::vector<std::thread> launchers;
  auto launch = [&](BuildLoad& b) {
    for (int i = 0; i < b.launchers; ++i) {
      launchers.emplace_back([&, i, bp = &b] {
        ++started;
        bp->outcomes[i] = RunLauncher(coordinator->address, *bp, i, options, in_flight, peak);
      });
    }
  };
  for (size_t i = 0; i + 1 < builds.size(); ++i) launch(builds[i]);
  // The small build starts once every big one's launchers are in their calls (their actions
  // queued, most of them): behind their queue.
  for (const absl::Time deadline = absl::Now() + absl::Minutes(1);
       started.load() < static_cast<int>(launchers.size()) && absl::Now() < deadline;
       absl::SleepFor(absl::Milliseconds(5))) {
  }
  absl::SleepFor(absl::Milliseconds(500));
  launch(builds.back());
  BuildClient admin(farm::v1::BuildService::NewStub(DialCoordinator(coordinator->address)),
                    coordinator->address, coordinator->token);
  if (options.lose_worker) vanish = true;
  for (auto& t : launchers) t.join();
  const absl::Time end = absl::Now();

  LauncherLoadReport report;
  // Nothing left behind: no action running (a lease the lost worker held) or queued (a
  // cancelled build's).
  for (const absl::Time deadline = absl::Now() + absl::Seconds(10);;
       absl::SleepFor(absl::Milliseconds(100))) {
    auto running = admin.ListActions("", farm::v1::ACTION_STATE_RUNNING);
    auto queued = admin.ListActions("", farm::v1::ACTION_STATE_QUEUED);
    if (running.ok() && queued.ok()) {
      report.left_running = running->actions_size();
      report.left_queued = queued->actions_size();
    }
    if ((report.left_running == 0 && report.left_queued == 0) || absl::Now() > deadline) break;
  }
  report.coordinator_peak_rss_mib = PeakResidentMib(coordinator->process.pid());
  report.coordinator_cpu_s = CpuSeconds(coordinator->process.pid());
  stop = true;
  for (auto& t : fleet) t.join();
  coordinator->process.Signal(SIGTERM);
  coordinator->process.Wait(absl::Seconds(10));

  for (const BuildLoad& b : builds) {
    report.builds.push_back(FiguresOf(b));
    report.launchers += b.launchers;
    report.completed += report.builds.back().completed;
  }
  report.wall_s = absl::ToDoubleSeconds(end - start);
  report.peak_concurrent = peak.load();
  const int slots = options.workers * static_cast<int>(options.slots);
  const int rounds = (options.small_build + slots - 1) / std::max(1, slots);
  report.small_alone_s = rounds * absl::ToDoubleSeconds(options.action_time);
  {
    absl::MutexLock lock(&ledger.mu);
    report.worker_errors = static_cast<int>(ledger.errors);
    report.worker_busy_answers = ledger.busy_answers;
    report.first_error = ledger.first_error;
  }
  fs::remove_all(options.work_dir, ec);
  return report;
}

}  // namespace farm::bench
