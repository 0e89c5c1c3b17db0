// A build recipe: how to turn a package version plus a CUDA arch list into a wheel. Loaded
// from recipes/*.toml (recipe_loader.h); plain data, checked when loaded.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/elf/version_needs.h"
#include "libfarm/recipes/farm_requirement.h"
#include "libfarm/recipes/prerequisite.h"

namespace farm {

// Where a version's source tree comes from.
struct RecipeSource {
  enum class Kind { kGit, kUpload, kPypi, kArchive };
  Kind kind = Kind::kGit;
  std::string git_url;      // kGit
  std::string tag_pattern;  // kGit: "v{version}"
  bool submodules = false;  // kGit: clone with --recursive
  // kPypi: the project whose source distribution (`<project>==<version>`, sha256-checked from
  // the index's hash) is built, offline: its build step runs without network.
  std::string pypi_project;
  // kPypi: the PEP 503 index to take it from; empty: the build host's PIP_INDEX_URL, else PyPI.
  std::string pypi_index;
  // kArchive: the release archive's http(s) URL ({version} allowed; a .tar.gz, .tgz, .tar.xz,
  // .txz, .tar.bz2 or .tbz2), fetched by the build host and built offline as a PyPI sdist is.
  std::string archive_url;
  // kArchive: its sha256 (64 lowercase hex digits), checked against the bytes fetched or
  // uploaded; empty: not known (the build log and plan say what the bytes hash to).
  std::string archive_sha256;
  // kUpload: the tree `farmctl submit --source DIR` sends; this directory (absolute, resolved
  // against the recipe file) is the default when --source is not given. Empty: --source needed.
  std::string default_dir;

  std::string KindName() const;  // "git", "upload", "pypi", "archive"
  // The tag to check out for `version` (kGit only): the pattern with {version} filled in.
  std::string TagFor(absl::string_view version) const;
  // The archive to fetch for `version` (kArchive only): the URL with {version} filled in.
  std::string ArchiveUrlFor(absl::string_view version) const;
};

struct Recipe;

struct RecipeVersion {
  std::string version;  // PEP 440, e.g. "2.9.1"
  RecipeSource source;
  // The whole recipe as this version builds it, when its table overrides the recipe's [python]
  // or adds to its [build.env] (torchvision 0.24 against torch 2.9, 0.26 against torch 2.11);
  // null otherwise. Its one version is this one. Recipe::ForVersion picks it.
  std::shared_ptr<const Recipe> own_recipe;
};

// Inclusive range of CUDA toolkit versions a recipe may be built with.
struct CudaRange {
  ToolkitVersion min;
  ToolkitVersion max;
  bool Contains(const ToolkitVersion& v) const { return min <= v && v <= max; }
  std::string ToString() const;  // "12.6–13.0", or "13.0" when min == max
};

struct PlatformPolicy {
  std::vector<std::string> cpu_archs;  // "aarch64", "x86_64"
  DottedVersion glibc_max;             // the wheel must run on this glibc: manylinux ceiling
  CudaRange cuda;

  // "manylinux_2_35_aarch64" for the ceiling (the tag a wheel may claim at most).
  std::string ManylinuxCeilingTag(absl::string_view cpu_arch) const;
};

// A Python version as recipes and `farmctl submit --python` write it: "3.11".
absl::Status CheckPythonVersion(absl::string_view text);

// A glibc ceiling as recipes and `farmctl submit --glibc-max` write it: "2.35". The error
// says how to write one.
absl::StatusOr<DottedVersion> ParseGlibcCeiling(absl::string_view text);

// One command: an argv (run directly) or a shell string (run with /bin/sh -c).
struct RecipeCommand {
  std::vector<std::string> argv;
  std::string shell;
  bool IsShell() const { return argv.empty(); }
  // The argv to execute: argv itself, or {"/bin/sh", "-c", shell}.
  std::vector<std::string> Argv() const;
};

struct BuildSpec {
  std::vector<RecipeCommand> prepare;  // run first, in order (dependency installs, submodules)
  RecipeCommand command;               // builds the wheel
  std::map<std::string, std::string> env;
  std::string wheel_glob = "dist/*.whl";  // where the wheel lands, relative to the source root
  double job_memory_gib = 4.0;            // RAM one compile job needs: sizes {jobs}
  // FARM_NVCC_STRICT=1 in the build: an nvcc call farm-nvcc cannot split fails the build
  // instead of running plain nvcc on the build host.
  bool strict_nvcc = false;
  // FARM_CC_STRICT=1 in the build: a C/C++ compile farm-cc would run on the build host fails
  // the build instead (links and compiler checks still run there).
  bool strict_cc = false;
};

struct PublishTarget {
  enum class Kind { kBuiltin, kRepository, kCommand };
  Kind kind = Kind::kBuiltin;
  std::string url;                     // kRepository: legacy upload URL (twine's --repository-url)
  std::string username = "__token__";  // kRepository
  std::string password_env;  // kRepository: environment variable holding the password/token
  RecipeCommand command;     // kCommand: placeholders {wheel}, {filename}, {name}, {version}

  std::string KindName() const;  // "builtin", "repository", "command"
};

// For `farmctl submit --dry-run`: wheel MiB ~= base + per_arch * number of archs.
struct SizeEstimate {
  std::optional<double> base_mib;
  std::optional<double> per_arch_mib;
  std::optional<double> EstimateMib(size_t arch_count) const;
};

// [archs]: what the package can build and where its code runs, checked at plan time. Empty
// (no table): the package builds exactly the requested list, as demo and pytorch do.
struct ArchRules {
  // The only targets the package compiles (flash-attn's four FLASH_ATTN_CUDA_ARCHS values);
  // a request for another GPU is planned as the buildable target whose SASS runs on it.
  // Empty: every target the toolkit compiles.
  std::vector<CudaTarget> buildable;
  std::optional<CudaTarget> min;  // GPUs below it are refused, with min_reason
  std::string min_reason;
  bool ptx = true;  // false: the package emits no PTX, so "+PTX" is refused
  // A list mixing archs below split_below with archs at or above it is refused, with
  // split_reason (DeepSpeed: one 7.5 entry turns BF16 off for every arch).
  std::optional<CudaTarget> split_below;
  std::string split_reason;
  int line = 0;  // of the [archs] table, for messages

  bool Empty() const { return buildable.empty() && !min && ptx && !split_below; }
};

// How long a require_gpu build waits for a GPU worker that runs an SM, when its recipe's
// [smoke] names no gpu_wait: a working day's worth for someone to bring one online.
inline constexpr absl::Duration kDefaultGpuWait = absl::Hours(6);

// [smoke]: run on a GPU worker with the built wheel installed, per requested SM, before the
// wheel is published.
struct SmokeSpec {
  RecipeCommand command;                  // {sm}: the GPU's SM ("sm_90")
  std::vector<std::string> requirements;  // pip requirements installed with the wheel
  bool block_on_failure = true;           // on_failure = "block"; false: "mark"
  // An SM no online GPU worker runs waits for one, up to gpu_wait, then fails the build
  // (else: reported not run).
  bool require_gpu = false;
  absl::Duration gpu_wait = kDefaultGpuWait;  // whole seconds
};

struct Recipe {
  std::string file;     // path it was loaded from
  std::string name;     // "pytorch": what `farmctl submit pytorch-2.9.1` names; = file stem
  std::string package;  // wheel distribution name, "torch"
  std::string description;
  std::vector<RecipeVersion> versions;
  PlatformPolicy platform;
  std::string python;                            // "3.10"
  std::vector<std::string> python_requirements;  // pip requirement specifiers for the build
  // Wheels the farm built, installed from its own index for this build's toolkit and arch set.
  std::vector<FarmRequirement> farm_requirements;
  std::vector<Prerequisite> prerequisites;  // [[prerequisites]], in the recipe's order
  BuildSpec build;
  std::vector<PublishTarget> publish;
  SizeEstimate size;
  ArchRules archs;
  std::optional<SmokeSpec> smoke;

  const RecipeVersion* FindVersion(absl::string_view version) const;
  std::vector<std::string> VersionNames() const;
  // The recipe `version` (one of versions) builds with: its own when its table overrides
  // something, else this one.
  const Recipe& ForVersion(const RecipeVersion& version) const;
};

// "pytorch-2.9.1" -> {"pytorch", "2.9.1"}: split at the last '-' that is followed by a digit,
// so names with dashes ("demo-cuda-ext-0.1.0") work.
struct RecipeRef {
  std::string name;
  std::string version;
};
absl::StatusOr<RecipeRef> ParseRecipeRef(absl::string_view text);

}  // namespace farm
