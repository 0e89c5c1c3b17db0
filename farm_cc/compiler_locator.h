// Which C/C++ compiler farm-cc stands in for. As a launcher: `farm-cc g++ ARGS` (a bare name is
// looked up on PATH, as ccache and sccache do) or `farm-cc /usr/bin/g++-12 ARGS`; masqueraded
// (a link named gcc, g++, cc, c++, clang or clang++ to farm-cc, first on PATH, for builds that
// take no launcher): the next compiler of that name on PATH that is not farm-cc itself.
//
// farm-cc's own children can find it again: a wrapper script named g++ after the masquerade
// directory that calls `g++`, or another launcher's masquerade (ccache's) that looks for the
// next g++ from the start of PATH. Like icecream's recursion check, farm-cc tells the compiler
// it runs which compilers its farm-cc ancestors run (kRunningCompilersVariable); a farm-cc
// that finds the variable set skips them when it looks for the compiler, and runs its call as
// asked, being part of its ancestor's.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace farm {

// The compilers farm-cc ancestors of this process run, absolute paths joined by ':'.
inline constexpr char kRunningCompilersVariable[] = "FARM_CC_RUNNING_COMPILERS";

struct CcInvocation {
  std::string compiler;           // absolute path of the real compiler, links kept
  std::vector<std::string> args;  // what follows it
};

// `argv` is farm-cc's own argv, argv[0] included; `self` its executable (/proc/self/exe),
// never chosen as the compiler, nor is any of `running` (kRunningCompilersVariable's) when
// looked up by name.
absl::StatusOr<CcInvocation> LocateCompiler(const std::vector<std::string>& argv,
                                            const std::string& self, const std::string& path_env,
                                            const std::vector<std::string>& running = {});

}  // namespace farm
