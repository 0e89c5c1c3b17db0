// Scheduler throughput: no-op actions end to end through a real farm-coordinator on
// loopback (durable RocksDB state), with simulated workers that lease and complete at once.
// Prints actions/s and submit-to-lease latency percentiles. Usage:
//   scheduler_bench [--actions N] [--workers W] [--slots S] [--batch B]
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include <CLI/CLI.hpp>

#include "bench/bench_coordinator.h"
#include "bench/simulated_worker.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "libfarm/actions/action_client.h"

int main(int argc, char** argv) {
  int actions = 20000, workers = 50, batch = 500;
  uint32_t slots = 16;
  CLI::App app{"scheduler_bench: no-op actions end to end through a real coordinator"};
  app.add_option("--actions", actions)->capture_default_str();
  app.add_option("--workers", workers)->capture_default_str();
  app.add_option("--slots", slots)->capture_default_str();
  app.add_option("--batch", batch, "actions per Execute call")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  const std::string work =
      (std::filesystem::temp_directory_path() / absl::StrCat("scheduler-bench-", getpid()))
          .string();
  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work);
  auto coordinator = farm::bench::StartBenchCoordinator(work, work + "/data");
  if (!coordinator.ok()) {
    std::cerr << coordinator.status() << "\n";
    return 1;
  }
  const std::string address = coordinator->address;
  const std::string token = coordinator->token;

  std::atomic<bool> stop{false};
  std::atomic<int64_t> completed{0};
  farm::bench::LeaseTimes times;
  std::vector<std::thread> sims;
  for (int i = 0; i < workers; ++i) {
    sims.emplace_back(farm::bench::SimulatedWorker, address, token, i, slots, std::cref(stop),
                      std::ref(times), std::ref(completed));
  }
  absl::SleepFor(absl::Seconds(1));

  auto client = farm::ActionClient::Connect(address, token);
  std::map<std::string, absl::Time> submitted;
  const absl::Time start = absl::Now();
  for (int done = 0; done < actions; done += batch) {
    std::vector<farm::v1::Action> chunk;
    for (int i = done; i < std::min(actions, done + batch); ++i) {
      farm::v1::Action a;
      a.add_argv("true");
      a.add_argv(absl::StrCat(i));
      a.set_build_id(absl::StrCat("build-", i % 4));
      chunk.push_back(std::move(a));
    }
    const absl::Time t = absl::Now();
    auto statuses = client->Execute(chunk);
    if (!statuses.ok()) {
      std::cerr << "Execute: " << statuses.status() << "\n";
      return 1;
    }
    for (const auto& s : *statuses) submitted[s.action_id()] = t;
  }
  while (completed.load() < actions && absl::Now() - start < absl::Minutes(5)) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  const absl::Duration elapsed = absl::Now() - start;
  stop = true;
  for (auto& t : sims) t.join();
  coordinator->process.Signal(SIGTERM);
  coordinator->process.Wait(absl::Seconds(10));

  std::vector<double> latency_ms;
  {
    absl::MutexLock lock(&times.mu);
    for (const auto& [id, t] : submitted) {
      auto it = times.leased.find(id);
      if (it != times.leased.end())
        latency_ms.push_back(absl::ToDoubleMilliseconds(it->second - t));
    }
  }
  std::sort(latency_ms.begin(), latency_ms.end());
  auto pct = [&](double p) {
    return latency_ms.empty() ? 0.0 : latency_ms[static_cast<size_t>(p * (latency_ms.size() - 1))];
  };
  const double rate = static_cast<double>(completed.load()) / absl::ToDoubleSeconds(elapsed);
  std::cout << absl::StrFormat(
      "scheduler_bench: %d no-op actions, %d simulated workers x %u slots, Execute batches of %d\n"
      "  completed          %lld in %.2f s\n"
      "  throughput         %.0f actions/s (goal >= 5000, ratio %.2f)\n"
      "  submit -> lease    p50 %.1f ms, p99 %.1f ms\n",
      actions, workers, slots, batch, static_cast<long long>(completed.load()),
      absl::ToDoubleSeconds(elapsed), rate, rate / 5000.0, pct(0.5), pct(0.99));
  std::filesystem::remove_all(work);
  return completed.load() >= actions ? 0 : 1;
}
