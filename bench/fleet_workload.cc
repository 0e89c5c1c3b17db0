#include "bench/fleet_workload.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"

namespace farm::bench {

absl::StatusOr<NinjaOrder> ParseNinjaOrder(const std::string& name) {
  if (name == "shuffled") return NinjaOrder::kShuffled;
  if (name == "longest-first") return NinjaOrder::kLongestFirst;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown ninja order '", name, "'. Fix: --ninja-order shuffled|longest-first"));
}

std::string NinjaOrderName(NinjaOrder order) {
  return order == NinjaOrder::kShuffled ? "shuffled" : "longest-first";
}

std::vector<BuildJob> BuildOrder(const Profile& profile, uint64_t seed, NinjaOrder order) {
  std::vector<BuildJob> jobs;
  int tu = 0;
  for (size_t k = 0; k < profile.cuda_tus.size(); ++k) {
    for (int i = 0; i < profile.cuda_tus[k].count; ++i) {
      jobs.push_back({true, static_cast<int>(k), tu++});
    }
  }
  for (size_t k = 0; k < profile.host_tus.size(); ++k) {
    for (int i = 0; i < profile.host_tus[k].count; ++i) {
      jobs.push_back({false, static_cast<int>(k), tu++});
    }
  }
  std::mt19937_64 rng(seed);
  std::shuffle(jobs.begin(), jobs.end(), rng);
  if (order == NinjaOrder::kLongestFirst) {
    auto path = [&](const BuildJob& j) {
      return j.cuda ? CudaTuCriticalPath(profile.cuda_tus[j.klass], profile.archs) : 0.0;
    };
    std::stable_sort(jobs.begin(), jobs.end(),
                     [&](const BuildJob& a, const BuildJob& b) { return path(a) > path(b); });
  }
  return jobs;
}

double CudaTuCriticalPath(const CudaTuClass& k, const std::vector<std::string>& archs) {
  const double before = std::max(k.host_preprocess_s + k.cudafe_s, k.device_preprocess_s);
  double first = 0, longest = 0;
  for (size_t i = 0; i < archs.size(); ++i) {
    const double s = k.device.at(archs[i]).seconds;
    if (i == 0) first = s;
    longest = std::max(longest, s);
  }
  return before + std::max(first + k.host_compile_s, longest + k.fatbinary_s);
}

double LowerBounds::Bound() const { return std::max({device_s, host_s, critical_s}); }

std::string LowerBounds::Binding() const {
  if (critical_s >= device_s && critical_s >= host_s) return "critical path";
  return device_s >= host_s ? "device" : "build host";
}

LowerBounds ComputeLowerBounds(const Profile& profile, uint64_t fleet_slots, uint32_t jobs,
                               double host_scan_fraction) {
  LowerBounds b;
  const bool on_farm = host_scan_fraction > 0;
  // A host compile's share of the build host's cores and of the farm's slots.
  auto host_compile = [&](double count, double seconds) {
    b.host_work_s += count * seconds * (on_farm ? host_scan_fraction : 1.0);
    if (on_farm) {
      b.device_work_s += count * seconds;
      b.device_actions += static_cast<int>(count);
    }
  };
  double longest_tu = 0, job_slot_s = 0;
  for (const auto& k : profile.host_tus) {
    host_compile(k.count, k.seconds);
    job_slot_s += k.count * k.seconds * (on_farm ? 1.0 + host_scan_fraction : 1.0);
    if (k.count > 0) longest_tu = std::max(longest_tu, k.seconds);
  }
  const double archs = static_cast<double>(profile.archs.size());
  for (const auto& k : profile.cuda_tus) {
    if (k.count == 0) continue;
    b.host_work_s += k.count * (k.host_preprocess_s + archs * k.device_preprocess_s + k.cudafe_s +
                                k.fatbinary_s);
    host_compile(k.count, k.host_compile_s);
    for (const auto& [arch, cost] : k.device) b.device_work_s += k.count * cost.seconds;
    b.device_actions += k.count * static_cast<int>(profile.archs.size());
    const double tu_s = CudaTuCriticalPath(k, profile.archs);
    job_slot_s += k.count * tu_s;
    longest_tu = std::max(longest_tu, tu_s);
  }
  b.host_work_s += profile.link_s;
  b.link_s = profile.link_s;
  b.device_s = b.device_work_s / static_cast<double>(std::max<uint64_t>(fleet_slots, 1));
  b.host_s = (b.host_work_s - profile.link_s) / std::max<uint32_t>(profile.build_host.cores, 1) +
             profile.link_s;
  b.critical_s = longest_tu + profile.link_s;
  b.jobs_s = job_slot_s / std::max<uint32_t>(jobs, 1) + profile.link_s;
  return b;
}

}  // namespace farm::bench
