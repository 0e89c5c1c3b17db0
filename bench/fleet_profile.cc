#include "bench/fleet_profile.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "libfarm/files/json_file.h"
#include "libfarm/nvcc/cost_hints.h"

namespace farm::bench {
namespace {

using nlohmann::json;

absl::Status Bad(const std::string& path, const std::string& what, const std::string& fix) {
  return absl::InvalidArgumentError(absl::StrCat("profile ", path, ": ", what, ". Fix: ", fix));
}

// A number >= 0 at `key` (0 when absent): every duration and size in a profile is one.
absl::StatusOr<double> NonNegative(const std::string& path, const json& object,
                                   const std::string& where, const std::string& key) {
  if (!object.contains(key)) return 0.0;
  const json& v = object.at(key);
  if (!v.is_number() || v.get<double>() < 0) {
    return Bad(path, absl::StrCat(where, ".", key, " is ", v.dump()),
               "give a number >= 0 (seconds of one core, or MiB)");
  }
  return v.get<double>();
}

absl::StatusOr<int> Count(const std::string& path, const json& object, const std::string& where) {
  if (!object.contains("count") || !object.at("count").is_number_integer() ||
      object.at("count").get<int>() < 0) {
    return Bad(path, absl::StrCat(where, ".count is missing or not an integer >= 0"),
               "say how many translation units the class has");
  }
  return object.at("count").get<int>();
}

absl::StatusOr<DeviceCost> ParseDeviceCost(const std::string& path, const json& object,
                                           const std::string& where, double factor) {
  DeviceCost cost;
  auto seconds = NonNegative(path, object, where, "seconds");
  if (!seconds.ok()) return seconds.status();
  auto ram = NonNegative(path, object, where, "peak_ram_mib");
  if (!ram.ok()) return ram.status();
  cost.seconds = *seconds * factor;
  cost.peak_ram_mib = *ram;
  return cost;
}

absl::StatusOr<CudaTuClass> ParseCudaClass(const std::string& path, const json& c,
                                           const std::vector<std::string>& archs,
                                           const std::map<std::string, double>& arch_factor) {
  CudaTuClass k;
  k.name = c.value("name", "");
  const std::string where = absl::StrCat("cuda_tus[", k.name, "]");
  auto count = Count(path, c, where);
  if (!count.ok()) return count.status();
  k.count = *count;
  for (auto [key, field] : {std::pair{"host_preprocess_s", &k.host_preprocess_s},
                            {"device_preprocess_s", &k.device_preprocess_s},
                            {"cudafe_s", &k.cudafe_s},
                            {"fatbinary_s", &k.fatbinary_s},
                            {"host_compile_s", &k.host_compile_s}}) {
    auto v = NonNegative(path, c, where, key);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  for (const std::string& arch : archs) {
    // Measured per arch wins; else one cost scaled by the profile's arch factor.
    if (c.contains("device_by_arch") && c.at("device_by_arch").contains(arch)) {
      auto cost = ParseDeviceCost(path, c.at("device_by_arch").at(arch),
                                  absl::StrCat(where, ".device_by_arch.", arch), 1.0);
      if (!cost.ok()) return cost.status();
      k.device[arch] = *cost;
    } else if (c.contains("device")) {
      auto f = arch_factor.find(arch);
      auto cost = ParseDeviceCost(path, c.at("device"), absl::StrCat(where, ".device"),
                                  f == arch_factor.end() ? 1.0 : f->second);
      if (!cost.ok()) return cost.status();
      k.device[arch] = *cost;
    } else {
      return Bad(path, absl::StrCat(where, " has no device cost for ", arch),
                 "add \"device\": {\"seconds\": S, \"peak_ram_mib\": M} or a device_by_arch entry");
    }
  }
  return k;
}

}  // namespace

absl::StatusOr<Profile> LoadProfile(const std::string& path) {
  auto doc = ReadJsonFile(path);
  if (!doc.ok()) {
    return absl::NotFoundError(absl::StrCat("cannot read profile ", path, ": ",
                                            doc.status().message(),
                                            ". Fix: pass a file from bench/profiles/"));
  }
  const json& j = *doc;
  if (!j.is_object()) return Bad(path, "not a JSON object", "see bench/profiles/*.json");
  Profile p;
  p.name = j.value("name", path);
  if (!j.contains("archs") || !j.at("archs").is_array() || j.at("archs").empty()) {
    return Bad(path, "no \"archs\"", "list the SMs the build targets, e.g. [\"sm_75\", \"sm_90\"]");
  }
  for (const auto& a : j.at("archs")) p.archs.push_back(a.get<std::string>());
  std::map<std::string, double> arch_factor;
  if (j.contains("arch_factor")) {
    for (const auto& [arch, f] : j.at("arch_factor").items()) {
      if (f.is_number()) arch_factor[arch] = f.get<double>();
    }
  }
  const json host = j.value("build_host", json::object());
  p.build_host.cores = host.value("cores", 0u);
  p.build_host.ram_gib = host.value("ram_gib", 0.0);
  p.build_host.job_memory_gib = host.value("job_memory_gib", 4.0);
  if (p.build_host.cores == 0 || p.build_host.ram_gib <= 0 || p.build_host.job_memory_gib <= 0) {
    return Bad(path, "build_host needs cores, ram_gib and job_memory_gib above 0",
               "e.g. \"build_host\": {\"cores\": 32, \"ram_gib\": 128, \"job_memory_gib\": 5}");
  }
  for (const auto& c : j.value("host_tus", json::array())) {
    HostTuClass k;
    k.name = c.value("name", "");
    auto count = Count(path, c, absl::StrCat("host_tus[", k.name, "]"));
    if (!count.ok()) return count.status();
    auto seconds = NonNegative(path, c, absl::StrCat("host_tus[", k.name, "]"), "seconds");
    if (!seconds.ok()) return seconds.status();
    k.count = *count;
    k.seconds = *seconds;
    p.host_tus.push_back(k);
  }
  p.cost_hints = j.value("cost_hints", "");
  if (auto hints = CostHints::Parse(p.cost_hints); !hints.ok()) {
    return Bad(path, std::string(hints.status().message()),
               "write \"cost_hints\" as FARM_NVCC_COST_HINTS is");
  }
  for (const auto& c : j.value("cuda_tus", json::array())) {
    auto k = ParseCudaClass(path, c, p.archs, arch_factor);
    if (!k.ok()) return k.status();
    p.cuda_tus.push_back(*std::move(k));
  }
  if (p.cuda_tus.empty()) {
    return Bad(path, "no \"cuda_tus\"", "a fleet simulation needs device work; add a class");
  }
  auto link = NonNegative(path, j, "profile", "link_s");
  if (!link.ok()) return link.status();
  p.link_s = *link;
  return p;
}

void RepeatProfile(Profile& profile, int repeat) {
  for (auto& k : profile.host_tus) k.count *= repeat;
  for (auto& k : profile.cuda_tus) k.count *= repeat;
}

}  // namespace farm::bench
