// Which C/C++ compiler farm-cc stands in for. As a launcher: `farm-cc g++ ARGS` (a bare name is
// looked up on PATH, as ccache and sccache do) or `farm-cc /usr/bin/g++-12 ARGS`; masqueraded
// (a link named gcc, g++, cc, c++, clang or clang++ to farm-cc, first on PATH, for builds that
// take no launcher): the next compiler of that name on PATH that is not farm-cc itself.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace farm {

struct CcInvocation {
  std::string compiler;           // absolute path of the real compiler, links kept
  std::vector<std::string> args;  // what follows it
};

// `argv` is farm-cc's own argv, argv[0] included; `self` its executable (/proc/self/exe),
// never chosen as the compiler.
absl::StatusOr<CcInvocation> LocateCompiler(const std::vector<std::string>& argv,
                                            const std::string& self, const std::string& path_env);

}  // namespace farm
