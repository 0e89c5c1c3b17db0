#include "bench/bench_coordinator.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/auth/token.h"
#include "libfarm/files/json_file.h"

namespace farm::bench {

absl::StatusOr<BenchCoordinator> StartBenchCoordinator(const std::string& work,
                                                       const std::string& data_dir,
                                                       const std::vector<std::string>& extra) {
  const std::string ready = work + "/ready.json";
  std::filesystem::remove(ready);
  std::vector<std::string> argv = {std::string(FARM_BIN_DIR) + "/farm-coordinator",
                                   "--data-dir",
                                   data_dir,
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--http-listen",
                                   "",
                                   "--ready-file",
                                   ready,
                                   "--log-level",
                                   "warn"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const absl::Time spawned = absl::Now();
  auto process = Subprocess::Spawn(argv, {.log_path = work + "/coordinator.log"});
  if (!process.ok()) return process.status();
  absl::StatusOr<nlohmann::json> info = absl::NotFoundError("");
  while (!info.ok() && absl::Now() - spawned < absl::Minutes(10)) {
    if (process->Wait(absl::ZeroDuration())) break;
    absl::SleepFor(absl::Milliseconds(10));
    info = ReadJsonFile(ready);
  }
  if (!info.ok()) {
    return absl::UnavailableError(
        absl::StrCat("coordinator did not start; see ", work, "/coordinator.log"));
  }
  auto token = ReadTokenFile(info->value("token_file", ""));
  if (!token.ok()) return token.status();
  return BenchCoordinator{*process, info->value("grpc", ""), *token, absl::Now() - spawned};
}

namespace {

// A "Vm...:  N kB" line of /proc/PID/status, in MiB.
double StatusMib(int pid, absl::string_view field) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, field) || !absl::ConsumePrefix(&rest, ":")) continue;
    double kib = 0;
    return absl::SimpleAtod(absl::StripAsciiWhitespace(absl::StripSuffix(rest, "kB")), &kib)
               ? kib / 1024.0
               : 0;
  }
  return 0;
}

}  // namespace

double ResidentMib(int pid) { return StatusMib(pid, "VmRSS"); }

double PeakResidentMib(int pid) { return StatusMib(pid, "VmHWM"); }

double CpuSeconds(int pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name may hold spaces and parentheses: fields are counted after its last ')'.
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::vector<std::string> fields = absl::StrSplit(stat.substr(paren + 2), ' ');
  // utime and stime are fields 14 and 15 of stat(5); field 3 (state) is the first here.
  double utime = 0, stime = 0;
  if (fields.size() < 13 || !absl::SimpleAtod(fields[11], &utime) ||
      !absl::SimpleAtod(fields[12], &stime)) {
    return 0;
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace farm::bench
