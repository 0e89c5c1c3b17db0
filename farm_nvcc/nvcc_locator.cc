#include "farm_nvcc/nvcc_locator.h"

#include <unistd.h>

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libfarm/process/path_search.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

bool IsExecutableFile(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

absl::StatusOr<NvccInvocation> LocateNvcc(const std::vector<std::string>& argv,
                                          const std::string& self, const std::string& cuda_home,
                                          const std::string& path_env) {
  NvccInvocation call;
  auto not_self = [&](const std::string& c) { return !IsSameFile(c, self); };
  // Launcher form: the first argument is the compiler itself, as a path or, as with ccache
  // and sccache, a bare name found on PATH (`farm-nvcc nvcc -c k.cu`). nvcc takes no
  // argument named like that, so it cannot be an input.
  if (argv.size() >= 2 && fs::path(argv[1]).filename().string().rfind("nvcc", 0) == 0) {
    std::optional<std::string> compiler;
    if (argv[1].find('/') != std::string::npos) {
      if (IsExecutableFile(argv[1]) && !IsSameFile(argv[1], self)) compiler = argv[1];
    } else {
      compiler = FindOnPath(argv[1], path_env, not_self);
      if (!compiler) {
        return absl::NotFoundError(absl::StrCat(
            "farm-nvcc: the compiler '", argv[1], "' is not on PATH (", path_env,
            "). Fix: put the CUDA toolkit's bin/ on PATH or name nvcc by its path: farm-nvcc "
            "/usr/local/cuda/bin/nvcc ARGS..."));
      }
    }
    if (compiler) {
      call.nvcc = AbsoluteNormalPath(*compiler);
      call.args.assign(argv.begin() + 2, argv.end());
      return call;
    }
  }
  call.args.assign(argv.begin() + (argv.empty() ? 0 : 1), argv.end());
  // CUDA_HOME first, then PATH; never this binary installed under the name nvcc.
  std::optional<std::string> found;
  if (!cuda_home.empty()) found = FindOnPath("nvcc", absl::StrCat(cuda_home, "/bin"), not_self);
  if (!found) found = FindOnPath("nvcc", path_env, not_self);
  if (found) {
    call.nvcc = AbsoluteNormalPath(*found);
    return call;
  }
  return absl::NotFoundError(
      "farm-nvcc: cannot find nvcc: set CUDA_HOME to the toolkit root or put its bin/ on "
      "PATH, or call farm-nvcc as a launcher: farm-nvcc /path/to/nvcc ARGS...");
}

}  // namespace farm
