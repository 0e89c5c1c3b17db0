#include "farm_cc/compiler_locator.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "libfarm/process/path_search.h"

namespace farm {
namespace fs = std::filesystem;

absl::StatusOr<CcInvocation> LocateCompiler(const std::vector<std::string>& argv,
                                            const std::string& self, const std::string& path_env,
                                            const std::vector<std::string>& running) {
  auto not_self = [&](const std::string& c) {
    return !IsSameFile(c, self) &&
           std::none_of(running.begin(), running.end(), [&](auto& r) { return IsSameFile(c, r); });
  };
  if (argv.empty()) return absl::InvalidArgumentError("farm-cc: empty command line");
  const std::string called_as = fs::path(argv[0]).filename().string();
  CcInvocation call;
  // CMake may find a masquerade link as the compiler and still run farm-cc as its launcher:
  // `farm-cc .../farm-cc-masquerade/c++ ARGS` means the real c++.
  std::string masquerade = called_as != "farm-cc" ? called_as : "";
  size_t first_arg = 1;
  if (masquerade.empty() && argv.size() >= 2 && argv[1].find('/') != std::string::npos &&
      IsSameFile(argv[1], self) && fs::path(argv[1]).filename() != "farm-cc") {
    masquerade = fs::path(argv[1]).filename().string();
    first_arg = 2;
  }
  if (!masquerade.empty()) {
    const std::string& called_as = masquerade;
    // Masquerade: called through a link named after the compiler.
    auto found = FindOnPath(called_as, path_env, not_self);
    if (!found) {
      return absl::NotFoundError(
          absl::StrCat("farm-cc: called as '", called_as, "', but no other '", called_as,
                       "' is on PATH (", path_env,
                       "). Fix: keep the real compiler's directory on PATH after "
                       "farm-cc's masquerade directory"));
    }
    call.compiler = AbsoluteNormalPath(*found);
    call.args.assign(argv.begin() + first_arg, argv.end());
    return call;
  }
  if (argv.size() < 2) {
    return absl::InvalidArgumentError(
        "farm-cc: no compiler named. Usage: farm-cc g++ -c a.cc -o a.o (or set "
        "CMAKE_CXX_COMPILER_LAUNCHER=farm-cc, or CC=\"farm-cc gcc\")");
  }
  const std::string& named = argv[1];
  if (named.find('/') != std::string::npos) {
    std::error_code ec;
    if (!fs::is_regular_file(named, ec) || ::access(named.c_str(), X_OK) != 0) {
      return absl::NotFoundError(
          absl::StrCat("farm-cc: the compiler '", named, "' is not an executable file"));
    }
    if (IsSameFile(named, self)) {
      return absl::InvalidArgumentError("farm-cc: the compiler named is farm-cc itself");
    }
    call.compiler = AbsoluteNormalPath(named);
  } else {
    auto found = FindOnPath(named, path_env, not_self);
    if (!found) {
      return absl::NotFoundError(absl::StrCat(
          "farm-cc: the compiler '", named, "' is not on PATH (", path_env,
          "). Fix: install it, put its directory on PATH or name it by its path: farm-cc "
          "/usr/bin/g++ ARGS..."));
    }
    call.compiler = AbsoluteNormalPath(*found);
  }
  call.args.assign(argv.begin() + 2, argv.end());
  return call;
}

}  // namespace farm
