#include "bench/fleet_sim_run.h"

#include <signal.h>

#include <filesystem>
#include <map>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/bench_coordinator.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/host/host_probe.h"
#include "libfarm/logging/logger.h"
#include "libfarm/nvcc/cost_hints.h"
#include "libfarm/recipes/build_jobs.h"

namespace farm::bench {
namespace {

namespace fs = std::filesystem;

// The hosts' types, in order: the mix's weighted pattern cycled.
absl::StatusOr<std::vector<HostShape>> FleetShapes(const std::string& mix, int hosts) {
  std::vector<HostShape> pattern;
  for (absl::string_view part : absl::StrSplit(mix, ',', absl::SkipEmpty())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
    int weight = 1;
    if (!kv.second.empty() && (!absl::SimpleAtoi(kv.second, &weight) || weight < 1)) {
      return absl::InvalidArgumentError(absl::StrCat("--mix '", mix, "': weight of ", kv.first,
                                                     " is not an integer >= 1. Fix: e.g. ",
                                                     "--mix m8g.4xlarge=3,grace=1"));
    }
    auto shape = KnownHostShape(kv.first);
    if (!shape.ok()) return shape.status();
    for (int i = 0; i < weight; ++i) pattern.push_back(*shape);
  }
  if (pattern.empty() || hosts < 1) {
    return absl::InvalidArgumentError(
        "no hosts. Fix: pass --hosts N >= 1 and --mix TYPE=WEIGHT,...");
  }
  std::vector<HostShape> shapes;
  for (int i = 0; i < hosts; ++i) shapes.push_back(pattern[i % pattern.size()]);
  return shapes;
}

std::string DescribeFleet(const std::vector<HostShape>& shapes) {
  std::map<std::string, int> count;
  for (const auto& s : shapes) ++count[s.type];
  std::vector<std::string> parts;
  for (const auto& [type, n] : count) parts.push_back(absl::StrCat(n, " x ", type));
  return absl::StrJoin(parts, " + ");
}

// The coordinator's record of each action the fleet ran (submitted_at, started_at, ...).
absl::StatusOr<std::vector<farm::v1::ActionStatus>> FetchStatuses(
    ActionClient& client, const std::vector<ExecutedAction>& executed) {
  std::vector<farm::v1::ActionStatus> all;
  constexpr size_t kChunk = 500;
  for (size_t i = 0; i < executed.size(); i += kChunk) {
    std::vector<std::string> ids;
    for (size_t k = i; k < std::min(executed.size(), i + kChunk); ++k) {
      ids.push_back(executed[k].action_id);
    }
    auto st = client.WaitAll(ids, absl::Seconds(30));
    if (!st.ok()) return st.status();
    all.insert(all.end(), st->begin(), st->end());
  }
  return all;
}

}  // namespace

absl::StatusOr<FleetReport> RunFleetSim(const FleetSimOptions& options) {
  auto profile = LoadProfile(options.profile_path);
  if (!profile.ok()) return profile.status();
  RepeatProfile(*profile, options.repeat);
  auto shapes = FleetShapes(options.mix, options.hosts);
  if (!shapes.ok()) return shapes.status();
  if (options.ms_per_second <= 0) {
    return absl::InvalidArgumentError("--ms-per-second must be above 0. Fix: e.g. 1");
  }

  const TimeScale scale{options.ms_per_second};
  absl::StatusOr<NinjaOrder> ninja_order = ParseNinjaOrder(options.ninja_order);
  if (!ninja_order.ok()) return ninja_order.status();
  const std::vector<BuildJob> order = BuildOrder(*profile, options.seed, *ninja_order);
  FleetFacts facts;
  facts.ninja_order = options.ninja_order;
  facts.local_order = options.local_order;
  facts.profile = profile->name;
  facts.fleet = DescribeFleet(*shapes);
  facts.hosts = options.hosts;
  facts.scale = scale;
  facts.queue_order = options.queue_order;
  facts.memory_aware = options.memory_aware;
  facts.learnt = options.learn_first;
  facts.cost_hints = options.cost_hints;
  facts.build_host_cores = profile->build_host.cores;
  facts.build_host_jobs =
      options.jobs > 0 ? options.jobs
                       : BuildJobs(profile->build_host.cores,
                                   static_cast<uint64_t>(profile->build_host.ram_gib * (1 << 30)),
                                   profile->build_host.job_memory_gib);
  std::vector<uint32_t> slots;
  for (const auto& s : *shapes) {
    // The real worker's default: one slot per ~4 GiB, at most one per core.
    slots.push_back(DefaultSlots(s.cores, static_cast<uint64_t>(s.ram_gib * (1 << 30))));
    facts.slots += slots.back();
    facts.worker_ram_mib.push_back(s.ram_gib * 1024);
  }
  if (options.farm_jobs && options.jobs == 0) {
    facts.build_host_jobs = FarmBuildJobs(
        profile->build_host.cores, static_cast<uint64_t>(profile->build_host.ram_gib * (1 << 30)),
        facts.build_host_jobs, facts.slots, profile->archs.size());
  }
  const LowerBounds bounds =
      ComputeLowerBounds(*profile, facts.slots, facts.build_host_jobs, options.host_scan_fraction);

  const std::string work = options.work_dir;
  std::error_code ec;
  fs::remove_all(work, ec);
  fs::create_directories(work + "/build-host", ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat("cannot create ", work, ": ", ec.message(),
                                                      ". Fix: pass a writable --work-dir"));
  }
  auto coordinator = StartBenchCoordinator(work, work + "/data",
                                           {"--queue-order", options.queue_order, "--memory-aware",
                                            options.memory_aware ? "true" : "false"});
  if (!coordinator.ok()) return coordinator.status();
  auto log = ComponentLogger("fleet_sim");
  log->info("coordinator pid {} up at {} in {:.2f} s", coordinator->process.pid(),
            coordinator->address, absl::ToDoubleSeconds(coordinator->start_time));

  farm::v1::CudaToolkit toolkit;
  toolkit.set_version("13.0");
  toolkit.set_release("V13.0.88");
  toolkit.set_path("/usr/local/cuda-13.0");
  for (const auto& arch : profile->archs) toolkit.add_sms(arch);

  FleetLedger ledger;
  {
    absl::MutexLock lock(&ledger.mu);
    ledger.peak_ram_in_use_mib.assign(shapes->size(), 0);
  }
  std::vector<SleepingWorkerConfig> configs(shapes->size());
  std::atomic<bool> stop{false};
  std::vector<std::thread> fleet;
  for (size_t i = 0; i < shapes->size(); ++i) {
    configs[i] = {coordinator->address,
                  coordinator->token,
                  static_cast<int>(i),
                  (*shapes)[i],
                  slots[i],
                  toolkit,
                  scale};
    fleet.emplace_back(RunSleepingWorker, std::cref(configs[i]), std::cref(stop), std::ref(ledger));
  }
  // Device actions fail at once when no online worker qualifies: start with the fleet up.
  for (const absl::Time deadline = absl::Now() + absl::Minutes(2); absl::Now() < deadline;
       absl::SleepFor(absl::Milliseconds(10))) {
    absl::MutexLock lock(&ledger.mu);
    if (ledger.registered + ledger.errors >= options.hosts) break;
  }

  log->info("{} simulated workers registered; replaying {} ({} device actions)", options.hosts,
            profile->name, bounds.device_actions);
  BuildHostOptions host;
  host.address = coordinator->address;
  host.token = coordinator->token;
  host.work_dir = work + "/build-host";
  host.jobs = facts.build_host_jobs;
  host.cores = profile->build_host.cores;
  host.scale = scale;
  host.host_scan_fraction = options.host_scan_fraction;
  host.local_priorities = options.local_order == "priority";
  absl::StatusOr<CostHints> hints = CostHints::Parse(profile->cost_hints);
  if (!hints.ok()) return hints.status();
  if (options.cost_hints) {
    if (hints->empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(options.profile_path,
                       " has no cost_hints. Fix: add them, or leave out "
                       "--cost-hints"));
    }
    host.cost_hints = &*hints;
  }
  if (options.learn_first) {
    BuildHostOptions learn = host;
    learn.run_tag = "learn";
    learn.build_id = "fleet-sim-learn";
    const BuildHostRun learnt = ReplayBuild(*profile, order, learn);
    log->info("learning run done in {:.1f} s wall ({} TUs failed)",
              absl::ToDoubleSeconds(learnt.end - learnt.start), learnt.failed_tus);
    absl::MutexLock lock(&ledger.mu);
    ledger.actions.clear();
    ledger.peak_ram_in_use_mib.assign(shapes->size(), 0);
  }
  host.run_tag = "measured";
  const BuildHostRun run = ReplayBuild(*profile, order, host);

  std::vector<ExecutedAction> executed;
  std::vector<double> peak_ram;
  {
    absl::MutexLock lock(&ledger.mu);
    executed = ledger.actions;
    peak_ram = ledger.peak_ram_in_use_mib;
  }
  auto client = ActionClient::Connect(coordinator->address, coordinator->token);
  auto statuses = FetchStatuses(*client, executed);
  const int pid = coordinator->process.pid();
  const double cpu_s = CpuSeconds(pid);
  const double peak_rss = PeakResidentMib(pid);

  log->info("build done in {:.1f} s wall; stopping the fleet and the coordinator",
            absl::ToDoubleSeconds(run.end - run.start));
  stop = true;
  for (auto& t : fleet) t.join();
  coordinator->process.Signal(SIGTERM);
  coordinator->process.Wait(absl::Seconds(30));
  log->info("stopped");
  if (!statuses.ok()) return statuses.status();

  FleetReport report = Summarize(facts, bounds, run, executed, peak_ram, *statuses);
  report.coordinator_cpu_s = cpu_s;
  report.coordinator_peak_rss_mib = peak_rss;
  {
    absl::MutexLock lock(&ledger.mu);
    report.worker_errors = ledger.errors;
    if (report.first_error.empty()) report.first_error = ledger.first_error;
  }
  if (!options.keep_work_dir) fs::remove_all(work, ec);
  return report;
}

}  // namespace farm::bench
