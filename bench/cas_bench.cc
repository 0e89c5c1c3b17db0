// cas_bench: CAS upload and download throughput over loopback against a real
// farm-coordinator, as a ratio to `sha256sum` of the same file measured in the same run
// (goal >= 0.6). Prints figures; not a test. Run through bench/run_cas_bench.sh.
#include <signal.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "libfarm/auth/token.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/digest/digest.h"
#include "libfarm/files/json_file.h"
#include "libfarm/process/subprocess.h"

namespace {

namespace fs = std::filesystem;
constexpr uint64_t kMiB = 1 << 20;

// Every MiB differs (a random block stamped with its index): nothing dedups or compresses.
void WriteFile(const std::string& path, int mib) {
  std::string block(kMiB, '\0');
  std::mt19937_64 rng(7);
  for (size_t i = 0; i < block.size(); i += 8) {
    const uint64_t v = rng();
    std::memcpy(block.data() + i, &v, 8);
  }
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < mib; ++i) {
    std::memcpy(block.data(), &i, sizeof(i));
    out.write(block.data(), static_cast<std::streamsize>(block.size()));
  }
}

double MBps(uint64_t bytes, absl::Duration d) {
  return static_cast<double>(bytes) / 1e6 / absl::ToDoubleSeconds(d);
}

int Run(int size_mib, const std::string& work, bool zstd) {
  fs::create_directories(work);
  const std::string data_dir = work + "/coordinator";
  const std::string ready = work + "/ready.json";
  auto coordinator = farm::Subprocess::Spawn(
      {std::string(FARM_BIN_DIR) + "/farm-coordinator", "--data-dir", data_dir, "--listen",
       "127.0.0.1:0", "--http-listen", "", "--ready-file", ready, "--cas-quota",
       absl::StrCat(2 * size_mib + 64, "MiB")},
      {.log_path = work + "/coordinator.log"});
  if (!coordinator.ok()) {
    std::cerr << coordinator.status() << std::endl;
    return 1;
  }
  absl::StatusOr<nlohmann::json> info = absl::NotFoundError("");
  for (int i = 0; i < 300 && !info.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    info = farm::ReadJsonFile(ready);
  }
  auto stop = [&] {
    coordinator->Signal(SIGTERM);
    coordinator->Wait(absl::Seconds(10));
  };
  if (!info.ok()) {
    std::cerr << "coordinator did not start; see " << work << "/coordinator.log" << std::endl;
    stop();
    return 1;
  }
  auto token = farm::ReadTokenFile((*info)["token_file"]);
  auto client = farm::CasClient::Connect((*info)["grpc"], *token, {.compress = zstd});

  const std::string in = work + "/blob.bin";
  const std::string out = work + "/blob.out";
  WriteFile(in, size_mib);
  const uint64_t bytes = static_cast<uint64_t>(size_mib) * kMiB;
  // Warm the page cache for everyone alike: the first reader would otherwise pay the disk.
  (void)farm::DigestOfFile(in);

  absl::Time t0 = absl::Now();
  auto sum = farm::RunCommand({"sha256sum", in}, absl::Minutes(10));
  const absl::Duration sha_took = absl::Now() - t0;
  if (!sum.ok() || sum->exit_code != 0) {
    std::cerr << "sha256sum failed" << std::endl;
    stop();
    return 1;
  }

  t0 = absl::Now();
  bool uploaded = false;
  auto digest = client->UploadFile(in, &uploaded);
  const absl::Duration up_took = absl::Now() - t0;
  if (!digest.ok() || !uploaded) {
    std::cerr << "upload failed: " << digest.status() << std::endl;
    stop();
    return 1;
  }
  t0 = absl::Now();
  absl::Status got = client->DownloadToFile(*digest, out);
  const absl::Duration down_took = absl::Now() - t0;
  if (!got.ok()) {
    std::cerr << "download failed: " << got << std::endl;
    stop();
    return 1;
  }
  stop();
  const bool same_hash = sum->stdout_text.substr(0, 64) == digest->hash();

  const double sha = MBps(bytes, sha_took);
  const double up = MBps(bytes, up_took);
  const double down = MBps(bytes, down_took);
  const double round = MBps(2 * bytes, up_took + down_took);
  std::cout << absl::StrFormat(
      "cas_bench: %d MiB over loopback%s\n"
      "  sha256sum          %8.1f MB/s  (%s)\n"
      "  upload (hash+send) %8.1f MB/s  ratio %.2f\n"
      "  download (+verify) %8.1f MB/s  ratio %.2f\n"
      "  up+down combined   %8.1f MB/s  ratio %.2f  (goal >= 0.6)\n"
      "  digest agrees with sha256sum: %s\n",
      size_mib, zstd ? ", zstd" : "", sha, absl::FormatDuration(sha_took), up, up / sha, down,
      down / sha, round, round / sha, same_hash ? "yes" : "NO");
  return same_hash ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int size_mib = 1024;
  std::string work = (fs::temp_directory_path() / "wheelfarm-cas-bench").string();
  bool zstd = false;
  CLI::App app{"cas_bench: CAS throughput over loopback vs sha256sum"};
  app.add_option("--size-mib", size_mib, "blob size")->capture_default_str();
  app.add_option("--work-dir", work, "scratch directory (removed afterwards)")
      ->capture_default_str();
  app.add_flag("--zstd", zstd, "compress chunks on the wire");
  CLI11_PARSE(app, argc, argv);
  std::error_code ec;
  fs::remove_all(work, ec);
  const int rc = Run(size_mib, work, zstd);
  fs::remove_all(work, ec);
  return rc;
}
