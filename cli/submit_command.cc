// farmctl submit RECIPE-VERSION --archs LIST: builds a verified wheel on the farm.
//   --dry-run   print the plan (toolkit, build host, eligible workers per arch shard) only
//   --source    upload this tree instead of the recipe's default
//   --cpu-arch, --glibc-max, --python  the wheel's CPU arch, glibc ceiling and Python
//   --wait      follow progress per arch shard, then print the wheel, its coverage and sizes
//               and where it was published; exit 0 only when the build succeeded
#include <iostream>

#include "absl/strings/str_cat.h"
#include "cli/build_follower.h"
#include "cli/build_view.h"
#include "cli/command_support.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/client/build_client.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/files/source_tree_walk.h"
#include "libfarm/rpc/request_limits.h"
#include "libfarm/status/exit_code.h"
#include "libfarm/text/utf8.h"

namespace farm::cli {
namespace {

struct SubmitOptions {
  std::string recipe;
  std::string archs;
  std::string source;
  bool dry_run = false;
  std::string cpu_arch;
  std::string glibc_max;
  std::string python;
  bool wait = false;
  double interval = 1.0;
};

// Uploads the tree under `dir` to the CAS (only what it lacks) and lists it for the request.
absl::Status UploadSource(const GlobalOptions& global, const std::string& dir,
                          farm::v1::SubmitBuildRequest& request) {
  auto target = ResolveCoordinatorTarget(ChoiceOf(global));
  if (!target.ok()) return target.status();
  // The whole list first: a tree too large to submit is refused before anything is uploaded.
  std::vector<SourceTreeFile> files;
  size_t path_bytes = 0;
  absl::Status walked = WalkSourceTree(dir, [&](const SourceTreeFile& f) -> absl::Status {
    // The farm carries paths as UTF-8 text; an escaped name would be another file.
    if (!IsValidUtf8(f.relative)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the source file '", ValidUtf8OrEscaped(f.relative), "' in ", ValidUtf8OrEscaped(dir),
          " has a name that is not UTF-8, which the farm cannot carry. Nothing was uploaded. "
          "Fix: rename it in UTF-8 (convmv -f latin1 -t utf8 --notest FILE)"));
    }
    files.push_back(f);
    path_bytes += f.relative.size();
    return absl::OkStatus();
  });
  if (!walked.ok()) return walked;
  if (absl::Status s = CheckSourceListSize(dir, files.size(), path_bytes); !s.ok()) return s;

  auto cas = CasClient::Connect(target->address, target->token, {}, target->channel);
  size_t sent = 0;
  for (const SourceTreeFile& f : files) {
    bool uploaded = false;
    auto digest = cas->UploadFile(f.path, &uploaded);
    if (!digest.ok()) {
      return absl::Status(digest.status().code(),
                          absl::StrCat("uploading ", f.path, ": ", digest.status().message()));
    }
    sent += uploaded ? 1 : 0;
    farm::v1::InputFile* file = request.add_source();
    file->set_path(f.relative);
    *file->mutable_digest() = *digest;
    file->set_executable(f.executable);
  }
  request.set_has_source(true);
  if (!global.json) {
    std::cerr << "farmctl: source " << dir << ": " << request.source_size() << " files, " << sent
              << " uploaded, the rest already in the CAS\n";
  }
  return absl::OkStatus();
}

int RunSubmit(const SubmitOptions& o, const GlobalOptions& global) {
  auto client = BuildClient::Connect(ChoiceOf(global));
  if (!client.ok()) return Fail(client.status());
  farm::v1::SubmitBuildRequest request;
  request.set_recipe(o.recipe);
  request.set_archs(o.archs);
  request.set_dry_run(o.dry_run);
  request.set_cpu_arch(o.cpu_arch);
  request.set_glibc_max(o.glibc_max);
  request.set_python(o.python);
  if (!o.source.empty()) {
    if (absl::Status s = UploadSource(global, o.source, request); !s.ok()) return Fail(s);
  }
  auto response = (*client)->SubmitBuild(request);
  if (!response.ok()) return Fail(response.status());
  if (o.dry_run) {
    if (global.json) {
      PrintJson(ProtoToJson(response->plan()));
    } else {
      std::cout << "dry run: nothing was queued\n" << PlanReport(response->plan());
    }
    return kExitOk;
  }
  const std::string id = response->build().id();
  if (!o.wait) {
    if (global.json) {
      PrintJson(ProtoToJson(response->build()));
    } else {
      std::cout << "submitted build " << id << " (" << response->plan().package() << " "
                << response->plan().version() << " for " << response->plan().archs() << ", CUDA "
                << response->plan().cuda_version() << ")\n"
                << "follow it with: farmctl watch " << id << "\n";
    }
    return kExitOk;
  }
  if (!global.json) std::cout << "submitted build " << id << "\n";
  auto build = FollowBuild(**client, id, global, o.interval);
  if (!build.ok()) return Fail(build.status());
  if (!global.json) {
    std::cout << "\n" << BuildReport(*build, absl::Now());
    if (const std::string hint = PipInstallHint(*build); !hint.empty()) {
      std::cout << "\ninstall it with:\n  " << hint << "\n";
    }
  }
  if (build->state() == farm::v1::BUILD_STATE_SUCCEEDED) return kExitOk;
  std::cerr << "farmctl: build " << id << " " << BuildStateName(build->state()) << ": "
            << build->reason() << "\nSee 'farmctl logs " << id << "' for its output\n";
  return kExitFailure;
}

}  // namespace

void AddSubmitCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("submit", "build a verified wheel for a list of CUDA archs");
  auto o = std::make_shared<SubmitOptions>();
  cmd->add_option("RECIPE-VERSION", o->recipe, "e.g. pytorch-2.9.1 (see 'farmctl recipes')")
      ->required();
  cmd->add_option("--archs", o->archs, "CUDA archs, e.g. \"7.5;9.0;12.1\" (TORCH_CUDA_ARCH_LIST)")
      ->required();
  cmd->add_option("--source", o->source, "upload this source tree instead of the recipe's");
  cmd->add_flag("--dry-run", o->dry_run, "print the plan; queue nothing");
  cmd->add_option("--cpu-arch", o->cpu_arch,
                  "the wheel's CPU arch (aarch64, x86_64), one of the recipe's platform.cpu_archs; "
                  "default: the first an online build host offers");
  cmd->add_option("--glibc-max", o->glibc_max,
                  "replace the recipe's glibc ceiling for this build, e.g. 2.36 when the wheel's "
                  "users run newer systems (the wheel is tagged manylinux_2_NN by what it needs)");
  cmd->add_option("--python", o->python,
                  "the Python the wheel is for, e.g. 3.11 (the build host's python3.11 makes its "
                  "environment); default: the recipe's [python] version");
  cmd->add_flag("--wait", o->wait, "follow the build to its end and print the wheel");
  cmd->add_option("--interval", o->interval, "seconds between progress updates with --wait")
      ->capture_default_str();
  cmd->callback([&ctx, o] { ctx.exit_code = RunSubmit(*o, ctx.global); });
}

void AddCancelCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("cancel", "stop a build and everything it queued");
  auto id = std::make_shared<std::string>();
  cmd->add_option("ID", *id, "build id (see 'farmctl builds')")->required();
  cmd->callback([&ctx, id] {
    auto client = BuildClient::Connect(ChoiceOf(ctx.global));
    if (!client.ok()) {
      ctx.exit_code = Fail(client.status());
      return;
    }
    auto build = (*client)->CancelBuild(*id);
    if (!build.ok()) {
      ctx.exit_code = Fail(build.status());
      return;
    }
    if (ctx.global.json) {
      PrintJson(ProtoToJson(*build));
    } else {
      std::cout << "build " << *id << " " << BuildStateName(build->state()) << "\n";
    }
    ctx.exit_code = kExitOk;
  });
}

}  // namespace farm::cli
