#include "libfarm/nvcc/split_compile.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/logging/logger.h"
#include "libfarm/nvcc/compile_cache.h"
#include "libfarm/nvcc/dependency_file.h"
#include "libfarm/nvcc/device_job.h"
#include "libfarm/nvcc/host_compile_ahead.h"
#include "libfarm/nvcc/line_markers.h"
#include "libfarm/nvcc/local_steps.h"
#include "libfarm/nvcc/module_id.h"
#include "libfarm/nvcc/private_temp_dir.h"
#include "libfarm/process/subprocess.h"
#include "libfarm/text/utf8.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

// A translation unit's name across checkouts and build trees: its last three path
// components ("native/cuda/Sort.cu"), so history learnt in one tree serves the next.
std::string SourceName(const std::string& path) {
  std::vector<std::string> parts;
  for (const auto& part : fs::path(path).lexically_normal()) {
    if (!part.empty() && part != "/") parts.push_back(part.string());
  }
  std::string name;
  for (size_t i = parts.size() > 3 ? parts.size() - 3 : 0; i < parts.size(); ++i) {
    if (!name.empty()) name += "/";
    name += parts[i];
  }
  // A label only (Action.history_key, a proto string): any bytes of the path escaped.
  return ValidUtf8OrEscaped(Utf8Prefix(name, 200));
}

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

// A unit that read more files than an action carries stamps for (a torch extension's: 5332
// through torch/extension.h) ran without them, so ptxas stamped its line tables with what
// the worker has at those paths: nothing. Its PTX names the few files ptxas stamps; a job
// missing any of their stamps runs again with exactly those, before fatbinary reads its
// cubins. Its stub is left alone: a host compile may already be reading it.
absl::Status RestampLineInfo(const NvccDryrun& dryrun, const std::string& cwd,
                             const DeviceCompileContext& context, DeviceCompiler& device_compiler,
                             std::vector<DeviceJob>& jobs,
                             std::vector<DeviceJobOutcome>& outcomes) {
  std::vector<size_t> again;
  std::vector<DeviceJob> again_jobs;
  for (size_t i = 0; i < jobs.size() && i < dryrun.device_groups.size(); ++i) {
    if (!HasLineInfo(jobs[i])) continue;
    const DeviceGroup& group = dryrun.device_groups[i];
    auto ptx = ReadFileContents(group.ptx_file);
    if (!ptx.ok()) return ptx.status();
    const std::vector<std::string> named = PtxSourceFiles(*ptx);
    std::vector<SourceStamp> wanted = StampsOfFiles(named, cwd, std::numeric_limits<size_t>::max());
    if (wanted.size() > kMaxSourceStamps) {
      return absl::UnimplementedError(
          absl::StrCat("not decomposable: the line info of ", jobs[i].shard, " names more than ",
                       kMaxSourceStamps, " source files, the most stamps an action carries"));
    }
    const bool stamped = std::all_of(wanted.begin(), wanted.end(), [&](const SourceStamp& w) {
      return std::any_of(jobs[i].source_stamps.begin(), jobs[i].source_stamps.end(),
                         [&](const SourceStamp& s) {
                           return s.path == w.path && s.mtime_seconds == w.mtime_seconds &&
                                  s.size_bytes == w.size_bytes;
                         });
    });
    if (stamped) continue;
    DeviceJob job = jobs[i];
    job.source_stamps = std::move(wanted);
    std::erase_if(job.outputs, [&](const DeviceJobFile& f) {
      if (f.local_path == group.ptx_file) return false;
      return std::none_of(group.cubins.begin(), group.cubins.end(),
                          [&](const auto& cubin) { return cubin.second == f.local_path; });
    });
    again.push_back(i);
    again_jobs.push_back(std::move(job));
  }
  if (again.empty()) return absl::OkStatus();
  for (const DeviceJob& job : again_jobs) {
    ComponentLogger("farm-nvcc")
        ->debug(
            "{}: its line info names files it was sent no stamps for: compiled again with "
            "the stamps of those {}",
            job.shard, job.source_stamps.size());
  }
  DeviceCompileContext restamp = context;
  restamp.early_job.reset();
  restamp.on_early_job_done = nullptr;
  auto redone = device_compiler.Compile(again_jobs, restamp);
  if (!redone.ok()) return redone.status();
  for (size_t k = 0; k < again.size(); ++k) {
    if ((*redone)[k].exit_code != 0) {
      return absl::AbortedError(absl::StrCat("device compile for ", again_jobs[k].shard,
                                             " exited with ", (*redone)[k].exit_code,
                                             " when run again with its line info's stamps"));
    }
    jobs[again[k]].source_stamps = std::move(again_jobs[k].source_stamps);
    outcomes[again[k]].worker = (*redone)[k].worker;
    outcomes[again[k]].cache_hit = (*redone)[k].cache_hit;
  }
  return absl::OkStatus();
}

// cicc names each file of its line info as the preprocessor spelled it, a relative one
// (a relative source, a header found through a relative -I) from its own working directory:
// on the worker, the scratch directory. The device source it is sent names such files from
// the call's directory `cwd` instead, as cicc run here would. A name that climbs out of the
// directory ("../src/k.cu") stays refused: ptxas reads the file's stat through it, a directory
// the worker's stand-ins (the files' stamps) do not show.
absl::Status NameRelativeFilesFrom(const std::string& preprocessed_file,
                                   const std::vector<LineMarkerFile>& read,
                                   const std::string& cwd) {
  bool relative = false;
  for (const LineMarkerFile& f : read) {
    if (f.path.empty() || f.path[0] == '/') continue;
    relative = true;
    for (const auto& part : fs::path(f.path)) {
      if (part == "..") {
        return absl::UnimplementedError(absl::StrCat(
            "not decomposable: -lineinfo with the path '", f.path,
            "', which climbs out of the working directory: the worker cannot show ptxas its "
            "stamp there"));
      }
    }
  }
  if (!relative) return absl::OkStatus();
  if (cwd.empty() || cwd[0] != '/') {
    return absl::UnimplementedError(
        "not decomposable: -lineinfo with a relative path and no working directory to name it "
        "from");
  }
  auto text = ReadFileContents(preprocessed_file);
  if (!text.ok()) return text.status();
  std::ofstream out(preprocessed_file, std::ios::binary | std::ios::trunc);
  out << LineMarkersFrom(*text, cwd);
  if (!out.flush()) {
    return absl::UnavailableError(absl::StrCat("cannot write ", preprocessed_file));
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
  if (dryrun.status().code() == absl::StatusCode::kFailedPrecondition) {
    // nvcc itself refuses the command line (an unknown option, a bad value): like a compile
    // error, plain nvcc then says why in its own words.
    return absl::AbortedError(dryrun.status().message());
  }
  if (!dryrun.ok()) return dryrun.status();
  if (absl::Status s = CheckPlan(*dryrun); !s.ok()) return s;
  auto toolkit = ToolkitOfDryrun(*dryrun);
  if (!toolkit.ok()) return toolkit.status();
  auto jobs = PlanDeviceJobs(*dryrun, temp->path());
  if (!jobs.ok()) return jobs.status();

  // Before the device jobs: the host preprocess + cudafe++ chain (it writes the module id
  // every cicc reads) and the device preprocesses, independent of one another. The chain
  // is the longer and every device job waits for it, so it gets a core of its own; the
  // device preprocesses share the others rather than slow it down.
  std::set<size_t> remote;
  for (const DeviceGroup& g : dryrun->device_groups) {
    remote.insert(g.cicc);
    remote.insert(g.ptxas.begin(), g.ptxas.end());
  }
  const size_t preprocess_lanes = std::max(2u, std::thread::hardware_concurrency()) - 1;
  std::vector<std::vector<size_t>> chains(1);
  std::vector<size_t> after;
  size_t device_preprocesses = 0;
  for (size_t i = 0; i < dryrun->steps.size(); ++i) {
    const DryrunStepKind kind = dryrun->steps[i].kind;
    if (remote.count(i) || !RunsHere(kind)) continue;
    if (kind == DryrunStepKind::kHostPreprocess || kind == DryrunStepKind::kCudafe) {
      chains[0].push_back(i);
    } else if (kind == DryrunStepKind::kDevicePreprocess) {
      const size_t lane = 1 + device_preprocesses++ % preprocess_lanes;
      if (chains.size() <= lane) chains.resize(lane + 1);
      chains[lane].push_back(i);
    } else {
      after.push_back(i);
    }
  }

  DeviceCompileContext context{toolkit->version, toolkit->release, request.build_id};
  if (request.command.inputs.size() == 1) {
    context.source_name = SourceName(request.command.inputs[0]);
    if (request.cost_hints != nullptr) {
      context.hinted_seconds = request.cost_hints->SecondsFor(context.source_name);
    }
  }
  LocalSteps local(*dryrun, request.local_jobs, request.host_compile_launcher);
  if (request.local_jobs) {
    // Its archs compile side by side on the farm: the longest of them is the unit's (0: the
    // farm has not seen it and no hint names it).
    const std::vector<double> expected = device_compiler.ExpectedSeconds(*jobs, context);
    const double longest =
        expected.empty() ? 0 : *std::max_element(expected.begin(), expected.end());
    local.set_long_unit(longest > 0 && longest >= request.long_unit_seconds);
  }
  if (absl::Status s = RunChainsInParallel(local, chains); !s.ok()) return s;
  // A unit whose module id cudafe++ made of its process id gets one made of its inputs: the
  // same bytes in every run, and device actions the action cache can answer.
  auto module_id = MakeModuleIdOfInputs(*dryrun, local, temp->path());
  if (!module_id.ok()) return module_id.status();

  // What the preprocessors read: the dependency file's list and the compile cache's.
  // nvcc's own -MD lists the device preprocesses' files first, in plan order.
  std::vector<size_t> preprocesses;
  for (const DeviceGroup& g : dryrun->device_groups) preprocesses.push_back(g.preprocess);
  for (size_t i : dryrun->StepsOfKind(DryrunStepKind::kHostPreprocess)) preprocesses.push_back(i);
  std::vector<std::vector<LineMarkerFile>> read_by_step;
  for (size_t i : preprocesses) {
    auto text = ReadFileContents(dryrun->steps[i].output);
    if (!text.ok()) return text.status();
    read_by_step.push_back(LineMarkerFiles(*text));
  }

  // With line info the cubins carry the stamps of the files the device sources were read
  // from: each job takes them along, for the worker to show where it has no such file.
  std::error_code cwd_error;
  const std::string cwd = std::filesystem::current_path(cwd_error).string();
  for (size_t i = 0; i < jobs->size() && i < dryrun->device_groups.size(); ++i) {
    if (!HasLineInfo((*jobs)[i])) continue;
    if (absl::Status s =
            NameRelativeFilesFrom(dryrun->device_groups[i].preprocessed_file, read_by_step[i], cwd);
        !s.ok()) {
      return s;
    }
    std::vector<std::string> paths;
    std::vector<std::string> device_code;
    for (const LineMarkerFile& f : read_by_step[i]) {
      paths.push_back(f.path);
      if (f.device_code) device_code.push_back(f.path);
    }
    (*jobs)[i].source_stamps = StampsOfFiles(paths, cwd, kMaxSourceStamps);
    if ((*jobs)[i].source_stamps.empty() && paths.size() > kMaxSourceStamps) {
      // More files than an action carries stamps for: those that hold device functions,
      // which its PTX names (and RestampLineInfo the host functions device code calls).
      (*jobs)[i].source_stamps = StampsOfFiles(device_code, cwd, kMaxSourceStamps);
    }
  }

  std::unique_ptr<HostCompileAhead> ahead =
      request.host_compile_ahead ? HostCompileAhead::Plan(*dryrun, *jobs, temp->path()) : nullptr;
  if (ahead) {
    context.early_job = ahead->stub_job();
    context.on_early_job_done = [&] { ahead->Start(local); };
  }
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
  if (absl::Status s = RestampLineInfo(*dryrun, cwd, context, device_compiler, *jobs, *outcomes);
      !s.ok()) {
    return s;
  }
  if (ahead) {
    auto used = ahead->Finish(local);
    if (!used.ok()) return used.status();
    if (!*used) {
      if (absl::Status s = local.Run({ahead->host_compile_step()}); !s.ok()) return s;
    }
  } else if (absl::Status s = local.Run(after); !s.ok()) {
    return s;
  }

  if (request.command.dependencies.with_compile) {
    std::ofstream out(request.command.dependencies.file, std::ios::binary | std::ios::trunc);
    out << NvccDependencyText(read_by_step, request.command.dependencies);
    if (!out.flush()) {
      return absl::UnavailableError(
          absl::StrCat("cannot write ", request.command.dependencies.file));
    }
  }

  SplitCompileResult result;
  result.module_id_of_inputs = *std::move(module_id);
  std::set<std::string> read_files;
  for (const auto& files : read_by_step) {
    for (auto& f : IncludedFiles(files, temp->path())) read_files.insert(std::move(f));
  }
  result.dependencies.assign(read_files.begin(), read_files.end());
  std::tie(result.stdout_text, result.stderr_text) = local.Printed();
  result.jobs = *std::move(jobs);
  result.outcomes = *std::move(outcomes);
  return result;
}

}  // namespace farm
