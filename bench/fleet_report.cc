#include "bench/fleet_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "libfarm/time/proto_time.h"

namespace farm::bench {
namespace {

constexpr int kUtilizationBuckets = 10;

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

std::vector<double> Utilization(const std::vector<ExecutedAction>& executed, absl::Time start,
                                absl::Time end, uint64_t slots) {
  std::vector<double> busy(kUtilizationBuckets, 0);
  const absl::Duration bucket = (end - start) / kUtilizationBuckets;
  if (bucket <= absl::ZeroDuration() || slots == 0) return busy;
  for (const auto& a : executed) {
    for (int b = 0; b < kUtilizationBuckets; ++b) {
      const absl::Time lo = std::max(a.leased, start + bucket * b);
      const absl::Time hi = std::min(a.finished, start + bucket * (b + 1));
      if (hi > lo) busy[b] += absl::ToDoubleSeconds(hi - lo);
    }
  }
  for (double& u : busy) u /= absl::ToDoubleSeconds(bucket) * static_cast<double>(slots);
  return busy;
}

}  // namespace

double FleetReport::Ratio() const { return bounds.Bound() > 0 ? makespan_s / bounds.Bound() : 0; }

bool FleetReport::Complete() const {
  return actions_completed == actions_expected && failed_tus == 0 && worker_errors == 0;
}

FleetReport Summarize(const FleetFacts& facts, const LowerBounds& bounds, const BuildHostRun& run,
                      const std::vector<ExecutedAction>& executed,
                      const std::vector<double>& peak_ram_in_use_mib,
                      const std::vector<farm::v1::ActionStatus>& statuses) {
  FleetReport r;
  r.facts = facts;
  r.bounds = bounds;
  r.wall_s = absl::ToDoubleSeconds(run.end - run.start);
  r.makespan_s = facts.scale.Sim(run.end - run.start);
  r.utilization = Utilization(executed, run.start, run.end, facts.slots);
  if (r.makespan_s > 0 && facts.build_host_cores > 0) {
    r.host_cores_busy = run.local_busy_s / (r.makespan_s * facts.build_host_cores);
  }
  r.last_job_started_s = facts.scale.Sim(run.last_job_started - run.start);
  r.compiles_done_s = facts.scale.Sim(run.compiles_done - run.start);
  r.actions_expected = bounds.device_actions;
  r.failed_tus = run.failed_tus;
  r.first_error = run.first_error;
  std::vector<double> waits;
  for (const auto& s : statuses) {
    if (s.state() != farm::v1::ACTION_STATE_COMPLETED || s.result().exit_code() != 0) continue;
    ++r.actions_completed;
    waits.push_back(
        facts.scale.Sim(FromProtoTime(s.started_at()) - FromProtoTime(s.submitted_at())));
    double& finish = r.arch_finish_s[s.shard()];
    finish = std::max(finish, facts.scale.Sim(FromProtoTime(s.finished_at()) - run.start));
  }
  r.queue_p50_s = Percentile(waits, 0.5);
  r.queue_p99_s = Percentile(waits, 0.99);
  r.queue_max_s = Percentile(waits, 1.0);
  for (size_t i = 0; i < peak_ram_in_use_mib.size() && i < facts.worker_ram_mib.size(); ++i) {
    const double ratio = peak_ram_in_use_mib[i] / facts.worker_ram_mib[i];
    r.worst_ram_ratio = std::max(r.worst_ram_ratio, ratio);
    if (ratio > 1) ++r.workers_over_ram;
  }
  return r;
}

std::string FormatReport(const FleetReport& r) {
  const FleetFacts& f = r.facts;
  const LowerBounds& b = r.bounds;
  auto hours = [](double s) { return s / 3600.0; };
  std::string out = absl::StrFormat(
      "fleet_sim: %s on %d hosts (%s; %llu slots), build host %u cores, ninja -j %u "
      "(%s), local slots %s, time %.3g ms per compile second\n"
      "  coordinator        --queue-order %s, --memory-aware %s, %s\n"
      "  device actions     %d of %d completed, %d TUs failed, %lld worker errors\n"
      "  makespan           %8.0f s  (%.2f h; %.1f s wall)\n"
      "  lower bound        %8.0f s  (%.2f h), binding: %s\n"
      "    device work      %8.0f s  = %.0f s / %llu slots\n"
      "    build host work  %8.0f s  = (%.0f s - link) / %u cores + link %.0f s\n"
      "    critical path    %8.0f s\n"
      "  makespan / bound   %8.2f\n"
      "  ninja -j %-3u bound  %8.0f s  (TUs hold their job slot while the farm compiles; "
      "makespan / it %.2f)\n",
      f.profile, f.hosts, f.fleet, static_cast<unsigned long long>(f.slots), f.build_host_cores,
      f.build_host_jobs, f.ninja_order, f.local_order, f.scale.ms_per_second, f.queue_order,
      f.memory_aware ? "true" : "false",
      f.learnt       ? "costs learnt from a first replay"
      : f.cost_hints ? "nothing learnt before; the profile's cost hints sent"
                     : "nothing learnt before",
      r.actions_completed, r.actions_expected, r.failed_tus,
      static_cast<long long>(r.worker_errors), r.makespan_s, hours(r.makespan_s), r.wall_s,
      b.Bound(), hours(b.Bound()), b.Binding(), b.device_s, b.device_work_s,
      static_cast<unsigned long long>(f.slots), b.host_s, b.host_work_s, f.build_host_cores,
      b.link_s, b.critical_s, r.Ratio(), f.build_host_jobs, b.jobs_s,
      b.jobs_s > 0 ? r.makespan_s / b.jobs_s : 0.0);
  absl::StrAppendFormat(
      &out,
      "  build host         cores busy %.0f%% of the makespan; last ninja edge "
      "started at %.0f s, compiles done at %.0f s (tail %.0f s), link to %.0f s\n",
      100 * r.host_cores_busy, r.last_job_started_s, r.compiles_done_s,
      r.compiles_done_s - r.last_job_started_s, r.makespan_s);
  absl::StrAppend(&out, "  fleet utilization  ");
  for (size_t i = 0; i < r.utilization.size(); ++i) {
    absl::StrAppendFormat(&out, "%s%3.0f%%", i == 0 ? "" : " ", 100 * r.utilization[i]);
  }
  absl::StrAppend(&out, "  (per 10% of the makespan)\n");
  absl::StrAppendFormat(&out, "  queue wait         p50 %.1f s, p99 %.1f s, max %.1f s\n",
                        r.queue_p50_s, r.queue_p99_s, r.queue_max_s);
  absl::StrAppend(&out, "  arch finished at  ");
  for (const auto& [arch, s] : r.arch_finish_s) {
    absl::StrAppendFormat(&out, " %s %.0f s (%.0f%%)", arch, s,
                          r.makespan_s > 0 ? 100 * s / r.makespan_s : 0.0);
  }
  absl::StrAppendFormat(&out,
                        "\n  worker RAM         %d workers' running actions peaked above their "
                        "RAM (worst %.2fx)\n"
                        "  coordinator        %.2f s CPU, peak RSS %.1f MiB\n",
                        r.workers_over_ram, r.worst_ram_ratio, r.coordinator_cpu_s,
                        r.coordinator_peak_rss_mib);
  if (!r.first_error.empty()) absl::StrAppend(&out, "  first error        ", r.first_error, "\n");
  return out;
}

nlohmann::json ReportJson(const FleetReport& r) {
  nlohmann::json j;
  j["profile"] = r.facts.profile;
  j["hosts"] = r.facts.hosts;
  j["fleet"] = r.facts.fleet;
  j["slots"] = r.facts.slots;
  j["build_host"] = {
      {"cores", r.facts.build_host_cores},   {"jobs", r.facts.build_host_jobs},
      {"ninja_order", r.facts.ninja_order},  {"local_order", r.facts.local_order},
      {"cores_busy", r.host_cores_busy},     {"last_job_started_s", r.last_job_started_s},
      {"compiles_done_s", r.compiles_done_s}};
  j["ms_per_compile_second"] = r.facts.scale.ms_per_second;
  j["coordinator"] = {{"queue_order", r.facts.queue_order},
                      {"memory_aware", r.facts.memory_aware},
                      {"learnt_first", r.facts.learnt},
                      {"cost_hints", r.facts.cost_hints}};
  j["actions"] = {{"expected", r.actions_expected}, {"completed", r.actions_completed}};
  j["failed_tus"] = r.failed_tus;
  j["worker_errors"] = r.worker_errors;
  j["makespan_s"] = r.makespan_s;
  j["wall_s"] = r.wall_s;
  j["lower_bound"] = {{"bound_s", r.bounds.Bound()},
                      {"binding", r.bounds.Binding()},
                      {"device_s", r.bounds.device_s},
                      {"build_host_s", r.bounds.host_s},
                      {"critical_path_s", r.bounds.critical_s},
                      {"ninja_jobs_s", r.bounds.jobs_s},
                      {"device_work_s", r.bounds.device_work_s},
                      {"build_host_work_s", r.bounds.host_work_s}};
  j["ratio"] = r.Ratio();
  j["utilization_per_tenth"] = r.utilization;
  j["queue_wait_s"] = {{"p50", r.queue_p50_s}, {"p99", r.queue_p99_s}, {"max", r.queue_max_s}};
  j["arch_finish_s"] = r.arch_finish_s;
  j["workers_over_ram"] = r.workers_over_ram;
  j["worst_ram_ratio"] = r.worst_ram_ratio;
  j["coordinator"] = {{"cpu_s", r.coordinator_cpu_s}, {"peak_rss_mib", r.coordinator_peak_rss_mib}};
  return j;
}

}  // namespace farm::bench
