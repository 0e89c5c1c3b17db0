#include "libfarm/recipes/toolkit_choice.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace farm {
namespace {

// Every MAJOR.MINOR in `range`; minors run 0..9 (CUDA has never gone past .9).
std::vector<ToolkitVersion> VersionsIn(const CudaRange& range) {
  std::vector<ToolkitVersion> out;
  for (int major = range.min.major; major <= range.max.major; ++major) {
    for (int minor = 0; minor <= 9; ++minor) {
      const ToolkitVersion v{major, minor};
      if (range.Contains(v)) out.push_back(v);
    }
  }
  return out;
}

bool SupportsAll(const ArchList& archs, const ToolkitVersion& v) {
  return std::all_of(archs.requests.begin(), archs.requests.end(),
                     [&](const ArchRequest& r) { return CheckToolkitSupports(r.target, v).ok(); });
}

// "sm_70 is not supported by CUDA 13.0 (lowest: sm_75)" / "(needs CUDA 12.9 or newer)".
std::string WhyUnsupported(const CudaTarget& target, const ToolkitVersion& v) {
  const std::optional<ToolkitVersion> minimum = MinimumToolkit(target);
  if (minimum && v < *minimum) {
    return absl::StrCat(target.SmName(), " is not supported by CUDA ", v.ToString(),
                        " (needs CUDA ", minimum->ToString(), " or newer)");
  }
  int lowest = 0;
  for (int sm : KnownSms()) {
    if (CheckToolkitSupports(CudaTarget{sm, ArchVariant::kGeneric}, v).ok()) {
      lowest = sm;
      break;
    }
  }
  return absl::StrCat(target.SmName(), " is not supported by CUDA ", v.ToString(),
                      lowest != 0 ? absl::StrCat(" (lowest: sm_", lowest, ")") : "");
}

// One offered toolkit version and the workers that offer it with the SMs they list.
struct Offer {
  std::vector<std::string> workers;
  std::vector<std::vector<std::string>> sms;  // per worker; empty: not reported
};

bool WorkerListsSm(const std::vector<std::string>& sms, const CudaTarget& target) {
  if (sms.empty()) return true;
  const std::string generic = absl::StrCat("sm_", target.sm);
  return std::find(sms.begin(), sms.end(), generic) != sms.end() ||
         std::find(sms.begin(), sms.end(), target.SmName()) != sms.end();
}

}  // namespace

absl::StatusOr<CudaRange> FeasibleToolkits(const ArchList& archs, const CudaRange& allowed) {
  std::vector<ToolkitVersion> feasible;
  for (const ToolkitVersion& v : VersionsIn(allowed)) {
    if (SupportsAll(archs, v)) feasible.push_back(v);
  }
  if (!feasible.empty()) return CudaRange{feasible.front(), feasible.back()};
  // Name the arch (or pair of archs) that leaves no version.
  for (const ArchRequest& r : archs.requests) {
    bool any = false;
    for (const ToolkitVersion& v : VersionsIn(allowed))
      any = any || CheckToolkitSupports(r.target, v).ok();
    if (!any) {
      const std::optional<ToolkitVersion> minimum = MinimumToolkit(r.target);
      std::string why =
          minimum && allowed.max < *minimum
              ? absl::StrCat(r.target.SmName(), " needs CUDA ", minimum->ToString(), " or newer")
              : WhyUnsupported(r.target, allowed.min);
      return absl::FailedPreconditionError(absl::StrCat(
          why, ", but the recipe allows CUDA ", allowed.ToString(),
          ": widen platform.cuda_min/cuda_max in the recipe or drop ", r.target.DottedName()));
    }
  }
  std::vector<std::string> names;
  for (const ArchRequest& r : archs.requests) names.push_back(r.target.SmName());
  return absl::FailedPreconditionError(
      absl::StrCat("no CUDA version in the recipe's range ", allowed.ToString(),
                   " compiles all of ", absl::StrJoin(names, ", "),
                   " together (an old SM was dropped before a new one arrived): "
                   "split the build into two arch lists"));
}

absl::StatusOr<ToolkitChoice> ChooseToolkit(const ArchList& archs, const CudaRange& allowed,
                                            const std::vector<farm::v1::Worker>& workers) {
  auto feasible = FeasibleToolkits(archs, allowed);
  if (!feasible.ok()) return feasible.status();

  std::map<ToolkitVersion, Offer> offers;
  for (const farm::v1::Worker& w : workers) {
    for (const farm::v1::CudaToolkit& tk : w.capabilities().cuda()) {
      auto version = ParseToolkitVersion(tk.version());
      if (!version.ok()) continue;  // a worker with a garbled toolkit simply offers nothing
      Offer& offer = offers[*version];
      offer.workers.push_back(w.name());
      offer.sms.emplace_back(tk.sms().begin(), tk.sms().end());
    }
  }
  const std::string fix_range = absl::StrCat("register a worker with CUDA ", feasible->ToString());
  if (offers.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no registered worker offers a CUDA toolkit; the recipe allows CUDA ", allowed.ToString(),
        ": ", fix_range, " (farm-worker finds toolkits on PATH, $CUDA_HOME, /usr/local/cuda*)"));
  }

  std::vector<std::string> reasons;
  std::vector<std::string> drop;
  bool drop_set = false;
  for (auto it = offers.rbegin(); it != offers.rend(); ++it) {
    const ToolkitVersion& v = it->first;
    const Offer& offer = it->second;
    if (!allowed.Contains(v)) {
      reasons.push_back(absl::StrCat("CUDA ", v.ToString(), " (on ", offer.workers.front(),
                                     offer.workers.size() > 1 ? " and others" : "",
                                     ") is outside the recipe's range"));
      continue;
    }
    std::vector<std::string> failing_here;
    std::vector<std::string> why_here;
    for (const ArchRequest& r : archs.requests) {
      if (absl::Status s = CheckToolkitSupports(r.target, v); !s.ok()) {
        failing_here.push_back(r.target.DottedName());
        why_here.push_back(WhyUnsupported(r.target, v));
      }
    }
    if (failing_here.empty()) {
      // The table allows it; keep the workers whose nvcc lists every SM.
      ToolkitChoice choice{v, {}};
      std::vector<std::string> missing;
      for (size_t i = 0; i < offer.workers.size(); ++i) {
        bool all = true;
        for (const ArchRequest& r : archs.requests) {
          if (!WorkerListsSm(offer.sms[i], r.target)) {
            all = false;
            missing.push_back(absl::StrCat(r.target.SmName(), " on ", offer.workers[i]));
          }
        }
        if (all) choice.workers.push_back(offer.workers[i]);
      }
      if (!choice.workers.empty()) return choice;
      reasons.push_back(absl::StrCat("CUDA ", v.ToString(),
                                     "'s nvcc --list-gpu-code does not list ",
                                     absl::StrJoin(missing, ", ")));
      continue;
    }
    reasons.push_back(absl::StrJoin(why_here, "; "));
    if (!drop_set) {
      drop = failing_here;  // what the newest usable offer lacks
      drop_set = true;
    }
  }
  std::string fix = fix_range;
  if (!drop.empty()) absl::StrAppend(&fix, " or drop ", absl::StrJoin(drop, ", "));
  return absl::FailedPreconditionError(absl::StrCat(
      absl::StrJoin(reasons, "; "), "; the recipe allows CUDA ", allowed.ToString(), ": ", fix));
}

}  // namespace farm
