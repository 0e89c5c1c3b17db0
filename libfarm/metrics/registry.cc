#include "libfarm/metrics/registry.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace farm {
namespace {

std::string EscapeLabelValue(const std::string& v) {
  return absl::StrReplaceAll(v, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

std::string EscapeHelp(const std::string& v) {
  return absl::StrReplaceAll(v, {{"\\", "\\\\"}, {"\n", "\\n"}});
}

std::string FormatLabels(const MetricLabels& labels, const std::string& extra_key = "",
                         const std::string& extra_value = "") {
  std::vector<std::string> parts;
  for (const auto& [k, v] : labels)
    parts.push_back(absl::StrCat(k, "=\"", EscapeLabelValue(v), "\""));
  if (!extra_key.empty()) parts.push_back(absl::StrCat(extra_key, "=\"", extra_value, "\""));
  if (parts.empty()) return "";
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

std::string FormatValue(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return absl::StrCat(static_cast<int64_t>(v));
  return absl::StrCat(v);
}

}  // namespace

void Counter::Increment(double by) {
  double current = value_.load(std::memory_order_relaxed);
  while (!value_.compare_exchange_weak(current, current + by, std::memory_order_relaxed)) {
  }
}

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)), counts_(upper_bounds_.size() + 1, 0) {}

void Histogram::Observe(double v) {
  size_t bucket =
      std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), v) - upper_bounds_.begin();
  absl::MutexLock lock(&mu_);
  ++counts_[bucket];
  sum_ += v;
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  s.upper_bounds = upper_bounds_;
  absl::MutexLock lock(&mu_);
  uint64_t running = 0;
  for (uint64_t c : counts_) {
    running += c;
    s.cumulative_counts.push_back(running);
  }
  s.count = running;
  s.sum = sum_;
  return s;
}

MetricsRegistry::Family& MetricsRegistry::FamilyFor(const std::string& name, Type type,
                                                    const std::string& help) {
  auto [it, inserted] = families_.try_emplace(name);
  if (inserted) {
    it->second.type = type;
    it->second.help = help;
  }
  return it->second;
}

Counter* MetricsRegistry::GetCounter(const std::string& name, const std::string& help,
                                     const MetricLabels& labels) {
  absl::MutexLock lock(&mu_);
  auto& slot = FamilyFor(name, Type::kCounter, help).counters[labels];
  if (!slot) slot = std::make_unique<Counter>();
  return slot.get();
}

Gauge* MetricsRegistry::GetGauge(const std::string& name, const std::string& help,
                                 const MetricLabels& labels) {
  absl::MutexLock lock(&mu_);
  auto& slot = FamilyFor(name, Type::kGauge, help).gauges[labels];
  if (!slot) slot = std::make_unique<Gauge>();
  return slot.get();
}

Histogram* MetricsRegistry::GetHistogram(const std::string& name, const std::string& help,
                                         const std::vector<double>& upper_bounds,
                                         const MetricLabels& labels) {
  absl::MutexLock lock(&mu_);
  auto& slot = FamilyFor(name, Type::kHistogram, help).histograms[labels];
  if (!slot) slot = std::make_unique<Histogram>(upper_bounds);
  return slot.get();
}

void MetricsRegistry::AddRefreshHook(std::function<void()> hook) {
  absl::MutexLock lock(&mu_);
  hooks_.push_back(std::move(hook));
}

std::string MetricsRegistry::Render() {
  std::vector<std::function<void()>> hooks;
  {
    absl::MutexLock lock(&mu_);
    hooks = hooks_;
  }
  // Hooks may register series, so they run without the lock held.
  for (const auto& hook : hooks) hook();

  absl::MutexLock lock(&mu_);
  std::string out;
  for (const auto& [name, family] : families_) {
    const char* type = family.type == Type::kCounter ? "counter"
                       : family.type == Type::kGauge ? "gauge"
                                                     : "histogram";
    absl::StrAppend(&out, "# HELP ", name, " ", EscapeHelp(family.help), "\n");
    absl::StrAppend(&out, "# TYPE ", name, " ", type, "\n");
    for (const auto& [labels, c] : family.counters) {
      absl::StrAppend(&out, name, FormatLabels(labels), " ", FormatValue(c->value()), "\n");
    }
    for (const auto& [labels, g] : family.gauges) {
      absl::StrAppend(&out, name, FormatLabels(labels), " ", FormatValue(g->value()), "\n");
    }
    for (const auto& [labels, h] : family.histograms) {
      Histogram::Snapshot s = h->Read();
      for (size_t i = 0; i < s.upper_bounds.size(); ++i) {
        absl::StrAppend(&out, name, "_bucket",
                        FormatLabels(labels, "le", FormatValue(s.upper_bounds[i])), " ",
                        s.cumulative_counts[i], "\n");
      }
      absl::StrAppend(&out, name, "_bucket", FormatLabels(labels, "le", "+Inf"), " ", s.count,
                      "\n");
      absl::StrAppend(&out, name, "_sum", FormatLabels(labels), " ", FormatValue(s.sum), "\n");
      absl::StrAppend(&out, name, "_count", FormatLabels(labels), " ", s.count, "\n");
    }
  }
  return out;
}

}  // namespace farm
