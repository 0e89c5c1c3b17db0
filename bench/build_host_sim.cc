#include "bench/build_host_sim.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "bench/sleeping_worker.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/jobs/local_job_slot.h"
#include "libfarm/nvcc/farm_device_compiler.h"

namespace farm::bench {
namespace {

// A C++ compile's peak RSS on a worker: PyTorch's heavy units stay near 1 GiB.
constexpr uint64_t kHostCompileRamMib = 1024;

// The build host's cores: a local step holds one for its whole (compressed) duration. With
// priorities they are served as LocalJobSlot serves its waiters: a higher priority first.
class Cores {
 public:
  Cores(uint32_t n, bool by_priority) : by_priority_(by_priority), free_(n) {}
  void Run(absl::Duration d, JobPriority priority) {
    const int level = by_priority_ ? static_cast<int>(priority) : 0;
    {
      absl::MutexLock lock(&mu_);
      ++waiting_[level];
      Waiter waiter{this, level};
      mu_.Await(absl::Condition(&Waiter::MayStart, &waiter));
      --waiting_[level];
      --free_;
    }
    absl::SleepFor(d);
    absl::MutexLock lock(&mu_);
    ++free_;
  }

 private:
  bool MayStart(int level) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (free_ == 0) return false;
    for (int higher = level + 1; higher < kLevels; ++higher) {
      if (waiting_[higher] > 0) return false;
    }
    return true;
  }

  struct Waiter {
    Cores* cores;
    int level;
    static bool MayStart(Waiter* w) ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return w->cores->MayStart(w->level);
    }
  };

  static constexpr int kLevels = 3;  // JobPriority's
  const bool by_priority_;
  absl::Mutex mu_;
  uint32_t free_ ABSL_GUARDED_BY(mu_);
  int waiting_[kLevels] ABSL_GUARDED_BY(mu_) = {};
};

class BuildHost {
 public:
  BuildHost(const Profile& profile, const BuildHostOptions& options)
      : profile_(profile),
        options_(options),
        cores_(options.cores, options.local_priorities),
        actions_(ActionClient::Connect(options.address, options.token)),
        cas_(CasClient::Connect(options.address, options.token)),
        compiler_(actions_.get(), cas_.get()) {}

  BuildHostRun Run(const std::vector<BuildJob>& order) {
    const absl::Time start = absl::Now();
    std::atomic<size_t> next{0};
    std::vector<std::thread> ninja;
    for (uint32_t j = 0; j < options_.jobs; ++j) {
      ninja.emplace_back([&] {
        for (size_t i = next++; i < order.size(); i = next++) {
          if (i + 1 == order.size()) {
            absl::MutexLock lock(&mu_);
            run_.last_job_started = absl::Now();
          }
          RunJob(order[i]);
        }
      });
    }
    for (auto& t : ninja) t.join();
    const absl::Time compiles_done = absl::Now();
    Local(profile_.link_s, JobPriority::kOpening);
    const absl::Time end = absl::Now();
    absl::MutexLock lock(&mu_);
    run_.start = start;
    run_.end = end;
    run_.compiles_done = compiles_done;
    run_.local_busy_s = busy_s_;
    return run_;
  }

 private:
  void Local(double seconds, JobPriority priority) {
    if (seconds <= 0) return;
    cores_.Run(options_.scale.Real(seconds), priority);
    absl::MutexLock lock(&mu_);
    busy_s_ += seconds;
  }

  void RunJob(const BuildJob& job) {
    if (!job.cuda) {
      const HostTuClass& k = profile_.host_tus[job.klass];
      absl::Status s = HostCompile(absl::StrCat(k.name, "/tu-", job.tu, ".cpp"), job.tu, k.seconds,
                                   JobPriority::kOpening);
      absl::MutexLock lock(&mu_);
      ++run_.host_tus;
      if (!s.ok() && run_.failed_tus++ == 0) run_.first_error = s.ToString();
      return;
    }
    absl::Status s = RunCudaTu(profile_.cuda_tus[job.klass], job.tu);
    absl::MutexLock lock(&mu_);
    ++run_.cuda_tus;
    if (!s.ok() && run_.failed_tus++ == 0) run_.first_error = s.ToString();
  }

  // One host compile of `seconds`: here, or with farm-cc the scan here and the compile as an
  // action on the farm (shard "host", like farm-cc's).
  absl::Status HostCompile(const std::string& name, int tu, double seconds, JobPriority priority) {
    if (options_.host_scan_fraction <= 0) {
      Local(seconds, priority);
      return absl::OkStatus();
    }
    Local(seconds * options_.host_scan_fraction, priority);
    const std::string stem = absl::StrCat(options_.work_dir, "/tu-", tu, ".host");
    std::ofstream(stem + ".ii") << "// " << name << " " << options_.run_tag << "\n";
    DeviceJob job;
    job.shard = "host";
    job.script = SimulatedScript(name, seconds, kHostCompileRamMib);
    job.inputs = {{stem + ".ii", "src.ii"}};
    job.outputs = {{stem + ".o", "src.o"}};
    DeviceCompileContext context{options_.cuda_version, options_.cuda_release, options_.build_id};
    context.source_name = name;
    auto outcomes = compiler_.Compile({job}, context);
    {
      absl::MutexLock lock(&mu_);
      ++run_.host_actions;
    }
    if (!outcomes.ok()) return outcomes.status();
    if (outcomes->front().exit_code != 0) {
      return absl::AbortedError(absl::StrCat(name, " exited with ", outcomes->front().exit_code));
    }
    return absl::OkStatus();
  }

  // farm-nvcc's order (libfarm/nvcc/split_compile.cc): it asks the farm what the unit's
  // archs took before (a long unit's steps go first); the host preprocess + cudafe++ chain
  // beside the device preprocesses; the device jobs; the host compile once the first job is
  // back (HostCompileAhead), beside the rest; fatbinary after the last.
  absl::Status RunCudaTu(const CudaTuClass& k, int tu) {
    std::vector<DeviceJob> jobs;
    for (const std::string& arch : profile_.archs) {
      const std::string stem = absl::StrCat(options_.work_dir, "/tu-", tu, ".", arch);
      DeviceJob job;
      job.virtual_arch = absl::StrCat("compute_", absl::StripPrefix(arch, "sm_"));
      job.shard = arch;
      job.sms = {arch};
      const DeviceCost& cost = k.device.at(arch);
      job.script = SimulatedScript(absl::StrCat(k.name, " tu ", tu, " ", arch), cost.seconds,
                                   cost.peak_ram_mib);
      job.inputs = {{stem + ".cpp1.ii", "src.cpp1.ii"}};
      job.outputs = {{stem + ".cubin", absl::StrCat("src.", arch, ".cubin")}};
      jobs.push_back(std::move(job));
    }
    DeviceCompileContext context{options_.cuda_version, options_.cuda_release, options_.build_id};
    context.source_name = absl::StrCat(k.name, "/tu-", tu, ".cu");
    if (options_.cost_hints != nullptr) {
      // Hints are of the simulated build; the farm counts real seconds.
      if (auto hint = options_.cost_hints->SecondsFor(context.source_name)) {
        context.hinted_seconds = absl::ToDoubleSeconds(options_.scale.Real(*hint));
      }
    }
    const std::vector<double> expected = compiler_.ExpectedSeconds(jobs, context);
    // The farm answers in real seconds; kLongUnitSeconds is of the simulated build.
    const bool long_unit =
        !expected.empty() &&
        options_.scale.Sim(absl::Seconds(*std::max_element(expected.begin(), expected.end()))) >=
            kLongUnitSeconds;
    const JobPriority opening = long_unit ? JobPriority::kLongUnit : JobPriority::kOpening;
    const JobPriority closing = long_unit ? JobPriority::kLongUnit : JobPriority::kClosing;
    {
      std::vector<std::thread> lanes;
      lanes.emplace_back([&] {
        Local(k.host_preprocess_s, opening);
        Local(k.cudafe_s, opening);
      });
      for (size_t a = 0; a < profile_.archs.size(); ++a) {
        lanes.emplace_back([&] { Local(k.device_preprocess_s, opening); });
      }
      for (auto& t : lanes) t.join();
    }
    for (size_t a = 0; a < jobs.size(); ++a) {
      // The preprocessed device source: unique per TU and arch, so nothing is deduplicated;
      // all of one size, so that the farm's estimate from input sizes tells no class from
      // another (a name's length once did, by accident).
      std::ofstream(jobs[a].inputs[0].local_path)
          << absl::StrFormat("%-160s\n", absl::StrCat("// ", k.name, " tu ", tu, " ",
                                                      profile_.archs[a], " ", options_.run_tag));
    }
    std::thread host_compile;
    absl::Status host = absl::OkStatus();
    const std::string host_name = absl::StrCat(k.name, "/tu-", tu, ".cudafe1.cpp");
    context.early_job = 0;
    context.on_early_job_done = [&] {
      host_compile =
          std::thread([&] { host = HostCompile(host_name, tu, k.host_compile_s, closing); });
    };
    auto outcomes = compiler_.Compile(jobs, context);
    if (host_compile.joinable()) {
      host_compile.join();
    } else {
      // nvcc's order: the early job did not come back first
      host = HostCompile(host_name, tu, k.host_compile_s, closing);
    }
    if (!outcomes.ok()) return outcomes.status();
    if (!host.ok()) return host;
    for (size_t i = 0; i < outcomes->size(); ++i) {
      if ((*outcomes)[i].exit_code != 0) {
        return absl::AbortedError(
            absl::StrCat("tu ", tu, " ", jobs[i].shard, " exited with ", (*outcomes)[i].exit_code));
      }
    }
    Local(k.fatbinary_s, closing);
    return absl::OkStatus();
  }

  const Profile& profile_;
  const BuildHostOptions& options_;
  Cores cores_;
  std::unique_ptr<ActionClient> actions_;
  std::unique_ptr<CasClient> cas_;
  FarmDeviceCompiler compiler_;
  absl::Mutex mu_;
  BuildHostRun run_ ABSL_GUARDED_BY(mu_);
  double busy_s_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

BuildHostRun ReplayBuild(const Profile& profile, const std::vector<BuildJob>& order,
                         const BuildHostOptions& options) {
  return BuildHost(profile, options).Run(order);
}

}  // namespace farm::bench
