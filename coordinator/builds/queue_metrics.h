// /metrics for the scheduler's queue: queued and running actions by requirement class
// (cpu_arch, CUDA, SMs), kept from action transitions so /metrics never takes the
// scheduler's lock.
#pragma once

#include <map>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/scheduler/action_observer.h"
#include "libfarm/metrics/registry.h"

namespace farm::coordinator {

class QueueMetrics final : public ActionObserver {
 public:
  explicit QueueMetrics(MetricsRegistry* metrics);
  void OnActionsChanged(const std::vector<ActionUpdate>& updates) override;

  // The labels of a requirement class, "any" where the action does not care.
  static MetricLabels ClassLabels(const farm::v1::Requirements& requirements);

 private:
  struct Live {
    uint64_t sequence = 0;
    bool running = false;
    MetricLabels labels;
  };
  void Refresh();

  MetricsRegistry* const metrics_;
  absl::Mutex mu_;
  std::map<std::string, Live> live_ ABSL_GUARDED_BY(mu_);  // queued or running, by action id
  std::set<MetricLabels> seen_ ABSL_GUARDED_BY(mu_);
};

}  // namespace farm::coordinator
