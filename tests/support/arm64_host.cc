#include "tests/support/arm64_host.h"

#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;

std::string Script(const std::string& name) {
  return (fs::path(FARM_SOURCE_DIR) / "scripts" / name).string();
}

absl::Status CommandFailed(const std::vector<std::string>& argv, const CommandResult& r,
                           const std::string& fix) {
  return absl::FailedPreconditionError(absl::StrCat(absl::StrJoin(argv, " "), " exited ",
                                                    r.exit_code, ": ", r.stderr_text, r.stdout_text,
                                                    " Fix: ", fix));
}

}  // namespace

absl::StatusOr<Arm64Host> Arm64Host::Create(const std::string& dir) {
  Arm64Host host;
  std::error_code ec;
  fs::create_directories(dir, ec);
  host.dir_ = fs::absolute(dir).string();
  if (!fs::exists(fs::path(FARM_SOURCE_DIR) / "build-aarch64" / "bin" / "farm-worker")) {
    return absl::FailedPreconditionError(
        "no aarch64 build in build-aarch64/bin. Fix: bash scripts/cross-build-aarch64.sh "
        "(scripts/test.sh runs it)");
  }
  // The root (and binfmt) first: the script makes what is missing and says how to fix what
  // it cannot.
  const std::vector<std::string> root = {"bash", Script("arm64-root.sh")};
  auto made = RunCommand(root, absl::Minutes(30));
  if (!made.ok()) return made.status();
  if (made->exit_code != 0) return CommandFailed(root, *made, "see the message above");

  const char* home = std::getenv("HOME");
  // With cuBLAS: bitsandbytes links it (the same prefix as bench/run_arm64_bench.sh's).
  host.toolkit_ = absl::StrCat(home == nullptr ? "/root" : home, "/.cache/wheelfarm/toolkits/",
                               kArm64ToolkitRelease, "-aarch64-cublas");
  const std::vector<std::string> install = {
      FarmBinary("farmctl"), "toolkit", "install",  kArm64ToolkitRelease, "--arch", "aarch64",
      "--libraries",         "cublas",  "--prefix", host.toolkit_};
  auto installed = RunCommand(install, absl::Minutes(20));
  if (!installed.ok()) return installed.status();
  if (installed->exit_code != 0) {
    return CommandFailed(install, *installed, "check that PyPI is reachable");
  }
  return host;
}

std::vector<std::string> Arm64Host::Command(const std::vector<std::string>& argv,
                                            bool nested_sandbox) const {
  std::vector<std::string> out = {"bash", Script("arm64-host.sh"), dir_, "--toolkit", toolkit_};
  if (nested_sandbox) out.push_back("--nested-sandbox");
  out.push_back("--");
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

absl::StatusOr<CommandResult> Arm64Host::Run(const std::vector<std::string>& argv,
                                             absl::Duration timeout) const {
  return RunCommand(Command(argv), timeout);
}

std::string Arm64Host::Outside(const std::string& inside) const {
  fs::path rel = fs::path(inside).lexically_relative("/host");
  return (fs::path(dir_) / rel).string();
}

absl::StatusOr<std::string> Arm64Host::CopyIn(const std::string& outside,
                                              const std::string& name) const {
  std::error_code ec;
  fs::copy_file(outside, fs::path(dir_) / name, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("copy ", outside, " into ", dir_, ": ", ec.message()));
  }
  return absl::StrCat("/host/", name);
}

absl::StatusOr<WorkerProcess> Arm64Host::StartWorker(const std::string& coordinator,
                                                     const std::string& token_file,
                                                     const std::string& name,
                                                     const std::vector<std::string>& extra_args,
                                                     bool sandboxed) const {
  auto token = CopyIn(token_file, name + ".token");
  if (!token.ok()) return token.status();
  std::vector<std::string> argv = {"/opt/wheelfarm/bin/farm-worker",
                                   "--coordinator",
                                   coordinator,
                                   "--token-file",
                                   *token,
                                   "--name",
                                   name,
                                   "--work-dir",
                                   absl::StrCat("/host/", name),
                                   "--cuda-path",
                                   "/opt/cuda"};
  // Unsandboxed, said explicitly and shown as such in farmctl workers: the emulated host is
  // itself a bubblewrap sandbox, and nesting one takes arm64-host.sh's --nested-sandbox.
  if (!sandboxed) argv.push_back("--no-sandbox");
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  return WorkerProcess::Spawn(Command(argv, sandboxed), absl::StrCat(dir_, "/", name, ".log"));
}

}  // namespace farm::testing
