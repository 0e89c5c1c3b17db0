// Retention: the coordinator's memory over 100,000 no-op actions (simulated workers over
// real gRPC) with the default retention and with --max-finished-actions 10000, and its
// restart time (and RSS) with 1,000,000 finished action records in the store against an empty
// store, all measured in one run. Usage: retention_bench [--actions N] [--stored M]
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/bench_coordinator.h"
#include "bench/simulated_worker.h"
#include "coordinator/data_dir.h"
#include "coordinator/state_store.h"
#include "farm/v1/state.pb.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/time/proto_time.h"

namespace {

namespace fs = std::filesystem;
using farm::bench::BenchCoordinator;

struct MemoryRun {
  double rss_at_10pct = 0, rss_at_half = 0, rss_at_end = 0;
  bool ok = false;
};

// Runs `actions` no-op actions through a fresh coordinator; RSS after a tenth, half and at the
// end (each after eleven sweeps, so retention and the allocator's trim have run).
MemoryRun RunActions(const std::string& work, int actions, const std::vector<std::string>& flags) {
  MemoryRun run;
  fs::remove_all(work + "/data");
  auto c = farm::bench::StartBenchCoordinator(work, work + "/data", flags);
  if (!c.ok()) {
    std::cerr << c.status() << "\n";
    return run;
  }
  std::atomic<bool> stop{false};
  std::atomic<int64_t> completed{0};
  farm::bench::LeaseTimes times;
  std::vector<std::thread> sims;
  for (int i = 0; i < 8; ++i) {
    sims.emplace_back(farm::bench::SimulatedWorker, c->address, c->token, i, 64u, std::cref(stop),
                      std::ref(times), std::ref(completed));
  }
  auto client = farm::ActionClient::Connect(c->address, c->token);
  auto settle_and_measure = [&](int64_t target) {
    while (completed.load() < target) absl::SleepFor(absl::Milliseconds(20));
    absl::SleepFor(absl::Seconds(11));
    return farm::bench::ResidentMib(c->process.pid());
  };
  constexpr int kBatch = 500;
  bool failed = false;
  for (int done = 0; done < actions && !failed; done += kBatch) {
    std::vector<farm::v1::Action> chunk;
    for (int i = done; i < std::min(actions, done + kBatch); ++i) {
      farm::v1::Action a;
      a.add_argv("true");
      a.add_argv(absl::StrCat(i));
      a.set_build_id(absl::StrCat("build-", i / 1000));
      // Queued even while the simulated workers are briefly lost (a loaded machine delays
      // their heartbeats), instead of failing as unschedulable.
      a.set_wait_for_worker(true);
      chunk.push_back(std::move(a));
    }
    auto statuses = client->Execute(chunk);
    if (!statuses.ok()) {
      std::cerr << "Execute: " << statuses.status() << "\n";
      failed = true;
    } else {
      // A failed action never completes: the run would wait for it forever.
      for (const auto& st : *statuses) {
        if (st.state() == farm::v1::ACTION_STATE_FAILED) {
          std::cerr << "action " << st.action_id() << " failed: " << st.error() << "\n";
          failed = true;
          break;
        }
      }
    }
    if (failed) break;
    if (done + kBatch == actions / 10) run.rss_at_10pct = settle_and_measure(actions / 10);
    if (done + kBatch == actions / 2) run.rss_at_half = settle_and_measure(actions / 2);
    while (completed.load() < done - 4 * kBatch) absl::SleepFor(absl::Milliseconds(5));
  }
  if (!failed) run.rss_at_end = settle_and_measure(actions);
  stop = true;
  for (auto& t : sims) t.join();
  c->process.Signal(SIGTERM);
  c->process.Wait(absl::Seconds(30));
  run.ok = !failed && run.rss_at_10pct > 0;
  return run;
}

// Writes `count` finished action records into a new store at `dir`, in batches.
bool FillStore(const std::string& dir, int count) {
  auto store = farm::coordinator::StateStore::Open(dir);
  if (!store.ok()) {
    std::cerr << store.status() << "\n";
    return false;
  }
  const absl::Time finished = absl::Now();
  for (int done = 0; done < count; done += 10000) {
    farm::coordinator::StateBatch batch;
    for (int i = done; i < std::min(count, done + 10000); ++i) {
      farm::v1::ActionRecord r;
      r.mutable_action()->add_argv("true");
      r.mutable_action()->add_argv(absl::StrCat(i));
      auto* s = r.mutable_status();
      s->set_action_id(absl::StrFormat("%024d", i));
      s->set_action_key(absl::StrFormat("%064d", i));
      s->set_build_id(absl::StrCat("build-", i / 1000));
      s->set_state(farm::v1::ACTION_STATE_COMPLETED);
      *s->mutable_finished_at() = farm::ToProtoTime(finished);
      batch.Put(farm::coordinator::Table::kActions, s->action_id(), r);
    }
    if (absl::Status st = (*store)->Write(batch); !st.ok()) {
      std::cerr << st << "\n";
      return false;
    }
  }
  return true;
}

struct Restart {
  double seconds = -1;
  double peak_rss = 0;     // MiB, from the start to 11 s after it
  double settled_rss = 0;  // MiB, 11 s after the start
};

Restart RestartWith(const std::string& work, const std::string& data_dir) {
  Restart restart;
  auto c =
      farm::bench::StartBenchCoordinator(work, data_dir, {"--max-finished-actions", "2000000"});
  if (!c.ok()) {
    std::cerr << c.status() << "\n";
    return restart;
  }
  restart.seconds = absl::ToDoubleSeconds(c->start_time);
  // Its first sweeps (the first retention pass scans every record) and the allocator's trim.
  absl::SleepFor(absl::Seconds(11));
  restart.peak_rss = farm::bench::PeakResidentMib(c->process.pid());
  restart.settled_rss = farm::bench::ResidentMib(c->process.pid());
  c->process.Signal(SIGTERM);
  c->process.Wait(absl::Seconds(60));
  return restart;
}

}  // namespace

int main(int argc, char** argv) {
  int actions = 100000, stored = 1000000;
  CLI::App app{"retention_bench: coordinator memory over many actions, restart with many records"};
  app.add_option("--actions", actions)->capture_default_str();
  app.add_option("--stored", stored, "finished action records for the restart")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const std::string work =
      (fs::temp_directory_path() / absl::StrCat("retention-bench-", getpid())).string();
  fs::remove_all(work);
  fs::create_directories(work);

  const MemoryRun kept_all = RunActions(work, actions, {});
  // The cap checked each second, so the figures see it applied.
  const MemoryRun bounded = RunActions(
      work, actions, {"--max-finished-actions", "10000", "--retention-check-interval", "1s"});
  if (!kept_all.ok || !bounded.ok) return 1;

  fs::remove_all(work + "/empty");
  const Restart empty = RestartWith(work, work + "/empty");
  const std::string full = work + "/full";
  fs::remove_all(full);
  fs::create_directories(full);
  const absl::Time fill_start = absl::Now();
  if (!FillStore(farm::coordinator::StateDir(full), stored)) return 1;
  const double fill_s = absl::ToDoubleSeconds(absl::Now() - fill_start);
  const Restart full_store = RestartWith(work, full);
  if (empty.seconds < 0 || full_store.seconds < 0) return 1;

  std::cout << absl::StrFormat(
      "retention_bench: %d no-op actions through a real coordinator, 8 simulated workers\n"
      "  coordinator RSS (MiB)            at %d    at %d    at %d    ratio end/first\n"
      "  default retention (100000 kept)  %7.1f  %8.1f  %8.1f   %.2f\n"
      "  --max-finished-actions 10000     %7.1f  %8.1f  %8.1f   %.2f\n"
      "  restart: empty store %.2f s; %d finished records (written in %.1f s) %.2f s; "
      "ratio %.1f\n"
      "  coordinator RSS (MiB) after the restart: peak %.1f, settled %.1f (empty store: %.1f, "
      "%.1f)\n",
      actions, actions / 10, actions / 2, actions, kept_all.rss_at_10pct, kept_all.rss_at_half,
      kept_all.rss_at_end, kept_all.rss_at_end / kept_all.rss_at_10pct, bounded.rss_at_10pct,
      bounded.rss_at_half, bounded.rss_at_end, bounded.rss_at_end / bounded.rss_at_10pct,
      empty.seconds, stored, fill_s, full_store.seconds, full_store.seconds / empty.seconds,
      full_store.peak_rss, full_store.settled_rss, empty.peak_rss, empty.settled_rss);
  fs::remove_all(work);
  return 0;
}
