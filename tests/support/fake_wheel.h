// A real wheel laid out like NVIDIA's library wheels (nvidia-nccl-cu13: a package directory with
// lib/libX.so.N only, no libX.so, and include/), for tests of recipe prerequisites. Written for
// pip's --find-links, so they run without a package index. Header-only: the worker's unit tests
// and the integration tests both use it.
#pragma once

#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "libfarm/process/subprocess.h"

namespace farm::testing {

// Writes wheelfarm_prereq_fake-1.2.3-py3-none-any.whl (project wheelfarm-prereq-fake) into
// `dir`: wheelfarm_prereq_fake/lib/libfake.so.3 and wheelfarm_prereq_fake/include/fake.h.
inline absl::Status WriteFakeLibraryWheel(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const char* kScript = R"(import base64, hashlib, sys, zipfile
files = {
    "wheelfarm_prereq_fake/__init__.py": b"",
    "wheelfarm_prereq_fake/lib/libfake.so.3": b"\x7fELF not really",
    "wheelfarm_prereq_fake/include/fake.h": b"#define FAKE_MAJOR 1\n",
    "wheelfarm_prereq_fake-1.2.3.dist-info/METADATA":
        b"Metadata-Version: 2.1\nName: wheelfarm-prereq-fake\nVersion: 1.2.3\n",
    "wheelfarm_prereq_fake-1.2.3.dist-info/WHEEL":
        b"Wheel-Version: 1.0\nGenerator: wheelfarm-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = ""
for name, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record += f"{name},sha256={digest},{len(data)}\n"
record += "wheelfarm_prereq_fake-1.2.3.dist-info/RECORD,,\n"
with zipfile.ZipFile(sys.argv[1] + "/wheelfarm_prereq_fake-1.2.3-py3-none-any.whl", "w") as z:
    for name, data in files.items():
        z.writestr(name, data)
    z.writestr("wheelfarm_prereq_fake-1.2.3.dist-info/RECORD", record)
)";
  auto r = RunCommand({"python3", "-c", kScript, dir.string()}, absl::Seconds(60));
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat("writing the fake wheel: ", r->stderr_text));
  }
  return absl::OkStatus();
}

}  // namespace farm::testing
