// Deciding whether a gcc/g++/clang/clang++ call is a compile farm-cc may send: one C or C++
// source to one object, with every option on an allow-list of options whose effect the
// sandboxed worker reproduces byte for byte (same argv, same cwd, same files). Anything else
// stays local, with the reason as the status message.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm::cc {

enum class CompilerFamily { kGcc, kClang };

// From the driver's file name: gcc, g++, cc, c++, x86_64-linux-gnu-g++-12,
// aarch64-linux-gnu-gcc, clang, clang++, clang-14, clang++-14...; nullopt for anything else
// ("nvcc", "ld", "gcc-ar", "clang-cl", "mpicc"). "cc" and "c++" count as GCC by name; the
// toolchain discovery (host_toolchain.h) asks the driver itself.
std::optional<CompilerFamily> CompilerFamilyOf(absl::string_view driver_path);

struct CcCompilePlan {
  CompilerFamily family = CompilerFamily::kGcc;
  std::string source;   // the one source file, as argv names it
  std::string object;   // the object the compile writes, as named (-o X, or SOURCE_BASE.o)
  std::string depfile;  // the dependency file it writes ("" if none): -MF X, or X.d for -MD
  // The -I, -iquote, -isystem and -idirafter directories, in order, as written.
  std::vector<std::string> include_dirs;
  // The call's arguments less -c, -o, -MD, -MMD, -MF, -MT, -MQ, -MP (with their values).
  std::vector<std::string> scan_base_args;

  // Arguments (without the compiler) for the local dependency scan: scan_base_args plus
  // "-M -MT farm-cc-scan -MF <scan_output>", which writes every file the preprocessor reads,
  // system headers included, under a fixed target so the file is simple to parse.
  std::vector<std::string> DependencyScanArgs(const std::string& scan_output) const;
};

// The target name DependencyScanArgs asks for.
inline constexpr char kScanTarget[] = "farm-cc-scan";

// The plan when `args` (the words after the compiler) are a compile farm-cc sends. Otherwise
// FAILED_PRECONDITION whose message is the reason, e.g. "not a compile (no -c): a link",
// "-E: preprocessing only", "2 source files", "unknown option '-foo'".
absl::StatusOr<CcCompilePlan> PlanRemoteCompile(const std::vector<std::string>& args,
                                                CompilerFamily family);

}  // namespace farm::cc
