#include "libfarm/nvcc/farm_device_compiler.h"

#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "libfarm/actions/action_logs.h"
#include "libfarm/logging/logger.h"

namespace farm {
namespace {

// Long device compiles exist (CUTLASS instantiations take many minutes); an hour matches the
// coordinator's default and still ends a hung cicc.
constexpr uint32_t kDeviceActionTimeoutSeconds = 3600;

}  // namespace

std::string DeviceJobHistoryKey(const std::string& source_name, const DeviceJob& job) {
  return absl::StrCat(source_name, " ", job.shard);
}

farm::v1::Action DeviceJobAction(const DeviceJob& job, const DeviceCompileContext& context,
                                 const std::vector<farm::v1::Digest>& input_digests) {
  farm::v1::Action action;
  action.add_argv("/bin/sh");
  action.add_argv("-c");
  action.add_argv(job.script);
  (*action.mutable_env())["PATH"] = "/usr/bin:/bin";
  (*action.mutable_env())["LC_ALL"] = "C";
  for (size_t i = 0; i < job.inputs.size(); ++i) {
    auto* in = action.add_inputs();
    in->set_path(job.inputs[i].name);
    *in->mutable_digest() = input_digests[i];
  }
  for (const auto& out : job.outputs) action.add_output_paths(out.name);
  auto* req = action.mutable_requirements();
  req->set_os("linux");
  req->set_cuda_version(context.cuda_version);
  // No cpu_arch: a device compile of an aarch64 build host may run on an x86_64 worker.
  req->set_cuda_release(context.cuda_release);
  for (const auto& sm : job.sms) req->add_sms(sm);
  action.set_timeout_seconds(kDeviceActionTimeoutSeconds);
  action.set_build_id(context.build_id);
  action.set_shard(job.shard);
  if (!context.source_name.empty()) {
    action.set_history_key(DeviceJobHistoryKey(context.source_name, job));
  }
  if (context.hinted_seconds) action.set_expected_seconds(*context.hinted_seconds);
  for (const SourceStamp& stamp : job.source_stamps) {
    auto* s = action.add_source_stamps();
    s->set_path(stamp.path);
    s->set_mtime_seconds(stamp.mtime_seconds);
    s->set_size_bytes(stamp.size_bytes);
  }
  return action;
}

absl::StatusOr<DeviceJobOutcome> FarmDeviceCompiler::Collect(const DeviceJob& job,
                                                             const farm::v1::ActionStatus& st) {
  if (st.state() != farm::v1::ACTION_STATE_COMPLETED) {
    return absl::UnavailableError(
        absl::StrCat("device action ", st.action_id(), " for ", job.shard,
                     " did not run: ", st.error().empty() ? "cancelled" : st.error()));
  }
  const farm::v1::ActionResult& r = st.result();
  DeviceJobOutcome outcome;
  outcome.exit_code = r.exit_code();
  outcome.worker = r.worker();
  outcome.cache_hit = r.cache_hit();
  if (!r.cache_hit()) outcome.farm_phases = r.phases();
  auto out = ActionLogText(cas_, r.stdout_digest(), r.stdout_tail());
  if (!out.ok()) return out.status();
  auto err = ActionLogText(cas_, r.stderr_digest(), r.stderr_tail());
  if (!err.ok()) return err.status();
  outcome.stdout_text = *std::move(out);
  outcome.stderr_text = *std::move(err);
  if (outcome.exit_code != 0) return outcome;
  std::map<std::string, farm::v1::Digest> by_name;
  for (const auto& o : r.outputs()) by_name[o.path()] = o.digest();
  for (const auto& file : job.outputs) {
    auto it = by_name.find(file.name);
    if (it == by_name.end()) {
      return absl::DataLossError(
          absl::StrCat("device action ", st.action_id(), " returned no '", file.name, "'"));
    }
    if (absl::Status s = cas_->DownloadToFile(it->second, file.local_path); !s.ok()) return s;
  }
  return outcome;
}

std::vector<double> FarmDeviceCompiler::ExpectedSeconds(const std::vector<DeviceJob>& jobs,
                                                        const DeviceCompileContext& context) {
  // Without history, what the build's hints say (0: nothing known).
  std::vector<double> hinted(jobs.size(), context.hinted_seconds.value_or(0));
  if (context.source_name.empty()) return hinted;
  std::vector<std::string> keys;
  for (const DeviceJob& job : jobs) keys.push_back(DeviceJobHistoryKey(context.source_name, job));
  auto seconds = actions_->GetExpectedCosts(keys);
  if (!seconds.ok() || seconds->size() != jobs.size()) {
    // Only the order of the build host's work depends on it.
    ComponentLogger("farm-nvcc")
        ->debug("expected costs: {}", seconds.ok() ? "an answer per job missing"
                                                   : std::string(seconds.status().message()));
    return hinted;
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    if ((*seconds)[i] <= 0) (*seconds)[i] = hinted[i];
  }
  return *std::move(seconds);
}

absl::StatusOr<std::vector<DeviceJobOutcome>> FarmDeviceCompiler::Compile(
    const std::vector<DeviceJob>& jobs, const DeviceCompileContext& context) {
  // The early job goes first: the coordinator hands out a build's actions in order.
  std::vector<size_t> order;
  if (context.early_job && *context.early_job < jobs.size()) order.push_back(*context.early_job);
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (order.empty() || order.front() != i) order.push_back(i);
  }
  std::map<std::string, farm::v1::Digest> uploaded;  // local path -> digest
  std::vector<farm::v1::Action> actions;
  for (size_t i : order) {
    std::vector<farm::v1::Digest> digests;
    for (const auto& in : jobs[i].inputs) {
      auto it = uploaded.find(in.local_path);
      if (it == uploaded.end()) {
        auto digest = cas_->UploadFile(in.local_path);
        if (!digest.ok()) return digest.status();
        it = uploaded.emplace(in.local_path, *digest).first;
      }
      digests.push_back(it->second);
    }
    actions.push_back(DeviceJobAction(jobs[i], context, digests));
  }
  auto submitted = actions_->Execute(actions);
  if (!submitted.ok()) return submitted.status();
  std::vector<std::string> ids(jobs.size());
  for (size_t k = 0; k < order.size(); ++k) ids[order[k]] = (*submitted)[k].action_id();
  const absl::Duration timeout = absl::Seconds(kDeviceActionTimeoutSeconds + 600);

  std::vector<std::optional<DeviceJobOutcome>> outcomes(jobs.size());
  if (context.early_job && *context.early_job < jobs.size()) {
    const size_t early = *context.early_job;
    auto done = actions_->WaitAll({ids[early]}, timeout);
    if (!done.ok()) return done.status();
    if (done->size() != 1) return absl::DeadlineExceededError("device action did not finish");
    auto outcome = Collect(jobs[early], done->front());
    if (!outcome.ok()) return outcome.status();
    outcomes[early] = *std::move(outcome);
    if (outcomes[early]->exit_code == 0 && context.on_early_job_done) {
      context.on_early_job_done();
    }
  }
  auto done = actions_->WaitAll(ids, timeout);
  if (!done.ok()) return done.status();
  if (done->size() != jobs.size()) {
    return absl::DeadlineExceededError("device actions did not finish in time");
  }
  std::vector<DeviceJobOutcome> result;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!outcomes[i]) {
      auto outcome = Collect(jobs[i], (*done)[i]);
      if (!outcome.ok()) return outcome.status();
      outcomes[i] = *std::move(outcome);
    }
    result.push_back(*std::move(outcomes[i]));
  }
  return result;
}

}  // namespace farm
