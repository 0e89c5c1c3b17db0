#include "libfarm/client/local_farm_paths.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/files/json_file.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/subprocess.h"

namespace farm {
namespace fs = std::filesystem;

std::string WheelfarmStateHome() {
  if (const std::string state = GetEnv("XDG_STATE_HOME"); !state.empty()) {
    return absl::StrCat(state, "/wheelfarm");
  }
  return absl::StrCat(GetEnvOr("HOME", "/tmp"), "/.local/state/wheelfarm");
}

std::string DefaultLocalFarmDir() { return WheelfarmStateHome() + "/local"; }

std::string LocalFarmRecordPath(const std::string& data_dir) {
  return (fs::path(data_dir) / "farm.json").string();
}

absl::Status WriteLocalFarmRecord(const LocalFarmRecord& record) {
  nlohmann::json procs = nlohmann::json::array();
  for (const auto& p : record.processes) {
    procs.push_back(
        {{"role", p.role}, {"name", p.name}, {"pid", p.pid}, {"start_time", p.start_time}});
  }
  nlohmann::json j = {{"data_dir", record.data_dir},
                      {"grpc", record.grpc_address},
                      {"http", record.http_address},
                      {"token_file", record.token_file},
                      {"processes", procs}};
  if (!record.tls.ca_file.empty()) {
    j["tls"] = {
        {"ca", record.tls.ca_file}, {"cert", record.tls.cert_file}, {"key", record.tls.key_file}};
  }
  return WriteJsonFileAtomically(LocalFarmRecordPath(record.data_dir), j);
}

absl::StatusOr<LocalFarmRecord> ReadLocalFarmRecord(const std::string& data_dir) {
  auto j = ReadJsonFile(LocalFarmRecordPath(data_dir));
  if (!j.ok()) return j.status();
  LocalFarmRecord r;
  r.data_dir = j->value("data_dir", data_dir);
  r.grpc_address = j->value("grpc", "");
  r.http_address = j->value("http", "");
  r.token_file = j->value("token_file", "");
  if (j->contains("tls") && (*j)["tls"].is_object()) {
    const auto& tls = (*j)["tls"];
    r.tls = {tls.value("ca", ""), tls.value("cert", ""), tls.value("key", "")};
  }
  if (j->contains("processes") && (*j)["processes"].is_array()) {
    for (const auto& p : (*j)["processes"]) {
      if (!p.is_object()) continue;
      r.processes.push_back({p.value("role", ""), p.value("name", ""), p.value("pid", 0),
                             p.value("start_time", uint64_t{0})});
    }
  }
  return r;
}

namespace {

std::string CurrentPointerPath() { return WheelfarmStateHome() + "/current"; }

absl::Status WriteCurrentPointer(const std::string& data_dir) {
  std::error_code ec;
  fs::create_directories(WheelfarmStateHome(), ec);
  return WriteFileAtomically(CurrentPointerPath(), data_dir + "\n");
}

}  // namespace

std::optional<std::string> CurrentLocalFarmDir() {
  std::ifstream in(CurrentPointerPath());
  std::string dir;
  if (!std::getline(in, dir)) return std::nullopt;
  dir = std::string(absl::StripAsciiWhitespace(dir));
  if (dir.empty()) return std::nullopt;
  return dir;
}

bool CoordinatorIsRunning(const LocalFarmRecord& record) {
  return std::any_of(
      record.processes.begin(), record.processes.end(),
      [](const LocalFarmProcess& p) { return p.role == "coordinator" && IsRunning(p); });
}

bool LocalFarmIsRunning(const std::string& data_dir) {
  auto record = ReadLocalFarmRecord(data_dir);
  return record.ok() && CoordinatorIsRunning(*record);
}

absl::StatusOr<std::string> ClaimCurrentLocalFarm(const std::string& data_dir) {
  if (auto current = CurrentLocalFarmDir();
      current && *current != data_dir && LocalFarmIsRunning(*current)) {
    return *current;
  }
  if (absl::Status s = WriteCurrentPointer(data_dir); !s.ok()) return s;
  return data_dir;
}

void ReleaseCurrentLocalFarm(const std::string& data_dir) {
  if (CurrentLocalFarmDir() != data_dir) return;
  std::error_code ec;
  fs::remove(CurrentPointerPath(), ec);
}

bool IsRunning(const LocalFarmProcess& p) {
  if (p.pid <= 0) return false;
  auto start = ProcessStartTime(p.pid);
  return start.ok() && *start == p.start_time;
}

}  // namespace farm
