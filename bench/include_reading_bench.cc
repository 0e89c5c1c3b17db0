// include_reading_bench: what finding a compile's input files costs the build host, each way
// farm-cc can (docs/farm-cc.md, "Reading the includes instead of scanning"): the compiler's
// -M scan and the tree made of its list (FARM_CC_SCAN=compiler), against farm-cc reading the
// includes itself (the default). For one compile line, run in the compile's directory: CPU
// seconds of this process and its children (the scan's compiler), wall seconds and the
// tree's files, medians of --runs; then the ratio. bench/run_include_reading_bench.sh runs it
// on torch's heavy units and this repository's own.
//
//   include_reading_bench [--runs N] -- COMPILER ARGS...
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "farm_cc/compile_inputs.h"
#include "libfarm/cc/cc_command_line.h"
#include "libfarm/cc/dependency_scan.h"
#include "libfarm/process/environment.h"

namespace {

double CpuSeconds() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage usage{};
    getrusage(who, &usage);
    for (const timeval& t : {usage.ru_utime, usage.ru_stime}) total += t.tv_sec + t.tv_usec / 1e6;
  }
  return total;
}

struct Sample {
  double cpu = 0;
  double wall = 0;
  double files = 0;
};

double Median(std::vector<Sample> samples, double Sample::*field) {
  std::sort(samples.begin(), samples.end(),
            [field](const Sample& a, const Sample& b) { return a.*field < b.*field; });
  return samples[samples.size() / 2].*field;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 3;
  int i = 1;
  for (; i < argc && std::string(argv[i]) != "--"; ++i) {
    if (std::string(argv[i]) == "--runs" && i + 1 < argc && absl::SimpleAtoi(argv[i + 1], &runs) &&
        runs > 0) {
      ++i;
    } else {
      std::cerr << "usage: include_reading_bench [--runs N] -- COMPILER ARGS...\n";
      return 2;
    }
  }
  if (i + 1 >= argc) {
    std::cerr << "usage: include_reading_bench [--runs N] -- COMPILER ARGS...\n";
    return 2;
  }
  farm::CcInvocation call{argv[i + 1], std::vector<std::string>(argv + i + 2, argv + argc)};
  const auto family = farm::cc::CompilerFamilyOf(call.compiler);
  if (!family) {
    std::cerr << "error: " << call.compiler << " is not gcc, g++, clang or clang++\n";
    return 2;
  }
  auto plan = farm::cc::PlanRemoteCompile(call.args, *family);
  if (!plan.ok()) {
    std::cerr << "error: not a compile farm-cc sends: " << plan.status().message() << "\n";
    return 2;
  }
  const std::string cwd = std::filesystem::current_path().string();
  const auto env = farm::ProcessEnvironment();

  std::vector<Sample> scanned, read;
  std::string why_not_read;
  for (int run = 0; run < runs; ++run) {
    for (const bool from_includes : {false, true}) {
      const double cpu0 = CpuSeconds();
      const auto wall0 = std::chrono::steady_clock::now();
      absl::StatusOr<farm::CompileInputs> inputs;
      if (from_includes) {
        // A fresh query each run: farm-cc keeps it per target, so this is the worst case.
        auto dirs = farm::cc::QueryIncludeSearchList(call.compiler, *plan, cwd);
        inputs = dirs.ok() ? farm::GatherCompileInputsFromIncludes(call, *plan, *dirs, env, cwd)
                           : absl::StatusOr<farm::CompileInputs>(dirs.status());
      } else {
        auto scan = farm::cc::ScanDependencies(call.compiler, *plan, cwd);
        inputs = scan.ok() ? farm::GatherCompileInputs(call, *plan, scan->files, scan->search_dirs,
                                                       env, cwd)
                           : absl::StatusOr<farm::CompileInputs>(scan.status());
      }
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
      if (!inputs.ok()) {
        if (!from_includes) {
          std::cerr << "error: the scan failed: " << inputs.status().message() << "\n";
          return 1;
        }
        why_not_read = std::string(inputs.status().message());
        continue;
      }
      (from_includes ? read : scanned)
          .push_back({CpuSeconds() - cpu0, wall, static_cast<double>(inputs->tree.files_size())});
    }
  }
  const double scan_cpu = Median(scanned, &Sample::cpu);
  std::cout << absl::StrFormat("%s\n  scan + tree:     cpu %.3f s  wall %.3f s  %5d files\n",
                               plan->source, scan_cpu, Median(scanned, &Sample::wall),
                               static_cast<int>(Median(scanned, &Sample::files)));
  if (read.empty()) {
    std::cout << "  includes read:   not possible here (" << why_not_read << "): farm-cc scans\n";
    return 0;
  }
  const double read_cpu = Median(read, &Sample::cpu);
  std::cout << absl::StrFormat(
      "  includes read:   cpu %.3f s  wall %.3f s  %5d files  (cpu %.2f of the scan's)\n", read_cpu,
      Median(read, &Sample::wall), static_cast<int>(Median(read, &Sample::files)),
      read_cpu / scan_cpu);
  return 0;
}
