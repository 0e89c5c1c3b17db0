#include "cli/worker_view.h"

#include <google/protobuf/util/time_util.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "cli/text_table.h"
#include "libfarm/gpu/gpu_device.h"
#include "libfarm/time/proto_time.h"
#include "libfarm/workers/worker_state.h"

namespace farm::cli {
namespace {

using google::protobuf::util::TimeUtil;

std::string Rfc3339(const google::protobuf::Timestamp& ts) {
  if (ts.seconds() == 0 && ts.nanos() == 0) return "";
  return TimeUtil::ToString(ts);
}

}  // namespace

std::string Ago(absl::Time then, absl::Time now) {
  const int64_t s = std::max<int64_t>(0, absl::ToInt64Seconds(now - then));
  if (s < 120) return absl::StrCat(s, "s ago");
  if (s < 7200) return absl::StrCat(s / 60, "m ago");
  if (s < 172800) return absl::StrCat(s / 3600, "h ago");
  return absl::StrCat(s / 86400, "d ago");
}

std::string HumanBytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? absl::StrCat(bytes, " B") : absl::StrFormat("%.1f %s", v, units[u]);
}

RunningByWorker GroupByWorker(const farm::v1::ListActionsResponse& running) {
  RunningByWorker out;
  for (const auto& a : running.actions()) out[a.worker()].push_back(a);
  return out;
}

namespace {

double Load(const farm::v1::Worker& w) {
  const uint32_t slots = w.capabilities().slots();
  return slots == 0 ? 0.0 : static_cast<double>(w.slots_in_use()) / slots;
}

// "b1/sm_90, b1/sm_80 +3"
std::string CurrentActions(const std::vector<farm::v1::ActionEntry>& running) {
  if (running.empty()) return "-";
  std::vector<std::string> parts;
  for (size_t i = 0; i < running.size() && i < 3; ++i) {
    const auto& a = running[i];
    parts.push_back(absl::StrCat(a.build_id().empty() ? "(no build)" : a.build_id(),
                                 a.shard().empty() ? "" : "/", a.shard()));
  }
  std::string out = absl::StrJoin(parts, ", ");
  if (running.size() > 3) absl::StrAppend(&out, " +", running.size() - 3);
  return out;
}

}  // namespace

nlohmann::json WorkerToJson(const farm::v1::Worker& w,
                            const std::vector<farm::v1::ActionEntry>& running) {
  const auto& c = w.capabilities();
  nlohmann::json cuda = nlohmann::json::array();
  for (const auto& t : c.cuda()) {
    cuda.push_back({{"version", t.version()},
                    {"release", t.release()},
                    {"sms", std::vector<std::string>(t.sms().begin(), t.sms().end())},
                    {"path", t.path()}});
  }
  nlohmann::json python = nlohmann::json::array();
  for (const auto& p : c.python()) {
    python.push_back({{"version", p.version()}, {"release", p.release()}, {"path", p.path()}});
  }
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : c.gpus()) {
    gpus.push_back({{"name", g.name()},
                    {"sm", g.sm()},
                    {"memory_bytes", g.memory_bytes()},
                    {"driver_cuda_version", g.driver_cuda_version()},
                    {"declared", g.declared()}});
  }
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [k, v] : c.labels()) labels[k] = v;
  nlohmann::json current = nlohmann::json::array();
  for (const auto& a : running) {
    current.push_back({{"action_id", a.action_id()},
                       {"build_id", a.build_id()},
                       {"shard", a.shard()},
                       {"started_at", Rfc3339(a.started_at())}});
  }
  return {{"name", w.name()},
          {"state", WorkerStateName(w.state())},
          {"os", c.os()},
          {"cpu_arch", c.cpu_arch()},
          {"glibc", c.glibc()},
          {"cores", c.cores()},
          {"ram_bytes", c.ram_bytes()},
          {"disk_free_bytes", c.disk_free_bytes()},
          {"cuda", cuda},
          {"python", python},
          {"gpus", gpus},
          {"slots", c.slots()},
          {"slots_in_use", w.slots_in_use()},
          {"load", Load(w)},
          {"current_actions", current},
          {"labels", labels},
          {"sandboxed", c.sandboxed()},
          {"hostname", c.hostname()},
          {"version", c.worker_version()},
          {"peer", w.peer()},
          {"registered_at", Rfc3339(w.registered_at())},
          {"last_seen", Rfc3339(w.last_seen())},
          {"state_since", Rfc3339(w.state_since())}};
}

std::string WorkersTable(const farm::v1::ListWorkersResponse& workers, absl::Time now,
                         const RunningByWorker& running) {
  if (workers.workers().empty()) {
    return "no workers registered. Start one with 'farm-worker --coordinator ADDR --token-file "
           "F', or a local farm with 'farmctl up'\n";
  }
  TextTable table({"NAME", "STATE", "PLATFORM", "GLIBC", "CUDA", "SMS", "GPUS", "SLOTS", "LOAD",
                   "SANDBOX", "RUNNING", "LAST SEEN"});
  for (const auto& w : workers.workers()) {
    const auto& c = w.capabilities();
    std::vector<std::string> versions, sms;
    for (const auto& t : c.cuda()) {
      // The release ("13.0.88") when known: device actions match on it exactly.
      versions.push_back(t.release().empty() ? t.version()
                                             : std::string(absl::StripPrefix(t.release(), "V")));
      for (const auto& sm : t.sms()) {
        std::string n(absl::StripPrefix(sm, "sm_"));
        if (std::find(sms.begin(), sms.end(), n) == sms.end()) sms.push_back(n);
      }
    }
    table.AddRow({w.name(), WorkerStateName(w.state()), absl::StrCat(c.os(), "/", c.cpu_arch()),
                  c.glibc(), versions.empty() ? "-" : absl::StrJoin(versions, ","),
                  sms.empty() ? "-" : absl::StrCat("sm_", absl::StrJoin(sms, ",")),
                  GpuSummary(c.gpus()), absl::StrCat(w.slots_in_use(), "/", c.slots()),
                  absl::StrFormat("%.0f%%", 100 * Load(w)), c.sandboxed() ? "yes" : "NO",
                  CurrentActions(running.count(w.name()) ? running.at(w.name())
                                                         : std::vector<farm::v1::ActionEntry>()),
                  Ago(FromProtoTime(w.last_seen()), now)});
  }
  return table.Render();
}

nlohmann::json StatusToJson(const farm::v1::GetStatusResponse& s) {
  return {{"version", s.version()},
          {"started_at", Rfc3339(s.started_at())},
          {"grpc_address", s.grpc_address()},
          {"http_address", s.http_address()},
          {"tls", s.tls()},
          {"workers",
           {{"online", s.workers_online()},
            {"draining", s.workers_draining()},
            {"lost", s.workers_lost()},
            {"offline", s.workers_offline()}}},
          {"slots_online", s.slots_online()},
          {"worker_timeout_ms", s.worker_timeout_ms()}};
}

std::string StatusText(const farm::v1::GetStatusResponse& s, absl::Time now) {
  std::string out;
  absl::StrAppend(&out, "coordinator  ", s.grpc_address(), " (wheelfarm ", s.version(),
                  ", up since ", Ago(FromProtoTime(s.started_at()), now), ")\n");
  absl::StrAppend(&out, "metrics      ",
                  s.http_address().empty() ? "disabled"
                                           : absl::StrCat(s.tls() ? "https://" : "http://",
                                                          s.http_address(), "/metrics"),
                  "\n");
  absl::StrAppend(&out, "workers      ", s.workers_online(), " online, ", s.workers_draining(),
                  " draining, ", s.workers_lost(), " lost, ", s.workers_offline(), " offline\n");
  absl::StrAppend(&out, "slots        ", s.slots_online(), " online\n");
  return out;
}

}  // namespace farm::cli
