// farmctl toolkit install|check|list: CUDA toolkits assembled from NVIDIA's PyPI wheels, for
// hosts without a system toolkit (ARM64 fleets) or with a second release beside it.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_support.h"
#include "libfarm/logging/logger.h"
#include "libfarm/toolkit/toolkit_check.h"
#include "libfarm/toolkit/toolkit_installer.h"
#include "libfarm/toolkit/toolkit_pins.h"

namespace farm::cli {
namespace {

struct ToolkitArgs {
  std::string release;
  std::string cpu_arch;
  std::string prefix;
  std::string python;
  std::string dir;
  std::vector<std::string> libraries;
};

nlohmann::json CheckJson(const ToolkitCheck& check) {
  return {{"root", check.root},       {"cpu_arch", check.cpu_arch}, {"ran_nvcc", check.ran_nvcc},
          {"version", check.version}, {"release", check.release},   {"not_run", check.not_run}};
}

// What was checked, in words: the files, and nvcc or why it did not run.
void PrintCheck(const ToolkitCheck& check) {
  std::vector<std::string> files;
  for (const ToolkitFile& f : RequiredToolkitFiles()) files.push_back(f.path);
  std::cout << "  files      " << absl::StrJoin(files, ", ") << ": present\n";
  if (check.ran_nvcc) {
    std::cout << "  nvcc       " << check.cpu_arch << ", release " << check.version << ", "
              << check.release << "\n";
  } else {
    std::cout << "  nvcc       " << check.cpu_arch << ", not run: " << check.not_run
              << "\n  (files checked only)\n";
  }
}

int Install(const CliContext& ctx, const ToolkitArgs& args) {
  auto source = PipWheelSource::Find(args.python);
  if (!source.ok()) return Fail(source.status());
  auto log = ComponentLogger("farmctl");
  auto result = InstallToolkit({.release = args.release,
                                .cpu_arch = args.cpu_arch,
                                .prefix = args.prefix,
                                .libraries = args.libraries},
                               **source, [&](absl::string_view line) { log->info("{}", line); });
  if (!result.ok()) return Fail(result.status());
  if (ctx.global.json) {
    nlohmann::json out = CheckJson(result->check);
    out["already_installed"] = result->already_installed;
    out["wheels"] = result->wheels;
    PrintJson(out);
    return 0;
  }
  std::cout << (result->already_installed ? "already installed: CUDA toolkit "
                                          : "installed CUDA toolkit ")
            << args.release << " for " << result->check.cpu_arch << " at " << result->check.root
            << "\n";
  std::cout << "  wheels     " << absl::StrJoin(result->wheels, ", ") << "\n";
  if (!args.libraries.empty()) {
    std::cout << "  libraries  " << absl::StrJoin(args.libraries, ", ") << "\n";
  }
  PrintCheck(result->check);
  std::cout << "  use it     farm-worker --cuda-path " << result->check.root << std::endl;
  return 0;
}

int Check(const CliContext& ctx, const ToolkitArgs& args) {
  auto check = CheckToolkit(args.dir, {.expect_release = args.release});
  if (!check.ok()) return Fail(check.status());
  if (ctx.global.json) {
    PrintJson(CheckJson(*check));
    return 0;
  }
  std::cout << "CUDA toolkit at " << check->root << ": complete\n";
  PrintCheck(*check);
  std::cout.flush();
  return 0;
}

int List(const CliContext& ctx) {
  if (ctx.global.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const ToolkitPin& pin : ToolkitPins()) {
      nlohmann::json wheels = nlohmann::json::object();
      for (const PinnedWheel& w : pin.wheels) wheels[w.package] = w.version;
      out.push_back({{"release", pin.release}, {"source", pin.source}, {"wheels", wheels}});
    }
    PrintJson(out);
    return 0;
  }
  for (const ToolkitPin& pin : ToolkitPins()) {
    std::vector<std::string> wheels;
    for (const PinnedWheel& w : pin.wheels)
      wheels.push_back(absl::StrCat(w.package, "==", w.version));
    std::cout << pin.release << "  (" << pin.source << ")  " << absl::StrJoin(wheels, " ") << "\n";
  }
  std::cout.flush();
  return 0;
}

}  // namespace

void AddToolkitCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<ToolkitArgs>();
  auto* toolkit =
      app.add_subcommand("toolkit", "CUDA toolkits from NVIDIA's PyPI wheels: install, check");
  toolkit->require_subcommand(1);

  auto* install = toolkit->add_subcommand(
      "install",
      "assemble the pinned nvidia-* wheels of RELEASE into --prefix and check it; a prefix "
      "already holding it returns at once");
  install->add_option("RELEASE", args->release, "nvcc release, e.g. 13.0.88 (see toolkit list)")
      ->required();
  install->add_option("--prefix", args->prefix, "the toolkit root to make (DIR/bin/nvcc)")
      ->required();
  install
      ->add_option("--arch", args->cpu_arch,
                   "CPU the toolkit runs on: x86_64 or aarch64 (default: this host's)")
      ->check(CLI::IsMember({"x86_64", "aarch64"}));
  install->add_option("--python", args->python,
                      "interpreter whose pip downloads the wheels (default: python3 on PATH)");
  install
      ->add_option("--libraries", args->libraries,
                   "CUDA libraries to add beside the compiler, for build hosts whose builds link "
                   "them (" +
                       ToolkitLibraryNames() + "; comma-separated)")
      ->delimiter(',');
  install->callback([&ctx, args] { ctx.exit_code = Install(ctx, *args); });

  auto* check = toolkit->add_subcommand(
      "check",
      "check a toolkit root: nvcc, cicc, ptxas, fatbinary, cudafe++, headers present; "
      "nvcc --version when this host can run it");
  check->add_option("DIR", args->dir, "toolkit root (DIR/bin/nvcc)")->required();
  check->add_option("--release", args->release, "nvcc must say this release, e.g. 13.0.88");
  check->callback([&ctx, args] { ctx.exit_code = Check(ctx, *args); });

  auto* list = toolkit->add_subcommand("list", "the releases toolkit install can make");
  list->callback([&ctx] { ctx.exit_code = List(ctx); });
}

}  // namespace farm::cli
