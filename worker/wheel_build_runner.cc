#include "worker/wheel_build_runner.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libfarm/cc/base_dir.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/logging/logger.h"
#include "libfarm/net/address.h"
#include "libfarm/nvcc/shell_words.h"
#include "libfarm/recipes/build_jobs.h"
#include "libfarm/recipes/build_render.h"
#include "libfarm/recipes/placeholders.h"
#include "libfarm/recipes/recipe_proto.h"
#include "libfarm/status/status_macros.h"
#include "worker/build_host_environment.h"
#include "worker/build_log_streamer.h"
#include "worker/coordinator_relay.h"
#include "worker/echoed_command.h"
#include "worker/python_interpreters.h"
#include "worker/source_archive.h"
#include "worker/wheel_prerequisites.h"
#include "worker/wheel_repair.h"

extern char** environ;

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

constexpr char kWheelOutputDir[] = "wheel";

// The build directory of one package version, held under an exclusive lock so two builds
// of the same version on this host never share it (the second gets "-2", ...).
class BuildDirectory {
 public:
  static absl::StatusOr<BuildDirectory> Acquire(const std::string& root, const std::string& name) {
    std::error_code ec;
    fs::create_directories(root, ec);
    if (ec) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create the builds directory ", root, ": ", ec.message(),
                       ". Fix: give the worker a writable --builds-dir"));
    }
    for (int n = 1; n <= 64; ++n) {
      const std::string dir = absl::StrCat(root, "/", name, n == 1 ? "" : absl::StrCat("-", n));
      const int fd = ::open((dir + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0) {
        return absl::FailedPreconditionError(
            absl::StrCat("cannot open ", dir, ".lock: ", std::strerror(errno)));
      }
      if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return BuildDirectory(dir, fd);
      ::close(fd);
    }
    return absl::ResourceExhaustedError(
        absl::StrCat("64 builds of ", name, " are running on this host"));
  }
  BuildDirectory(BuildDirectory&& other) noexcept
      : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}
  BuildDirectory& operator=(BuildDirectory&&) = delete;
  ~BuildDirectory() {
    if (fd_ < 0) return;
    std::error_code ignored;
    fs::remove_all(path_, ignored);
    fs::remove(token_path(), ignored);
    fs::remove_all(sdist_dir(), ignored);
    ::close(fd_);  // releases the lock
  }
  const std::string& path() const { return path_; }
  // Beside the directory (which RunIn empties), under the same lock: the token the build's
  // farm-nvcc uses.
  std::string token_path() const { return path_ + ".token"; }
  // Beside it too: where a pypi source's sdist or a recipe's archive is fetched to, and the
  // socket a build without network reaches the coordinator by (CoordinatorRelay removes that).
  std::string sdist_dir() const { return path_ + ".sdist"; }
  std::string relay_socket_path() const { return path_ + ".sock"; }

 private:
  BuildDirectory(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
};

bool IsSafeName(const std::string& name) {
  if (name.empty() || name[0] == '.') return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-' &&
        c != '+') {
      return false;
    }
  }
  return true;
}

std::optional<std::string> HostVariable(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// The one wheel the build left under `src` matching `pattern`.
absl::StatusOr<std::string> FindWheel(const fs::path& src, const std::string& pattern) {
  glob_t found{};
  const std::string full = (src / pattern).string();
  const int rc = ::glob(full.c_str(), 0, nullptr, &found);
  std::vector<std::string> wheels;
  if (rc == 0) {
    std::error_code ec;
    const fs::path root = fs::canonical(src, ec);
    for (size_t i = 0; i < found.gl_pathc; ++i) {
      const fs::path p(found.gl_pathv[i]);
      const fs::path real = fs::canonical(p, ec);
      // A symlink out of the tree is not the build's wheel.
      if (ec || fs::is_symlink(p) || !fs::is_regular_file(real) ||
          real.string().rfind(root.string() + "/", 0) != 0 || p.extension() != ".whl") {
        continue;
      }
      wheels.push_back(p.string());
    }
  }
  ::globfree(&found);
  if (wheels.empty()) {
    return absl::NotFoundError(
        absl::StrCat("the build command succeeded but left no wheel matching '", pattern,
                     "' in the source tree. Fix: check the recipe's build.wheel glob"));
  }
  if (wheels.size() > 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("the build left ", wheels.size(), " wheels matching '", pattern,
                     "': ", absl::StrJoin(wheels, ", "),
                     ". Fix: make the recipe's build.wheel glob match exactly one"));
  }
  return wheels.front();
}

// Writes `token` to `path`, readable by its owner only (the worker, which is also the
// sandbox's uid outside).
absl::Status WriteToken(const std::string& path, const std::string& token) {
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create ", path, ": ", std::strerror(errno),
                     ". Fix: give the worker a writable --builds-dir"));
  }
  const std::string text = token + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

void FailCompletion(farm::v1::Completion& completion, const std::string& message,
                    BuildLogStreamer* log) {
  auto* result = completion.mutable_result();
  if (result->exit_code() == 0) result->set_exit_code(1);
  result->set_stderr_tail(absl::StrCat(result->stderr_tail(), "wheelfarm: ", message, "\n"));
  if (log != nullptr) log->Note(absl::StrCat("wheelfarm: ", message, "\n"));
}

// What a build from an archive is built from, for its log and refusals.
std::string ArchiveWords(const farm::v1::WheelBuildTask& task) {
  return task.source().kind() == "pypi" ? "a PyPI sdist" : "a source archive";
}

// Adds the task's source archive, with the script that unpacks it, to the action's inputs:
// through the CAS, which so keeps the exact bytes a build was made from. A PyPI sdist or a
// recipe's archive URL is fetched into `fetch_dir` first; an archive `farmctl submit --source`
// uploaded (kind "archive" without a URL) is among the inputs already.
absl::Status AddSourceArchiveInputs(const farm::v1::WheelBuildTask& task, const std::string& python,
                                    const std::string& fetch_dir, CasClient* cas,
                                    farm::v1::Action& action, BuildLogStreamer* log) {
  const farm::v1::RecipeSource& source = task.source();
  std::optional<FetchedArchive> fetched;
  if (source.kind() == "pypi") {
    const std::string project =
        source.pypi_project().empty() ? task.recipe().package() : source.pypi_project();
    FARM_ASSIGN_OR_RETURN(
        fetched,
        FetchSdist(python,
                   SdistIndexUrl(source.pypi_index(), HostVariable("PIP_INDEX_URL").value_or("")),
                   project, task.version(), fetch_dir));
    log->Note(absl::StrCat("wheelfarm: fetched ", fetched->file, " (", fetched->size,
                           " bytes, sha256 ", fetched->sha256, " as the index lists it) from ",
                           fetched->url, "\n"));
  } else if (!source.archive_url().empty()) {
    FARM_ASSIGN_OR_RETURN(const std::string url,
                          ExpandPlaceholders(source.archive_url(), {{"version", task.version()}}));
    FARM_ASSIGN_OR_RETURN(fetched,
                          DownloadArchive(python, url, source.archive_sha256(), fetch_dir));
    log->Note(absl::StrCat(
        "wheelfarm: fetched ", fetched->file, " (", fetched->size, " bytes, sha256 ",
        fetched->sha256,
        source.archive_sha256().empty()
            ? absl::StrCat("; the recipe names no sha256, so nothing was checked: add sha256 = \"",
                           fetched->sha256, "\" to its source to pin these bytes)")
            : " as the recipe names it)",
        " from ", fetched->url, "\n"));
  } else {
    const auto uploaded = std::find_if(
        action.inputs().begin(), action.inputs().end(),
        [](const farm::v1::InputFile& in) { return in.path() == kSourceArchiveInput; });
    if (uploaded == action.inputs().end()) {
      return absl::InvalidArgumentError(
          "the build's source is an uploaded archive, but the coordinator sent none. Fix: run a "
          "coordinator of this worker's version");
    }
    log->Note(absl::StrCat("wheelfarm: the source is the archive farmctl submit --source sent (",
                           uploaded->digest().size_bytes(), " bytes, sha256 ",
                           uploaded->digest().hash(), ")\n"));
  }
  if (fetched) {
    auto archive = cas->UploadFile(fetched->path);
    if (!archive.ok()) return archive.status();
    auto* in = action.add_inputs();
    in->set_path(kSourceArchiveInput);
    *in->mutable_digest() = *archive;
  }
  const std::string_view text = SourceArchiveScript();
  auto script = cas->UploadBytes(absl::string_view(text.data(), text.size()));
  if (!script.ok()) return script.status();
  auto* in = action.add_inputs();
  in->set_path(kSourceArchiveScriptInput);
  *in->mutable_digest() = *script;
  return absl::OkStatus();
}

}  // namespace

WheelBuildRunner::WheelBuildRunner(WheelBuildOptions options, ActionRunner* runner, CasClient* cas,
                                   farm::v1::BuildService::StubInterface* builds)
    : options_(std::move(options)),
      runner_(runner),
      cas_(cas),
      builds_(builds),
      environments_(options_.builds_root + "/.envs", runner) {}

std::string WheelBuildRunner::Script(const farm::v1::WheelBuildTask& task,
                                     const std::vector<std::vector<std::string>>& steps) {
  // A failing step names itself (a build without network fails where it tried to download).
  std::string script =
      "set -e\nexec 2>&1\n"
      "wheelfarm_step_failed() { rc=$?; printf 'wheelfarm: build step %s failed (exit %s): %s\\n' "
      "\"$1\" \"$rc\" \"$2\"; exit \"$rc\"; }\n";
  if (task.source().kind() == "git") {
    std::vector<std::string> clone = {"git", "clone", "--depth", "1"};
    auto tag = ExpandPlaceholders(task.source().tag_pattern(), {{"version", task.version()}});
    if (tag.ok() && !tag->empty()) {
      clone.insert(clone.end(), {"--branch", *tag});
    }
    if (task.source().submodules()) {
      clone.insert(clone.end(), {"--recurse-submodules", "--shallow-submodules"});
    }
    clone.insert(clone.end(), {task.source().git_url(), "src"});
    AppendEchoedCommand(script, clone);
  } else if (task.source().kind() == "pypi" || task.source().kind() == "archive") {
    AppendEchoedCommand(script, UnpackArgv());  // the archive, an input (fetched or uploaded)
  }
  absl::StrAppend(&script, "cd src\n");
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string words = QuotedArgv(steps[i]);
    absl::StrAppend(&script, "printf '%s\\n' ", ShellQuote(absl::StrCat("+ ", words)), "\n", words,
                    " || wheelfarm_step_failed ",
                    ShellQuote(absl::StrCat(i + 1, " of ", steps.size())), " ", ShellQuote(words),
                    "\n");
  }
  return script;
}

std::map<std::string, std::string> WheelBuildRunner::FarmNvccEnvironment(
    const WheelBuildOptions& options, const std::string& cuda_root, const std::string& build_id,
    bool strict, bool strict_cc) {
  std::map<std::string, std::string> env = {
      // farm-nvcc fans the device compiles out under this build's id.
      {"CMAKE_CUDA_COMPILER_LAUNCHER", options.farm_nvcc},
      // torch.utils.cpp_extension writes $PYTORCH_NVCC verbatim as build.ninja's nvcc (run by
      // /bin/sh), else uses $CUDA_HOME/bin/nvcc: farm-nvcc as a launcher of this toolkit's nvcc.
      {"PYTORCH_NVCC",
       absl::StrCat(ShellQuote(options.farm_nvcc), " ", ShellQuote(cuda_root + "/bin/nvcc"))},
      {"FARM_COORDINATOR", options.coordinator},
      {"FARM_TOKEN_FILE", options.token_file},
      {"FARM_BUILD_ID", build_id},
  };
  if (!options.farm_cc.empty()) {
    // farm-cc sends the host C/C++ compiles to the farm under the same build id.
    env["CMAKE_C_COMPILER_LAUNCHER"] = options.farm_cc;
    env["CMAKE_CXX_COMPILER_LAUNCHER"] = options.farm_cc;
    if (strict_cc) env["FARM_CC_STRICT"] = "1";  // a compile kept local fails the build
  }
  for (auto& [name, value] : ClientTlsEnvironment(options.tls)) env[name] = value;
  if (strict) env["FARM_NVCC_STRICT"] = "1";  // a fallback fails the build
  return env;
}

absl::StatusOr<farm::v1::Action> WheelBuildRunner::PlanAction(const farm::v1::Lease& lease) const {
  const farm::v1::WheelBuildTask& task = lease.action().wheel_build();
  const Recipe recipe = BuildRecipeFromProto(task.recipe());
  auto archs = ParseArchList(task.archs());
  if (!archs.ok()) return archs.status();
  auto cuda = ParseToolkitVersion(task.cuda_version());
  if (!cuda.ok()) return cuda.status();
  auto root = options_.cuda_roots.find(task.cuda_version());
  if (root == options_.cuda_roots.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("this worker has no CUDA ", task.cuda_version(), " toolkit"));
  }
  const uint32_t jobs = BuildJobs(options_.cores, options_.ram_bytes, recipe.build.job_memory_gib);
  BuildValues values{.archs = *archs,
                     .cuda = *cuda,
                     .cuda_home = root->second,
                     .jobs = jobs,
                     .farm_jobs = FarmBuildJobs(options_.cores, options_.ram_bytes, jobs,
                                                task.farm_slots(), archs->requests.size()),
                     .version = task.version()};
  auto rendered = RenderBuild(recipe, values, HostVariable);
  if (!rendered.ok()) return rendered.status();

  farm::v1::Action action;
  std::vector<std::vector<std::string>> steps = rendered->prepare;
  steps.push_back(rendered->command);
  action.add_argv("/bin/sh");
  action.add_argv("-c");
  action.add_argv(Script(task, steps));
  auto& env = *action.mutable_env();
  for (auto& [name, value] : BuildHostEnvironment(environ)) env[name] = std::move(value);
  for (const std::string& entry : rendered->env) {
    const size_t eq = entry.find('=');
    env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (auto& [name, value] :
       FarmNvccEnvironment(options_, root->second, lease.action().build_id(),
                           recipe.build.strict_nvcc, recipe.build.strict_cc)) {
    env[name] = std::move(value);
  }
  // gcc, g++, cc, c++, clang, clang++ as farm-cc for builds that take no compiler launcher.
  const fs::path masquerade = fs::path(options_.farm_cc).parent_path() / "farm-cc-masquerade";
  std::error_code ec;
  if (!options_.farm_cc.empty() && fs::is_directory(masquerade, ec)) {
    env["PATH"] = absl::StrCat(masquerade.string(), ":", env["PATH"]);
  }
  *action.mutable_inputs() = lease.action().inputs();
  *action.mutable_requirements() = lease.action().requirements();
  action.set_timeout_seconds(lease.action().timeout_seconds());
  action.set_build_id(lease.action().build_id());
  return action;
}

farm::v1::Completion WheelBuildRunner::Execute(const farm::v1::Lease& lease,
                                               const std::atomic<bool>& cancel) {
  auto log = ComponentLogger("worker");
  const farm::v1::WheelBuildTask& task = lease.action().wheel_build();
  // The log goes with the build's own token: a worker token may write no build's log.
  BuildLogStreamer streamer(builds_, lease.build_token(), lease.action().build_id());
  farm::v1::Completion completion;
  completion.set_lease_id(lease.lease_id());
  completion.set_action_id(lease.action_id());

  const std::string name = absl::StrCat(task.recipe().package(), "-", task.version());
  if (!IsSafeName(name)) {
    FailCompletion(completion, absl::StrCat("refused to build '", name, "': not a plain name"),
                   &streamer);
    return completion;
  }
  auto action = PlanAction(lease);
  if (!action.ok()) {
    FailCompletion(completion, std::string(action.status().message()), &streamer);
    return completion;
  }
  auto dir = BuildDirectory::Acquire(options_.builds_root, name);
  if (!dir.ok()) {
    completion.set_infra_error(std::string(dir.status().message()));
    return completion;
  }
  log->info("build {}: building {} for {} with CUDA {} in {}", lease.action().build_id(), name,
            task.archs(), task.cuda_version(), dir->path());
  streamer.Note(absl::StrCat("wheelfarm: building ", name, " for ", task.archs(), " with CUDA ",
                             task.cuda_version(), " in ", dir->path(), "/root\n"));
  // The recipe's Python environment first: the build runs with its bin first on PATH.
  auto python = options_.pythons.find(task.recipe().python());
  if (python == options_.pythons.end()) {
    std::vector<std::string> have;
    for (const auto& [version, p] : options_.pythons) have.push_back(version);
    FailCompletion(
        completion,
        absl::StrCat("this worker has no python", task.recipe().python(), " (it has ",
                     have.empty() ? "none" : absl::StrJoin(have, ", "), "). Fix: install python",
                     task.recipe().python(), " with its venv module and restart the worker"),
        &streamer);
    return completion;
  }
  // farm-nvcc authenticates with the build token the coordinator issued for this build
  // (its device actions, compile cache and log, while the build runs), beside the build
  // directory: the worker's own token stays hidden from the build.
  if (lease.build_token().empty()) {
    FailCompletion(completion,
                   "the coordinator sent no build token with this wheel build. Fix: run a "
                   "coordinator of this worker's version (see its log for why it issued none)",
                   &streamer);
    return completion;
  }
  if (absl::Status s = WriteToken(dir->token_path(), lease.build_token()); !s.ok()) {
    completion.set_infra_error(std::string(s.message()));
    return completion;
  }
  (*action->mutable_env())["FARM_TOKEN_FILE"] = dir->token_path();
  // A PyPI sdist or a release archive is fetched here (checked against the index's or the
  // recipe's sha256) or was uploaded, and is given to the build, which then runs without network.
  const bool offline = task.source().kind() == "pypi" || task.source().kind() == "archive";
  if (offline && !runner_->sandboxed()) {
    FailCompletion(completion,
                   absl::StrCat(ArchiveWords(task),
                                " is built without network, which takes the sandbox this worker "
                                "runs without (--no-sandbox). Fix: run the worker with its sandbox "
                                "(bubblewrap)"),
                   &streamer);
    return completion;
  }
  if (offline) {
    if (absl::Status s = AddSourceArchiveInputs(task, python->second.path(), dir->sdist_dir(), cas_,
                                                *action, &streamer);
        !s.ok()) {
      FailCompletion(completion, std::string(s.message()), &streamer);
      return completion;
    }
  }
  std::map<std::string, std::string> env(action->env().begin(), action->env().end());
  // What the build sees in the sandbox besides its directory and the system: the network
  // (pip, git), its toolkit, the interpreter, farm-nvcc and its token, a private $HOME.
  SandboxMounts mounts;
  mounts.network = true;
  mounts.read_only = InterpreterPaths(python->second);
  mounts.read_only.push_back(options_.cuda_roots.at(task.cuda_version()));
  mounts.read_only.push_back(fs::path(options_.farm_nvcc).parent_path().string());
  mounts.read_only.push_back(dir->token_path());
  // farm-nvcc dials the coordinator as the worker does: over TLS it needs the CA (and, for
  // mutual TLS, the worker's client certificate and key, which the build can therefore read).
  for (const auto& [name, path] : ClientTlsEnvironment(options_.tls)) {
    mounts.read_only.push_back(path);
  }
  if (auto home = env.find("HOME"); home != env.end()) mounts.private_dirs.push_back(home->second);
  // The host's tools the worker's PATH names (CMake, ninja, git, ...) and pip's local
  // package sources.
  for (absl::string_view bin : absl::StrSplit(env["PATH"], ':', absl::SkipEmpty())) {
    mounts.read_only.emplace_back(bin);
  }
  for (std::string& source : BuildEnvironments::LocalPipSources(env)) {
    mounts.read_only.push_back(std::move(source));
  }
  BuildLogStreamer env_streamer(builds_, lease.build_token(), lease.action().build_id());
  EnvironmentRequest request{.python = python->second,
                             .recipe = BuildRecipeFromProto(task.recipe()),
                             .cuda = *ParseToolkitVersion(task.cuda_version()),  // PlanAction did
                             .cuda_home = options_.cuda_roots.at(task.cuda_version()),
                             .env = env,
                             .mounts = mounts};
  // The farm's own wheels (farm_requirements), from the coordinator's index.
  request.farm_wheels.assign(task.farm_wheels().begin(), task.farm_wheels().end());
  request.farm_index_url =
      BuildEnvironments::FarmIndexBase(task.farm_index_url(), options_.coordinator);
  if (!options_.tls.ca_file.empty()) {
    request.farm_index_ca = fs::absolute(options_.tls.ca_file).string();
  }
  PreparedEnvironment prepared;
  completion = environments_.Prepare(
      lease, request, cancel, &env_streamer,
      [&streamer](const std::string& text) { streamer.Note(text); }, &prepared);
  if (!completion.infra_error().empty() || completion.result().exit_code() != 0 || cancel.load()) {
    return completion;
  }
  // pip's cache for the build's own installs: in its scratch directory, gone with it.
  BuildEnvironments::Activate(prepared.dir,
                              (fs::path(dir->path()) / "root" / ".pip-cache").string(), env);
  // The variables the prerequisites set (NCCL_LIB_DIR, ...), pointed into the environment.
  auto variables = PrerequisiteVariables(request.recipe, {.site_packages = prepared.site_packages,
                                                          .cuda = request.cuda,
                                                          .cuda_home = request.cuda_home});
  if (!variables.ok()) {
    FailCompletion(completion, std::string(variables.status().message()), &streamer);
    return completion;
  }
  for (auto& [name, value] : *variables) {
    streamer.Note(absl::StrCat("wheelfarm: ", name, "=", value, "\n"));
    env[name] = std::move(value);
  }
  // The build's tree as farm-cc's base dir: its host objects are kept for the same sources
  // built under another builds root (another worker) too. A builds root farm-cc cannot name
  // that way only loses that.
  const std::string base_dir = (fs::path(dir->path()) / "root").string();
  if (!options_.farm_cc.empty() && cc::BaseDir::Create(base_dir).ok()) {
    env["FARM_CC_BASEDIR"] = base_dir;
  }
  // Without network, farm-nvcc and farm-cc reach the coordinator through a relayed socket.
  std::unique_ptr<CoordinatorRelay> relay;
  if (offline) {
    auto started = CoordinatorRelay::Start(dir->relay_socket_path(), options_.coordinator);
    if (!started.ok()) {
      completion.set_infra_error(std::string(started.status().message()));
      return completion;
    }
    relay = *std::move(started);
    env["FARM_COORDINATOR"] = relay->address();
    if (auto hp = ParseHostPort(options_.coordinator); hp.ok() && !options_.tls.ca_file.empty()) {
      env["FARM_TLS_SERVER_NAME"] = hp->host;  // the certificate names the coordinator's host
    }
    mounts.read_only.push_back(relay->socket_path());
    mounts.network = false;
    streamer.Note(absl::StrCat("wheelfarm: the build runs without network (its source is ",
                               ArchiveWords(task),
                               "); farm-nvcc and farm-cc reach the coordinator through a relayed "
                               "socket\n"));
  }
  action->mutable_env()->clear();
  action->mutable_env()->insert(env.begin(), env.end());
  // The environments, shared by every build on this host: read-only.
  const SandboxMounts shared = environments_.Mounts();
  mounts.read_only.insert(mounts.read_only.end(), shared.read_only.begin(), shared.read_only.end());
  completion = runner_->RunIn(lease, *action, dir->path(), cancel, &streamer, mounts);
  if (offline && completion.infra_error().empty() && completion.result().exit_code() != 0 &&
      !cancel.load()) {
    FailCompletion(
        completion,
        absl::StrCat(
            "the build ran without network, as every build of ", ArchiveWords(task),
            " does: a step that downloads (a setup.py fetching sources or wheels, pip resolving "
            "build dependencies, "
            "git) fails there; the failing step is named above. Fix: add what it needs to the "
            "recipe's [python] requirements (installed before the build), or set the package's "
            "variable that skips the download"),
        &streamer);
  }
  if (!completion.infra_error().empty() || completion.result().exit_code() != 0 || cancel.load()) {
    return completion;
  }
  auto wheel = FindWheel(fs::path(dir->path()) / "root" / "src", task.recipe().wheel_glob());
  if (!wheel.ok()) {
    FailCompletion(completion, std::string(wheel.status().message()), &streamer);
    return completion;
  }
  // Every wheel leaves through the farm's repair step (worker/wheel_repair.h): what it needs
  // beyond the manylinux policy is carried inside it, or the build fails naming it.
  WheelRepair repair(dir->path() + ".repair", &environments_, runner_);
  const std::optional<std::string> repaired =
      repair.Run(lease,
                 {.pythons = options_.pythons,
                  .recipe_python = task.recipe().python(),
                  .cuda = request.cuda,
                  .cuda_home = request.cuda_home,
                  .env = env,
                  .mounts = mounts,
                  .build_tree = (fs::path(dir->path()) / "root").string(),
                  .builds = builds_,
                  .build_token = lease.build_token()},
                 *wheel, cancel, &streamer, completion);
  if (!repaired) return completion;
  wheel = *repaired;
  auto digest = cas_->UploadFile(*wheel);
  if (!digest.ok()) {
    completion.set_infra_error(absl::StrCat("uploading the wheel: ", digest.status().message()));
    return completion;
  }
  const std::string filename = fs::path(*wheel).filename().string();
  auto* out = completion.mutable_result()->add_outputs();
  out->set_path(absl::StrCat(kWheelOutputDir, "/", filename));
  *out->mutable_digest() = *digest;
  streamer.Note(
      absl::StrCat("wheelfarm: built ", filename, " (", digest->size_bytes(), " bytes)\n"));
  return completion;
}

}  // namespace farm::worker
