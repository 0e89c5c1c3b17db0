#include "bench/bench_coordinator.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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

double ResidentMib(int pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, "VmRSS:")) continue;
    double kib = 0;
    return absl::SimpleAtod(absl::StripAsciiWhitespace(absl::StripSuffix(rest, "kB")), &kib)
               ? kib / 1024.0
               : 0;
  }
  return 0;
}

}  // namespace farm::bench
