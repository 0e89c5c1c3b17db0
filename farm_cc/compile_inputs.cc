#include "farm_cc/compile_inputs.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "farm_cc/locale_files.h"
#include "libfarm/cc/file_tree_builder.h"
#include "libfarm/cc/include_probes.h"
#include "libfarm/digest/digest.h"
#include "libfarm/file_tree/subtrees.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

absl::Status Local(const std::string& why) { return absl::FailedPreconditionError(why); }

// GCC takes two `#pragma once` headers with the same size, mtime and bytes for one file
// (torch ships such copies with one mtime). The worker shows every file with mtime 0 but
// byte-identical files whose mtimes differ here: each gets the rank of its mtime among them.
void DistinguishCopiesByMtime(farm::v1::FileTree& tree) {
  std::map<std::string, std::vector<farm::v1::InputFile*>> by_content;
  for (farm::v1::InputFile& f : *tree.mutable_files()) {
    if (f.symlink_target().empty()) by_content[f.digest().hash()].push_back(&f);
  }
  for (auto& [hash, copies] : by_content) {
    if (copies.size() < 2) continue;
    std::map<int64_t, std::vector<farm::v1::InputFile*>> by_mtime;
    for (farm::v1::InputFile* f : copies) {
      struct stat st {};
      const int64_t mtime = ::stat(("/" + f->path()).c_str(), &st) == 0 ? st.st_mtime : 0;
      by_mtime[mtime].push_back(f);
    }
    int64_t rank = 0;
    for (auto& [mtime, files] : by_mtime) {
      for (farm::v1::InputFile* f : files) f->set_mtime_seconds(rank);
      ++rank;
    }
  }
}

// The tree of `dependencies` and every header their includes may find. With
// `from_includes`, `dependencies` is only the source: the tree is then what its includes reach,
// and a file with an include farm-cc cannot follow fails it (the caller scans instead).
absl::StatusOr<CompileInputs> Gather(const CcInvocation& call, const cc::CcCompilePlan& plan,
                                     const std::vector<std::string>& dependencies,
                                     const std::vector<std::string>& search_dirs,
                                     const std::map<std::string, std::string>& env,
                                     const std::string& cwd, cc::FileFactsCache* facts,
                                     bool from_includes) {
  // The command line's directories and the compiler's built-in ones: a header that appears in
  // any of them later changes the tree, which is what lets a kept scan stand (scan_cache.h).
  std::vector<std::string> probe_dirs = plan.include_dirs;
  probe_dirs.insert(probe_dirs.end(), search_dirs.begin(), search_dirs.end());
  cc::FileTreeBuilder inputs(facts);
  for (const std::string& path : dependencies) {
    if (absl::Status s = inputs.Add(path, cwd); !s.ok()) {
      return Local(absl::StrCat("input '", path, "': ", s.message()));
    }
  }
  // What GCC's -M leaves out but the compile still looks for (__has_include probes, a
  // #pragma once header reached by a second path).
  bool precompiled = false;
  if (absl::Status s =
          cc::AddIncludedHeaders(inputs, probe_dirs, cwd, from_includes ? &precompiled : nullptr);
      !s.ok()) {
    return Local(absl::StrCat("include probes: ", s.message()));
  }
  // GCC reads stdc-predef.h before the source, looked up like <stdc-predef.h>, with no
  // #include naming it: a source without includes would otherwise reach a worker with no
  // include directory at all ("no include path in which to search for stdc-predef.h").
  for (const std::string& dir : probe_dirs) {
    const std::string predef = (fs::path(cwd) / dir / "stdc-predef.h").lexically_normal().string();
    std::error_code ec;
    if (!fs::is_regular_file(predef, ec)) continue;
    if (absl::Status s = inputs.Add(predef, cwd); !s.ok()) {
      return Local(absl::StrCat("input '", predef, "': ", s.message()));
    }
  }
  if (from_includes && !inputs.first_unread_include_file().empty()) {
    return Local(absl::StrCat(inputs.first_unread_include_file(),
                              " may look a header up by a name farm-cc cannot read (#include "
                              "MACRO)"));
  }
  if (precompiled) return Local("a precompiled header (.gch) lies where a header is looked up");
  for (const std::string& path : LocaleFiles(env)) {
    if (absl::Status s = inputs.Add(path, cwd); !s.ok()) return s;
  }
  if (inputs.mentions_time_macros()) {
    return Local("__DATE__/__TIME__/__TIMESTAMP__ in its sources: the object differs per run");
  }

  // The tree carries no empty directory: an -I directory the compile reads nothing from is
  // missing on the worker, which -Wmissing-include-dirs would report there only.
  const bool warns_missing_dirs = std::any_of(call.args.begin(), call.args.end(), [](auto& a) {
    return absl::StrContains(a, "missing-include-dirs") && !absl::StartsWith(a, "-Wno-");
  });
  if (warns_missing_dirs) {
    const std::set<std::string> dirs = inputs.Directories();
    for (const std::string& dir : plan.include_dirs) {
      const std::string absolute = (fs::path(cwd) / dir).lexically_normal().string();
      std::error_code ec;
      if (fs::is_directory(absolute, ec) && dirs.count(absolute) == 0) {
        return Local(absl::StrCat("-Wmissing-include-dirs and -I", dir,
                                  ", which holds nothing the compile reads"));
      }
    }
  }

  farm::v1::FileTree input_tree = inputs.Tree();
  DistinguishCopiesByMtime(input_tree);
  // Directories a path walks through and leaves by '..' with nothing read below them
  // (nvcc's -I.../cuda/bin/../targets/...): made on the worker as they are.
  for (const std::string& dir : inputs.DirectoriesWithoutEntries()) {
    auto* entry = input_tree.add_files();
    entry->set_path(dir.substr(1));
    entry->set_directory(true);
  }
  CompileInputs gathered;
  SplitFileTree split = SplitIntoSubtrees(input_tree);
  gathered.bytes = std::move(split.root_bytes);
  gathered.digest = std::move(split.root);
  gathered.subtrees = std::move(split.subtrees);
  gathered.tree = std::move(input_tree);
  return gathered;
}

}  // namespace

absl::StatusOr<CompileInputs> GatherCompileInputs(const CcInvocation& call,
                                                  const cc::CcCompilePlan& plan,
                                                  const std::vector<std::string>& dependencies,
                                                  const std::vector<std::string>& search_dirs,
                                                  const std::map<std::string, std::string>& env,
                                                  const std::string& cwd,
                                                  cc::FileFactsCache* facts) {
  return Gather(call, plan, dependencies, search_dirs, env, cwd, facts, /*from_includes=*/false);
}

absl::StatusOr<CompileInputs> GatherCompileInputsFromIncludes(
    const CcInvocation& call, const cc::CcCompilePlan& plan,
    const std::vector<std::string>& search_dirs, const std::map<std::string, std::string>& env,
    const std::string& cwd, cc::FileFactsCache* facts) {
  for (const std::string& arg : plan.scan_base_args) {
    // Files the command line makes the compile read, found by rules of their own.
    for (absl::string_view option : {"-include", "--include", "-imacros", "-finput-charset"}) {
      if (absl::StartsWith(arg, option)) return Local(absl::StrCat(arg, " on the command line"));
    }
  }
  return Gather(call, plan, {plan.source}, search_dirs, env, cwd, facts, /*from_includes=*/true);
}

}  // namespace farm
