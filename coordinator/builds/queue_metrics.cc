#include "coordinator/builds/queue_metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace farm::coordinator {

QueueMetrics::QueueMetrics(MetricsRegistry* metrics) : metrics_(metrics) {
  metrics_->AddRefreshHook([this] { Refresh(); });
}

MetricLabels QueueMetrics::ClassLabels(const farm::v1::Requirements& r) {
  std::string cuda = r.cuda_version();
  if (cuda.empty() && (!r.cuda_min().empty() || !r.cuda_max().empty())) {
    cuda = absl::StrCat(r.cuda_min(), "..", r.cuda_max());
  }
  std::string sms = absl::StrJoin(r.sms(), ",");
  return {{"cpu_arch", r.cpu_arch().empty() ? "any" : r.cpu_arch()},
          {"cuda", cuda.empty() ? "any" : cuda},
          {"sms", sms.empty() ? "any" : sms}};
}

void QueueMetrics::OnActionsChanged(const std::vector<ActionUpdate>& updates) {
  absl::MutexLock lock(&mu_);
  for (const auto& u : updates) {
    const auto state = u.status.state();
    auto it = live_.find(u.status.action_id());
    if (it != live_.end() && it->second.sequence >= u.sequence) continue;
    if (state == farm::v1::ACTION_STATE_QUEUED || state == farm::v1::ACTION_STATE_RUNNING) {
      Live& l = live_[u.status.action_id()];
      l = {u.sequence, state == farm::v1::ACTION_STATE_RUNNING, ClassLabels(u.requirements)};
      seen_.insert(l.labels);
    } else if (it != live_.end()) {
      live_.erase(it);
    }
  }
}

void QueueMetrics::Refresh() {
  std::map<MetricLabels, std::pair<int, int>> counts;  // queued, running
  absl::MutexLock lock(&mu_);
  for (const auto& [id, l] : live_) {
    auto& c = counts[l.labels];
    (l.running ? c.second : c.first)++;
  }
  // Classes seen before stay, at zero, so a drained queue reads 0 rather than vanishing.
  for (const auto& labels : seen_) counts.try_emplace(labels, 0, 0);
  for (const auto& [labels, c] : counts) {
    seen_.insert(labels);
    metrics_->GetGauge("farm_queue_depth", "Queued actions by requirement class.", labels)
        ->Set(c.first);
    metrics_->GetGauge("farm_actions_running", "Running actions by requirement class.", labels)
        ->Set(c.second);
  }
}

}  // namespace farm::coordinator
