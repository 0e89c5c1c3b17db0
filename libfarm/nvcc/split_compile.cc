#include "libfarm/nvcc/split_compile.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "libfarm/nvcc/compile_cache.h"
#include "libfarm/nvcc/device_job.h"
#include "libfarm/process/path_search.h"
#include "libfarm/process/subprocess.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

// Host steps of a large translation unit (CUTLASS, flash-attention) take minutes.
constexpr absl::Duration kStepTimeout = absl::Hours(1);

// A directory of our own for nvcc's temporaries, removed with everything in it.
class PrivateTempDir {
 public:
  static absl::StatusOr<PrivateTempDir> Create() {
    const char* base = getenv("TMPDIR");
    std::string pattern = absl::StrCat(base && *base ? base : "/tmp", "/farm-nvcc-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      return absl::UnavailableError(
          absl::StrCat("cannot create a temporary directory like ", pattern));
    }
    return PrivateTempDir(pattern);
  }
  PrivateTempDir(PrivateTempDir&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  PrivateTempDir& operator=(PrivateTempDir&&) = delete;
  ~PrivateTempDir() {
    if (path_.empty()) return;
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  explicit PrivateTempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

bool RunsHere(DryrunStepKind kind) {
  switch (kind) {
    case DryrunStepKind::kHostPreprocess:
    case DryrunStepKind::kCudafe:
    case DryrunStepKind::kDevicePreprocess:
    case DryrunStepKind::kFatbinary:
    case DryrunStepKind::kHostCompile:
      return true;
    default:
      return false;
  }
}

absl::Status CheckPlan(const NvccDryrun& dryrun) {
  for (const DryrunStep& step : dryrun.steps) {
    switch (step.kind) {
      case DryrunStepKind::kEnvironment:
      case DryrunStepKind::kHostPreprocess:
      case DryrunStepKind::kCudafe:
      case DryrunStepKind::kDevicePreprocess:
      case DryrunStepKind::kCicc:
      case DryrunStepKind::kPtxas:
      case DryrunStepKind::kFatbinary:
      case DryrunStepKind::kHostCompile:
      case DryrunStepKind::kRemove:
        break;
      default:
        return absl::UnimplementedError(absl::StrCat("not decomposable: nvcc plans a ",
                                                     DryrunStepKindName(step.kind), " step"));
    }
    if (!step.stdout_redirect.empty() || !step.stderr_redirect.empty()) {
      return absl::UnimplementedError("not decomposable: nvcc redirects a step's output");
    }
  }
  if (dryrun.device_groups.empty() || !dryrun.fatbinary) {
    return absl::UnimplementedError("not decomposable: no device code to split");
  }
  return absl::OkStatus();
}

// "13.0" from the -D__CUDACC_VER_MAJOR__/MINOR__ nvcc gives its host steps.
absl::StatusOr<std::string> ToolkitVersion(const NvccDryrun& dryrun) {
  std::string major, minor;
  for (const DryrunStep& step : dryrun.steps) {
    for (const std::string& word : step.argv) {
      absl::string_view w = word;
      if (absl::ConsumePrefix(&w, "-D__CUDACC_VER_MAJOR__=")) major = std::string(w);
      if (absl::ConsumePrefix(&w, "-D__CUDACC_VER_MINOR__=")) minor = std::string(w);
    }
    if (!major.empty() && !minor.empty()) return absl::StrCat(major, ".", minor);
  }
  return absl::UnimplementedError("not decomposable: nvcc --dryrun names no toolkit version");
}

// Runs nvcc's steps on this host with the environment nvcc gives them.
class LocalSteps {
 public:
  explicit LocalSteps(const NvccDryrun& dryrun) : dryrun_(dryrun) {
    for (const auto& [name, value] : dryrun.environment) {
      env_.push_back(absl::StrCat(name, "=", value));
      if (name == "PATH") path_ = value;
    }
  }

  // Runs steps in order and records what they print; stops at the first failure.
  absl::Status Run(const std::vector<size_t>& steps) {
    for (size_t index : steps) {
      std::vector<std::string> argv = ExpandedArgv(dryrun_, dryrun_.steps[index]);
      argv[0] = Resolve(argv[0]);
      auto run = RunCommand(argv, kStepTimeout, env_);
      if (!run.ok()) return run.status();
      Record(index, run->stdout_text, run->stderr_text);
      if (run->exit_code != 0) {
        return absl::AbortedError(
            absl::StrCat(dryrun_.steps[index].tool, " exited with ", run->exit_code));
      }
    }
    return absl::OkStatus();
  }

  void Record(size_t index, std::string out, std::string err) {
    absl::MutexLock lock(&mu_);
    printed_[index] = {std::move(out), std::move(err)};
  }

  // Everything printed, in plan order.
  void Collect(SplitCompileResult& result) {
    absl::MutexLock lock(&mu_);
    for (const auto& [index, texts] : printed_) {
      result.stdout_text += texts.first;
      result.stderr_text += texts.second;
    }
  }

 private:
  // nvcc runs its tools through the PATH it sets; RunCommand searches ours.
  std::string Resolve(const std::string& tool) const {
    return FindOnPath(tool, path_).value_or(tool);
  }

  const NvccDryrun& dryrun_;
  std::vector<std::string> env_;
  std::string path_;
  absl::Mutex mu_;
  std::map<size_t, std::pair<std::string, std::string>> printed_ ABSL_GUARDED_BY(mu_);
};

// Runs each chain of steps on its own thread; returns the first failure.
absl::Status RunChainsInParallel(LocalSteps& local,
                                 const std::vector<std::vector<size_t>>& chains) {
  std::vector<absl::Status> results(chains.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < chains.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = local.Run(chains[i]); });
  }
  for (auto& t : threads) t.join();
  for (const auto& s : results) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SplitCompileResult> SplitCompile(const SplitCompileRequest& request,
                                                DeviceCompiler& device_compiler) {
  auto temp = PrivateTempDir::Create();
  if (!temp.ok()) return temp.status();
  auto dryrun = RunNvccDryrun(request.nvcc, request.command.args_without_dependencies, "",
                              absl::Seconds(60), temp->path());
  if (!dryrun.ok()) return dryrun.status();
  if (absl::Status s = CheckPlan(*dryrun); !s.ok()) return s;
  auto cuda_version = ToolkitVersion(*dryrun);
  if (!cuda_version.ok()) return cuda_version.status();
  auto jobs = PlanDeviceJobs(*dryrun, temp->path());
  if (!jobs.ok()) return jobs.status();

  // Before the device jobs: the host preprocess + cudafe++ chain (it writes the module id
  // every cicc reads) and each device preprocess, all independent of one another.
  std::set<size_t> remote;
  for (const DeviceGroup& g : dryrun->device_groups) {
    remote.insert(g.cicc);
    remote.insert(g.ptxas.begin(), g.ptxas.end());
  }
  std::vector<std::vector<size_t>> chains(1);
  std::vector<size_t> after;
  for (size_t i = 0; i < dryrun->steps.size(); ++i) {
    const DryrunStepKind kind = dryrun->steps[i].kind;
    if (remote.count(i) || !RunsHere(kind)) continue;
    if (kind == DryrunStepKind::kHostPreprocess || kind == DryrunStepKind::kCudafe) {
      chains[0].push_back(i);
    } else if (kind == DryrunStepKind::kDevicePreprocess) {
      chains.push_back({i});
    } else {
      after.push_back(i);
    }
  }

  LocalSteps local(*dryrun);
  absl::Status dependencies_written = absl::OkStatus();
  std::thread dependencies;
  if (request.command.dependencies.with_compile) {
    // nvcc filters -MD output inside itself; nvcc -M writes the very same file.
    dependencies = std::thread([&] {
      std::vector<std::string> argv = {request.nvcc};
      for (auto& a : DependencyOnlyArgs(request.command)) argv.push_back(std::move(a));
      auto run = RunCommand(argv, kStepTimeout, {"TMPDIR=" + temp->path()});
      if (!run.ok()) {
        dependencies_written = run.status();
      } else if (run->exit_code != 0) {
        dependencies_written =
            absl::AbortedError(absl::StrCat("nvcc -M exited with ", run->exit_code));
      }
    });
  }
  absl::Status prepared = RunChainsInParallel(local, chains);
  if (dependencies.joinable()) dependencies.join();
  if (!prepared.ok()) return prepared;
  if (!dependencies_written.ok()) return dependencies_written;

  DeviceCompileContext context{*cuda_version, request.build_id};
  auto outcomes = device_compiler.Compile(*jobs, context);
  if (!outcomes.ok()) return outcomes.status();
  for (size_t i = 0; i < outcomes->size(); ++i) {
    const DeviceJobOutcome& o = (*outcomes)[i];
    local.Record(dryrun->device_groups[i].cicc, o.stdout_text, o.stderr_text);
    if (o.exit_code != 0) {
      return absl::AbortedError(
          absl::StrCat("device compile for ", (*jobs)[i].shard, " exited with ", o.exit_code));
    }
  }
  if (absl::Status s = local.Run(after); !s.ok()) return s;

  SplitCompileResult result;
  std::set<std::string> read_files;
  for (size_t i = 0; i < dryrun->steps.size(); ++i) {
    const DryrunStep& step = dryrun->steps[i];
    if (step.kind != DryrunStepKind::kHostPreprocess &&
        step.kind != DryrunStepKind::kDevicePreprocess) {
      continue;
    }
    std::ifstream in(step.output, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    for (auto& f : IncludedFiles(text.str(), temp->path())) read_files.insert(std::move(f));
  }
  result.dependencies.assign(read_files.begin(), read_files.end());
  local.Collect(result);
  result.jobs = *std::move(jobs);
  result.outcomes = *std::move(outcomes);
  return result;
}

}  // namespace farm
