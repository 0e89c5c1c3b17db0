#include "worker/build_environment.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "libfarm/files/file_lock.h"
#include "libfarm/logging/logger.h"
#include "libfarm/net/address.h"
#include "libfarm/process/output_tail.h"
#include "libfarm/recipes/farm_requirement.h"
#include "libfarm/recipes/python_environment.h"
#include "worker/echoed_command.h"
#include "worker/python_interpreters.h"
#include "worker/wheel_prerequisites.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

void Fail(farm::v1::Completion& completion, int exit_code, const std::string& text) {
  auto* result = completion.mutable_result();
  result->set_exit_code(exit_code);
  result->set_stderr_tail(absl::StrCat(result->stderr_tail(), text));
}

bool IsReady(const fs::path& env) {
  std::error_code ec;
  return fs::exists(env / "bin" / "python", ec);
}

// The step failed for a reason the worker found (not pip's): exit 1, the reason in the tail
// and the build log.
void FailStep(farm::v1::Completion& completion, const std::string& why,
              const std::function<void(const std::string&)>& note) {
  auto* result = completion.mutable_result();
  if (result->exit_code() == 0) result->set_exit_code(1);
  const std::string line = absl::StrCat("wheelfarm: the environment step failed: ", why, "\n");
  result->set_stderr_tail(absl::StrCat(result->stderr_tail(), line));
  note(line);
}

// pip installing a farm requirement's fallback into the environment at `dir`: a wheel (the
// index's wheels are what the recipe declared the CUDA release of; an sdist would build
// something else), without dependencies (the requirements' resolve adds them). With the
// recipe's index: that index only (--isolated drops the host's PIP_INDEX_URL,
// PIP_EXTRA_INDEX_URL and PIP_FIND_LINKS, whose same version may be another build); without:
// the host's own configuration is the index meant.
std::vector<std::string> FallbackInstall(const std::string& dir, const FarmWheelInstall& w) {
  std::vector<std::string> pip = {dir + "/bin/python", "-m", "pip"};
  if (!w.index_url.empty()) pip.push_back("--isolated");
  pip.insert(pip.end(), {"install", "--no-input", "--progress-bar", "off",
                         "--disable-pip-version-check", "--no-deps", "--only-binary", ":all:"});
  if (!w.index_url.empty()) pip.insert(pip.end(), {"--index-url", w.index_url});
  // "--" ends pip's options: the requirement is one argument, never read as an option.
  pip.insert(pip.end(), {"--", w.requirement});
  return pip;
}

// The recipe's prerequisites set up in the environment at `dir` (linker names, paths,
// versions), each noted in the build log.
absl::StatusOr<PreparedEnvironment> SetUpIn(const std::string& dir,
                                            const EnvironmentRequest& request,
                                            const std::function<void(const std::string&)>& note) {
  auto site_packages = SitePackagesOf(dir);
  if (!site_packages.ok()) return site_packages.status();
  auto lines = SetUpPrerequisites(
      request.recipe,
      {.site_packages = *site_packages, .cuda = request.cuda, .cuda_home = request.cuda_home});
  if (!lines.ok()) return lines.status();
  for (const std::string& line : *lines) note(absl::StrCat("wheelfarm: ", line, "\n"));
  return PreparedEnvironment{.dir = dir, .site_packages = *site_packages};
}

}  // namespace

BuildEnvironments::BuildEnvironments(std::string root, ActionRunner* runner)
    : root_(std::move(root)), runner_(runner) {}

std::string BuildEnvironments::RequirementsLine(const std::vector<std::string>& requirements) {
  std::vector<std::string> quoted;
  for (const auto& r : requirements) quoted.push_back(absl::StrCat("\"", r, "\""));
  return absl::StrCat("[python] requirements = [", absl::StrJoin(quoted, ", "), "]");
}

std::string BuildEnvironments::FailedRequirementsLine(
    const Recipe& recipe, const ToolkitVersion& cuda, const std::string& pip_output,
    const std::vector<FarmWheelInstall>& farm_wheels) {
  // pip names the requirement it could not satisfy on its ERROR lines, specifiers reordered
  // ("nvidia-nccl-cu13<2.28,>=2.27.5"): match the project name.
  std::string errors;
  for (absl::string_view line : absl::StrSplit(pip_output, '\n')) {
    if (absl::StartsWith(line, "ERROR:"))
      absl::StrAppend(&errors, absl::AsciiStrToLower(line), "\n");
  }
  std::vector<std::string> named;
  for (const FarmWheelInstall& w : farm_wheels) {
    auto project = RequirementProjectName(w.requirement);
    if (!project.ok() || !absl::StrContains(errors, absl::AsciiStrToLower(*project))) continue;
    if (w.from_package_index) {
      named.push_back(absl::StrCat(w.requirement, " from ", FallbackIndexName(w.index_url),
                                   " ([python.farm_fallback.", *project, "] in ", recipe.file,
                                   ")"));
    } else {
      named.push_back(absl::StrCat("the farm's wheel ", w.requirement, " from ", w.index_url,
                                   " (farm_requirements in ", recipe.file, ")"));
    }
  }
  for (const Prerequisite& p : recipe.prerequisites) {
    if (!p.FromWheel()) continue;
    auto wheel = PrerequisiteWheelFor(p, cuda);
    if (!wheel.ok()) continue;
    auto project = RequirementProjectName(*wheel);
    if (project.ok() && absl::StrContains(errors, absl::AsciiStrToLower(*project))) {
      named.push_back(absl::StrCat("the prerequisite ", p.name, "'s ", *wheel, " (CUDA ",
                                   cuda.ToString(), "), from ",
                                   DescribePrerequisite(p, recipe.file)));
    }
  }
  if (named.empty()) {
    return absl::StrCat("the recipe's ", RequirementsLine(recipe.python_requirements), " (",
                        recipe.file, ")");
  }
  return absl::StrJoin(named, " and ");
}

std::string BuildEnvironments::StepScript(const std::string& python, const std::string& dir,
                                          const std::vector<std::string>& requirements,
                                          const std::vector<FarmWheelInstall>& farm_wheels) {
  std::string script = "set -e\nexec 2>&1\n";
  AppendEchoedCommand(script, {python, "-m", "venv", dir});
  std::vector<std::string> all = requirements;
  for (const FarmWheelInstall& w : farm_wheels) {
    if (w.from_package_index) {
      AppendEchoedCommand(script, FallbackInstall(dir, w));
      all.push_back(w.requirement);  // installed: this resolve adds only its dependencies
      continue;
    }
    // The farm's file and no other: only its index (the pin carries the farm's whole label,
    // which no public index has), none of the host's pip sources, no sdist, no cache.
    std::vector<std::string> pip = {dir + "/bin/python",
                                    "-m",
                                    "pip",
                                    "--isolated",
                                    "install",
                                    "--no-input",
                                    "--progress-bar",
                                    "off",
                                    "--disable-pip-version-check",
                                    "--no-cache-dir",
                                    "--no-deps",
                                    "--only-binary",
                                    ":all:",
                                    "--index-url",
                                    w.index_url};
    if (!w.ca_file.empty()) pip.insert(pip.end(), {"--cert", w.ca_file});
    if (absl::StartsWith(w.index_url, "http://")) {
      // pip refuses plain HTTP beyond loopback unless told the host is trusted; the farm's
      // index is plain HTTP unless the coordinator runs TLS.
      absl::string_view host = absl::string_view(w.index_url).substr(7);
      host = host.substr(0, host.find('/'));
      pip.insert(pip.end(), {"--trusted-host", std::string(host)});
    }
    pip.push_back("--");
    pip.push_back(w.requirement);
    AppendEchoedCommand(script, pip);
    all.push_back(w.requirement);  // installed: this resolve adds only its dependencies
  }
  if (!all.empty()) {
    // "--" ends pip's options: a requirement is never read as one (--index-url=...).
    std::vector<std::string> pip = {dir + "/bin/python", "-m",  "pip", "install", "--no-input",
                                    "--progress-bar",    "off", "--"};
    pip.insert(pip.end(), all.begin(), all.end());
    AppendEchoedCommand(script, pip);
  }
  return script;
}

std::string BuildEnvironments::FarmIndexBase(const std::string& url,
                                             const std::string& coordinator) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const size_t start = scheme + 3;
  const size_t end = url.find('/', start);
  auto at = ParseHostPort(url.substr(start, end == std::string::npos ? end : end - start));
  auto dialed = ParseHostPort(coordinator);
  if (!at.ok() || !dialed.ok()) return url;
  if (at->host != "0.0.0.0" && at->host != "::" && !at->host.empty()) return url;
  return absl::StrCat(url.substr(0, start), FormatHostPort({dialed->host, at->port}),
                      end == std::string::npos ? "" : url.substr(end));
}

void BuildEnvironments::Activate(const std::string& dir, const std::string& pip_cache,
                                 std::map<std::string, std::string>& env) {
  std::vector<std::string> path = {dir + "/bin"};
  for (absl::string_view entry : absl::StrSplit(env["PATH"], ':', absl::SkipEmpty())) {
    // Another virtualenv's tools (the worker's own, say) must not leak into the build.
    if (IsVirtualenvBin(std::string(entry))) continue;
    path.emplace_back(entry);
  }
  if (path.size() == 1) path.insert(path.end(), {"/usr/local/bin", "/usr/bin", "/bin"});
  env["PATH"] = absl::StrJoin(path, ":");
  ScrubPythonVariables(pip_cache, env);
  env["VIRTUAL_ENV"] = dir;
}

void BuildEnvironments::ScrubPythonVariables(const std::string& pip_cache,
                                             std::map<std::string, std::string>& env) {
  env.erase("VIRTUAL_ENV");
  env.erase("PYTHONHOME");
  env.erase("PYTHONPATH");
  // Also over the host's own PIP_CACHE_DIR, which every build on the host would share.
  env["PIP_CACHE_DIR"] = pip_cache;
}

void BuildEnvironments::RemoveSharedPipCache() const {
  const fs::path shared = fs::path(root_) / "pip-cache";
  std::error_code ec;
  if (!fs::exists(shared, ec)) return;
  fs::remove_all(shared, ec);
  if (ec) {
    ComponentLogger("worker")->warn("cannot remove the old shared pip cache {}: {}",
                                    shared.string(), ec.message());
  }
}

std::vector<std::string> BuildEnvironments::LocalPipSources(
    const std::map<std::string, std::string>& env) {
  std::vector<std::string> paths;
  for (const char* name : {"PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"}) {
    auto it = env.find(name);
    if (it == env.end()) continue;
    // pip splits these lists on whitespace.
    for (absl::string_view item :
         absl::StrSplit(it->second, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
      if (absl::ConsumePrefix(&item, "file://") || absl::StartsWith(item, "/")) {
        paths.emplace_back(item);
      }
    }
  }
  return paths;
}

SandboxMounts BuildEnvironments::Mounts() const {
  SandboxMounts mounts;
  mounts.read_only.push_back(root_);
  return mounts;
}

farm::v1::Completion BuildEnvironments::Prepare(const farm::v1::Lease& lease,
                                                const EnvironmentRequest& request,
                                                const std::atomic<bool>& cancel,
                                                OutputFollower* follower,
                                                const std::function<void(const std::string&)>& note,
                                                PreparedEnvironment* prepared) {
  auto log = ComponentLogger("worker");
  farm::v1::Completion completion;
  completion.set_lease_id(lease.lease_id());
  completion.set_action_id(lease.action_id());
  // The [python] requirements and the wheel prerequisites for this build's toolkit.
  auto contents = EnvironmentContentsFor(request.recipe, request.cuda);
  if (!contents.ok()) {
    FailStep(completion, std::string(contents.status().message()), note);
    return completion;
  }
  std::vector<FarmWheelInstall> farm_wheels;
  bool from_farm = false;
  for (const farm::v1::FarmWheel& w : request.farm_wheels) {
    contents->farm_wheels.push_back(FarmWheelEntry(w));
    if (w.from_package_index()) {
      farm_wheels.push_back({.requirement = w.requirement(),
                             .index_url = w.package_index_url(),
                             .from_package_index = true});
      continue;
    }
    from_farm = true;
    std::string base = request.farm_index_url;
    while (absl::EndsWith(base, "/")) base.pop_back();
    farm_wheels.push_back(
        {.requirement = w.requirement(),
         .index_url = absl::StrCat(base, w.index_path()),
         .ca_file = absl::StartsWith(base, "https://") ? request.farm_index_ca : std::string()});
  }
  if (from_farm && request.farm_index_url.empty()) {
    FailStep(completion,
             "the coordinator sent farm wheels to install but no index URL (it serves no "
             "HTTP). Fix: start the coordinator with --http-listen",
             note);
    return completion;
  }
  const std::string key =
      PythonEnvironmentKey(request.python.path(), request.python.release(), *contents);
  const fs::path link = fs::path(root_) / key;
  const std::string described = absl::StrCat(
      "python", request.python.version(), " (", request.python.path(), " ",
      request.python.release(), "), requirements hash ", EnvironmentContentsHash(*contents));

  RemoveSharedPipCache();
  const std::string pip_cache = PipCacheDir(key);
  std::error_code ec;
  fs::create_directories(pip_cache, ec);
  if (ec) {
    completion.set_infra_error(absl::StrCat("cannot create ", pip_cache, ": ", ec.message(),
                                            ". Fix: give the worker a writable --builds-dir"));
    return completion;
  }
  const std::string lock_path = link.string() + ".lock";
  std::optional<FileLock> lock;
  bool waited = false;
  while (!lock) {
    auto taken = FileLock::TryAcquire(lock_path);
    if (taken.ok()) {
      lock.emplace(std::move(*taken));
      break;
    }
    if (taken.status().code() != absl::StatusCode::kUnavailable) {
      completion.set_infra_error(std::string(taken.status().message()));
      return completion;
    }
    if (cancel.load()) {
      Fail(completion, 130, "wheelfarm: cancelled while waiting for the environment\n");
      return completion;
    }
    if (!waited) {
      note(absl::StrCat("wheelfarm: waiting for another build making the environment ",
                        link.string(), "\n"));
      waited = true;
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
  if (IsReady(link)) {
    note(absl::StrCat("wheelfarm: environment ", link.string(), ": ", described, ", reused\n"));
    // Checked on every use: what the build reads must still be there.
    auto ready = SetUpIn(link.string(), request, note);
    if (!ready.ok()) {
      FailStep(completion,
               absl::StrCat(ready.status().message(), " (in the cached environment ", link.string(),
                            "; remove it to make it again)"),
               note);
      return completion;
    }
    *prepared = *ready;
    return completion;
  }

  // Left by a step that crashed with the worker: nothing uses them (no link points there).
  for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(key + ".", 0) == 0 && name != key + ".lock") {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
  fs::remove(link, ec);  // a link to an environment someone deleted

  std::string temp = absl::StrCat(link.string(), ".XXXXXX");
  if (::mkdtemp(temp.data()) == nullptr) {
    completion.set_infra_error(absl::StrCat("cannot create ", temp, ": ", std::strerror(errno)));
    return completion;
  }
  const fs::path base(temp);
  const fs::path made = base / "env";
  note(absl::StrCat("wheelfarm: making the build environment ", link.string(), ": ", described,
                    "\n"));
  for (size_t i = 0; i < farm_wheels.size(); ++i) {
    const farm::v1::FarmWheel& w = request.farm_wheels[i];
    note(w.from_package_index()
             ? absl::StrCat("wheelfarm: farm requirement ", w.requirement(), " from ",
                            FallbackIndexName(w.package_index_url()), ", wheels built for CUDA ",
                            w.cuda_version(), " (", w.origin(), ")\n")
             : absl::StrCat("wheelfarm: farm requirement ", farm_wheels[i].requirement,
                            " from the farm's index ", farm_wheels[i].index_url, " (", w.origin(),
                            ")\n"));
  }
  farm::v1::Action step;
  step.add_argv("/bin/sh");
  step.add_argv("-c");
  step.add_argv(
      StepScript(request.python.path(), made.string(), contents->requirements, farm_wheels));
  std::map<std::string, std::string> env = request.env;
  ScrubPythonVariables(pip_cache, env);
  env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1";
  step.mutable_env()->insert(env.begin(), env.end());
  step.set_timeout_seconds(lease.action().timeout_seconds());
  step.set_build_id(lease.action().build_id());
  SandboxMounts mounts = request.mounts;
  mounts.writable.push_back(base.string());
  mounts.writable.push_back(pip_cache);
  completion = runner_->RunIn(lease, step, base.string(), cancel, follower, mounts);

  const bool ok = completion.infra_error().empty() && completion.result().exit_code() == 0 &&
                  !cancel.load() && IsReady(made);
  if (!ok) {
    const bool venv_made = IsReady(made);
    fs::remove_all(base, ec);
    if (!completion.infra_error().empty() || cancel.load()) return completion;
    auto* result = completion.mutable_result();
    if (result->exit_code() == 0) result->set_exit_code(1);
    // The step merges stderr into stdout: pip's message is at the end of it.
    const std::string output = TailLines(result->stdout_tail(), 20);
    const std::string why =
        venv_made ? absl::StrCat("pip could not install ",
                                 FailedRequirementsLine(request.recipe, request.cuda,
                                                        result->stdout_tail(), farm_wheels),
                                 ". Fix: correct the requirement in the recipe, or make it "
                                 "installable from this host's package index (PIP_INDEX_URL)")
                  : absl::StrCat("could not make a virtualenv with ", request.python.path(),
                                 ". Fix: install python", request.python.version(),
                                 "-venv (or the venv module) on this host");
    result->set_stderr_tail(absl::StrCat(output, output.empty() ? "" : "\n",
                                         "wheelfarm: the environment step "
                                         "failed: ",
                                         why, "\n"));
    note(absl::StrCat("wheelfarm: the environment step failed: ", why, "\n"));
    return completion;
  }
  // Its prerequisites in place before anyone can use it: a failure leaves nothing cached.
  if (auto ready = SetUpIn(made.string(), request, note); !ready.ok()) {
    fs::remove_all(base, ec);
    FailStep(completion, std::string(ready.status().message()), note);
    return completion;
  }
  // The step's own files go; its output stays beside the environment for whoever wonders.
  fs::remove_all(base / "root", ec);
  fs::rename(base / "stdout", base / "made.log", ec);
  fs::remove(base / "stderr", ec);
  // Publish: a new symlink renamed over <key> (atomic), pointing at <key>.XXXXXX/env.
  const fs::path staged = base.string() + ".link";
  fs::create_directory_symlink(fs::path(base.filename()) / "env", staged, ec);
  if (!ec) fs::rename(staged, link, ec);
  if (ec) {
    completion.set_infra_error(
        absl::StrCat("cannot publish the environment ", link.string(), ": ", ec.message()));
    std::error_code ignored;
    fs::remove(staged, ignored);
    fs::remove_all(base, ignored);
    return completion;
  }
  log->info("build {}: made environment {} ({})", lease.action().build_id(), link.string(),
            described);
  // {site_packages} through the published name, as the build sees the environment.
  auto site_packages = SitePackagesOf(link.string());
  if (!site_packages.ok()) {
    completion.set_infra_error(std::string(site_packages.status().message()));
    return completion;
  }
  *prepared = {.dir = link.string(), .site_packages = *site_packages};
  return completion;
}

}  // namespace farm::worker
