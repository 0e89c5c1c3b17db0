// farmctl submit RECIPE-VERSION --archs LIST: builds a verified wheel on the farm.
// farmctl submit A B C --archs LIST (or --stack FILE): a stack, built in dependency order.
//   --dry-run   print the plan (toolkit, build host, eligible workers per arch shard) only
//   --source    upload this tree or source archive instead of the recipe's source: PATH for
//               one package, NAME=PATH (repeatable) for the packages of a stack by recipe name
//   --cpu-arch, --glibc-max, --python  the wheel's CPU arch, glibc ceiling and Python
//   --wait      follow progress per arch shard, then print the wheel, its coverage and sizes
//               and where it was published; exit 0 only when the build succeeded
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/build_follower.h"
#include "cli/build_view.h"
#include "cli/command_support.h"
#include "cli/source_option.h"
#include "cli/text_table.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/client/build_client.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/files/source_tree_walk.h"
#include "libfarm/recipes/stack_file.h"
#include "libfarm/rpc/request_limits.h"
#include "libfarm/status/exit_code.h"
#include "libfarm/text/utf8.h"
#include "libfarm/units/byte_size.h"

namespace farm::cli {
namespace {

struct SubmitOptions {
  std::vector<std::string> recipes;
  std::string stack_file;
  std::string archs;
  std::vector<std::string> sources;  // --source PATH | NAME=PATH, as given
  bool dry_run = false;
  std::string cpu_arch;
  std::string glibc_max;
  std::string python;
  bool wait = false;
  double interval = 1.0;
};

// Uploads the tree under `dir` to the CAS (only what it lacks) and lists it in `files`.
absl::Status UploadTree(const GlobalOptions& global, CasClient& cas, const std::string& label,
                        const std::string& dir,
                        google::protobuf::RepeatedPtrField<farm::v1::InputFile>* files) {
  // The whole list first: a tree too large to submit is refused before anything is uploaded.
  std::vector<SourceTreeFile> walked_files;
  size_t path_bytes = 0;
  absl::Status walked = WalkSourceTree(dir, [&](const SourceTreeFile& f) -> absl::Status {
    // The farm carries paths as UTF-8 text; an escaped name would be another file.
    if (!IsValidUtf8(f.relative)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the source file '", ValidUtf8OrEscaped(f.relative), "' in ", ValidUtf8OrEscaped(dir),
          " has a name that is not UTF-8, which the farm cannot carry. Nothing was uploaded. "
          "Fix: rename it in UTF-8 (convmv -f latin1 -t utf8 --notest FILE)"));
    }
    walked_files.push_back(f);
    path_bytes += f.relative.size();
    return absl::OkStatus();
  });
  if (!walked.ok()) return walked;
  if (absl::Status s = CheckSourceListSize(dir, walked_files.size(), path_bytes); !s.ok()) return s;

  size_t sent = 0;
  for (const SourceTreeFile& f : walked_files) {
    bool uploaded = false;
    auto digest = cas.UploadFile(f.path, &uploaded);
    if (!digest.ok()) {
      return absl::Status(digest.status().code(),
                          absl::StrCat("uploading ", f.path, ": ", digest.status().message()));
    }
    sent += uploaded ? 1 : 0;
    farm::v1::InputFile* file = files->Add();
    file->set_path(f.relative);
    *file->mutable_digest() = *digest;
    file->set_executable(f.executable);
  }
  if (!global.json) {
    std::cerr << "farmctl: source " << label << dir << ": " << files->size() << " files, " << sent
              << " uploaded, the rest already in the CAS\n";
  }
  return absl::OkStatus();
}

// Uploads the archive file `path` as one blob; `sha256` is what farmctl hashed it to (and
// checked against a SHA256SUMS beside it when `listed`). The coordinator hashes it again.
absl::Status UploadArchive(const GlobalOptions& global, CasClient& cas, const std::string& label,
                           const std::string& path, const std::string& sha256, bool listed,
                           farm::v1::SourceArchive* archive) {
  bool uploaded = false;
  auto digest = cas.UploadFile(path, &uploaded);
  if (!digest.ok()) {
    return absl::Status(digest.status().code(),
                        absl::StrCat("uploading ", path, ": ", digest.status().message()));
  }
  if (digest->hash() != sha256) {  // the file changed after it was checked
    return absl::FailedPreconditionError(
        absl::StrCat(path, " changed while it was read (sha256 ", sha256, ", then ", digest->hash(),
                     "). Nothing was submitted. Fix: submit again once nothing writes to it"));
  }
  archive->set_file_name(std::filesystem::path(path).filename().string());
  *archive->mutable_digest() = *digest;
  if (!global.json) {
    std::cerr << "farmctl: source " << label << path << ": archive, "
              << FormatByteSize(static_cast<uint64_t>(digest->size_bytes())) << ", sha256 "
              << sha256 << (listed ? " as SHA256SUMS beside it lists it" : "") << ", "
              << (uploaded ? "uploaded" : "already in the CAS") << "\n";
  }
  return absl::OkStatus();
}

// The --source values, each with its package and kind, and each archive's sha256 (checked
// against a SHA256SUMS beside it when that lists it).
struct CheckedSources {
  std::vector<SourceArg> args;
  std::vector<std::string> sha256;  // "" for a tree
  std::vector<bool> listed;         // SHA256SUMS listed the archive
};

// Checks every --source (paths, kinds, names, SHA256SUMS) before anything is uploaded or
// submitted, and before the coordinator is reached.
absl::StatusOr<CheckedSources> CheckSources(const SubmitOptions& o) {
  CheckedSources out;
  auto args = ClassifySources(o.sources, o.recipes);
  if (!args.ok()) return args.status();
  out.args = *std::move(args);
  for (const SourceArg& arg : out.args) {
    bool listed = false;
    std::string sha256;
    if (arg.archive) {
      auto digest = CheckArchiveAgainstSums(arg.path, &listed);
      if (!digest.ok()) return digest.status();
      sha256 = *digest;
    }
    out.sha256.push_back(sha256);
    out.listed.push_back(listed);
  }
  return out;
}

// Uploads each checked source and puts it into `request`: the older unnamed `source` for one
// package's tree (any coordinator takes it), else `sources` by recipe name with `has_source`.
absl::Status UploadSources(const SubmitOptions& o, const GlobalOptions& global,
                           const CheckedSources& sources, farm::v1::SubmitBuildRequest& request) {
  auto target = ResolveCoordinatorTarget(ChoiceOf(global));
  if (!target.ok()) return target.status();
  auto cas = CasClient::Connect(target->address, target->token, {}, target->channel);
  request.set_has_source(true);
  const bool legacy = o.recipes.size() == 1 && o.stack_file.empty() && sources.args.size() == 1 &&
                      !sources.args.front().archive;
  if (legacy)
    return UploadTree(global, *cas, "", sources.args.front().path, request.mutable_source());
  for (size_t i = 0; i < sources.args.size(); ++i) {
    const SourceArg& arg = sources.args[i];
    farm::v1::SourceUpload* upload = request.add_sources();
    upload->set_recipe(arg.recipe);
    const std::string label = absl::StrCat(arg.recipe, "=");
    absl::Status s = arg.archive
                         ? UploadArchive(global, *cas, label, arg.path, sources.sha256[i],
                                         sources.listed[i], upload->mutable_archive())
                         : UploadTree(global, *cas, label, arg.path, upload->mutable_files());
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// One line per build of a stack: the package, its build, its state and why.
std::string StackReport(const std::vector<farm::v1::Build>& builds) {
  TextTable table({"PACKAGE", "BUILD", "STATE", "REASON"});
  for (const auto& b : builds) {
    table.AddRow({absl::StrCat(b.package(), " ", b.version()), b.id(), BuildStateName(b.state()),
                  b.reason()});
  }
  return table.Render();
}

int RunStack(const SubmitOptions& o, const GlobalOptions& global, BuildClient& client,
             const farm::v1::SubmitBuildRequest& request) {
  auto response = client.SubmitBuild(request);
  if (!response.ok()) return Fail(response.status());
  if (global.json && (o.dry_run || !o.wait)) {
    PrintJson(ProtoToJson(*response));
    return kExitOk;
  }
  const int n = response->stack_size();
  if (o.dry_run) {
    std::cout << "dry run: nothing was queued\nstack of " << n << " packages for "
              << request.archs() << ", in build order:\n";
    for (int i = 0; i < n; ++i) {
      const auto& plan = response->stack(i).plan();
      std::cout << "\n== " << i + 1 << "/" << n << " " << plan.recipe() << "-" << plan.version()
                << " ==\n"
                << PlanReport(plan);
    }
    return kExitOk;
  }
  if (!global.json) {
    std::cout << "submitted stack " << response->stack_id() << ": " << n
              << " builds, in build order\n";
    for (const auto& m : response->stack()) {
      std::vector<std::string> after;
      for (const auto& d : m.plan().build_dependencies()) {
        if (d.source() == "stack") after.push_back(d.stack_recipe());
      }
      std::cout << "  " << m.plan().recipe() << "-" << m.plan().version() << "  build "
                << m.build().id()
                << (after.empty() ? std::string()
                                  : absl::StrCat(" (after ", absl::StrJoin(after, ", "), ")"))
                << "\n";
    }
  }
  if (!o.wait) {
    std::cout << "follow them with: farmctl builds, farmctl watch ID\n";
    return kExitOk;
  }
  // Each in build order: a build waiting for an earlier one is followed after it.
  std::vector<farm::v1::Build> ended;
  for (const auto& m : response->stack()) {
    if (!global.json) std::cout << "\n" << m.plan().recipe() << "-" << m.plan().version() << ":\n";
    auto build = FollowBuild(client, m.build().id(), global, o.interval);
    if (!build.ok()) return Fail(build.status());
    ended.push_back(*build);
  }
  bool all = true;
  for (const auto& b : ended) all = all && b.state() == farm::v1::BUILD_STATE_SUCCEEDED;
  if (!global.json) {
    std::cout << "\n";
    for (const auto& b : ended) std::cout << BuildReport(b, absl::Now()) << "\n";
    std::cout << "stack " << response->stack_id() << ":\n" << StackReport(ended);
    std::vector<std::string> hints;
    for (const auto& b : ended) {
      if (const std::string hint = PipInstallHint(b); !hint.empty()) hints.push_back(hint);
    }
    if (!hints.empty()) {
      std::cout << "\ninstall them with:\n  " << absl::StrJoin(hints, "\n  ") << "\n";
    }
  }
  if (all) return kExitOk;
  std::cerr << "farmctl: stack " << response->stack_id()
            << ": not every package was built; see 'farmctl logs ID' for each failed one\n";
  return kExitFailure;
}

int RunSubmit(SubmitOptions o, const GlobalOptions& global) {
  if (!o.stack_file.empty()) {
    if (!o.recipes.empty()) {
      return Fail(absl::InvalidArgumentError(
          "both RECIPE-VERSION and --stack given. Fix: name the packages in one place"));
    }
    auto file = LoadStackFile(o.stack_file);
    if (!file.ok()) return Fail(file.status());
    o.recipes = file->packages;
    if (o.archs.empty()) o.archs = file->archs;
  }
  if (o.recipes.empty()) {
    return Fail(absl::InvalidArgumentError(
        "no package named. Fix: farmctl submit RECIPE-VERSION [RECIPE-VERSION ...] --archs LIST, "
        "or --stack FILE"));
  }
  if (o.archs.empty()) {
    return Fail(absl::InvalidArgumentError(
        "no archs given. Fix: pass --archs, e.g. --archs \"7.5;9.0;12.1\" (or archs = \"...\" in "
        "the stack file)"));
  }
  // Every --source is checked (and its archive against a SHA256SUMS beside it) before anything
  // is uploaded or submitted.
  CheckedSources sources;
  if (!o.sources.empty()) {
    auto checked = CheckSources(o);
    if (!checked.ok()) return Fail(checked.status());
    sources = *std::move(checked);
  }
  auto client = BuildClient::Connect(ChoiceOf(global));
  if (!client.ok()) return Fail(client.status());
  farm::v1::SubmitBuildRequest request;
  if (!o.sources.empty()) {
    if (absl::Status s = UploadSources(o, global, sources, request); !s.ok()) return Fail(s);
  }
  if (o.recipes.size() > 1 || !o.stack_file.empty()) {
    for (const auto& r : o.recipes) request.add_stack(r);
    request.set_archs(o.archs);
    request.set_dry_run(o.dry_run);
    request.set_cpu_arch(o.cpu_arch);
    request.set_glibc_max(o.glibc_max);
    request.set_python(o.python);
    return RunStack(o, global, **client, request);
  }
  request.set_recipe(o.recipes.front());
  request.set_archs(o.archs);
  request.set_dry_run(o.dry_run);
  request.set_cpu_arch(o.cpu_arch);
  request.set_glibc_max(o.glibc_max);
  request.set_python(o.python);
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
  cmd->add_option("RECIPE-VERSION", o->recipes,
                  "e.g. pytorch-2.9.1 (see 'farmctl recipes'); several: a stack, built in "
                  "dependency order for one arch set");
  cmd->add_option("--stack", o->stack_file,
                  "a stack file: packages = [\"pytorch-2.9.1\", ...], optional archs = \"...\"");
  cmd->add_option("--archs", o->archs,
                  "CUDA archs, e.g. \"7.5;9.0;12.1\" (TORCH_CUDA_ARCH_LIST); required unless the "
                  "stack file gives them");
  cmd->add_option("--source", o->sources,
                  "build this source instead of the recipe's: a directory (its tree is sent) or "
                  "a source archive (.tar.gz, .tgz, .tar.xz, .txz, .tar.bz2, .tbz2; checked "
                  "against a SHA256SUMS beside it); PATH for one package, NAME=PATH (repeatable) "
                  "for a package of a stack by recipe name")
      ->expected(1)
      ->allow_extra_args(false)  // one value per --source: `--source A demo-0.1.0` names a package
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
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
