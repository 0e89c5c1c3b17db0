// Real wheels made for tests: a py3-none-any wheel of given members and METADATA fields, and one
// laid out like NVIDIA's library wheels (nvidia-nccl-cu13: a package directory with
// lib/libX.so.N only, no libX.so, and include/), for tests of recipe prerequisites. Written for
// pip's --find-links, so they run without a package index. Header-only: the worker's unit tests
// and the integration tests both use it.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "libfarm/process/subprocess.h"

namespace farm::testing {

struct TestWheel {
  std::string project;  // "wheelfarm-prereq-fake"; the file is named with '_' for '-'
  std::string version;
  std::map<std::string, std::string> members;  // path -> bytes, besides the dist-info
  std::string metadata_fields;                 // METADATA lines after Name and Version, any bytes
};

// Writes the wheel (METADATA, WHEEL and RECORD included) into `dir`; returns its path.
inline absl::StatusOr<std::string> WriteTestWheel(const std::filesystem::path& dir,
                                                  const TestWheel& wheel) {
  std::filesystem::create_directories(dir);
  const std::string distribution = absl::StrReplaceAll(wheel.project, {{"-", "_"}});
  const std::string dist_info = absl::StrCat(distribution, "-", wheel.version, ".dist-info/");
  std::map<std::string, std::string> members = wheel.members;
  members[dist_info + "METADATA"] =
      absl::StrCat("Metadata-Version: 2.1\nName: ", wheel.project, "\nVersion: ", wheel.version,
                   "\n", wheel.metadata_fields);
  members[dist_info + "WHEEL"] =
      "Wheel-Version: 1.0\nGenerator: wheelfarm-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n";
  const std::string path =
      (dir / absl::StrCat(distribution, "-", wheel.version, "-py3-none-any.whl")).string();
  // Members as hex arguments: any bytes get through.
  const char* kScript = R"(import base64, hashlib, sys, zipfile
path, record_name, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
files = {rest[i]: bytes.fromhex(rest[i + 1]) for i in range(0, len(rest), 2)}
record = ""
for name, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record += f"{name},sha256={digest},{len(data)}\n"
record += record_name + ",,\n"
with zipfile.ZipFile(path, "w") as z:
    for name, data in files.items():
        z.writestr(name, data)
    z.writestr(record_name, record)
)";
  std::vector<std::string> argv = {"python3", "-c", kScript, path, dist_info + "RECORD"};
  for (const auto& [name, data] : members) {
    argv.push_back(name);
    argv.push_back(absl::BytesToHexString(data));
  }
  auto r = RunCommand(argv, absl::Seconds(60));
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat("writing the test wheel: ", r->stderr_text));
  }
  return path;
}

// Writes wheelfarm_prereq_fake-1.2.3-py3-none-any.whl (project wheelfarm-prereq-fake) into
// `dir`: wheelfarm_prereq_fake/lib/libfake.so.3 and wheelfarm_prereq_fake/include/fake.h.
inline absl::Status WriteFakeLibraryWheel(const std::filesystem::path& dir) {
  return WriteTestWheel(dir,
                        {.project = "wheelfarm-prereq-fake",
                         .version = "1.2.3",
                         .members =
                             {
                                 {"wheelfarm_prereq_fake/__init__.py", ""},
                                 {"wheelfarm_prereq_fake/lib/libfake.so.3",
                                  "\x7f"
                                  "ELF not really"},
                                 {"wheelfarm_prereq_fake/include/fake.h", "#define FAKE_MAJOR 1\n"},
                             }})
      .status();
}

}  // namespace farm::testing
