// Test-only: real device code built by nvcc once and shared by every test process.
// ctest runs each test in its own process, so the artifacts live in a directory of the
// build tree guarded by a lock and a stamp: the first process builds, the others reuse.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace farm::testing {

struct NvccFixtures {
  std::string dir;
  std::string sweep_object;     // sm_75 ... sm_121 SASS + compute_121 PTX
  std::string variants_object;  // a/f variants of sm_90 ... sm_121 + compute_90a/120f PTX
  std::map<std::string, std::string> compress_objects;  // --compress-mode value -> object
  std::string compress_all_lz4_object;  // -Xfatbin=-compress-all --compress-mode=speed
  std::string rdc_object;
  std::string rdc_library;
  std::string lto_object;
  std::string tu_a_object;         // sm_75 + sm_90
  std::string tu_b_object;         // sm_75 + sm_90
  std::string tu_c_object;         // sm_75 only
  std::string complete_library;    // nvcc -shared tu_a tu_b
  std::string multi_tu_library;    // nvcc -shared tu_a tu_b tu_c: one TU lacks sm_90
  std::string static_archive;      // ar of tu_a.o tu_c.o
  std::string bare_cubin;          // nvcc -cubin -arch=sm_90a
  std::string bare_fatbin;         // nvcc -fatbin, sm_80 + compute_80
  std::string pthread_library;     // host-only .so calling pthread_create (GLIBC_2.34)
  std::string arc4random_library;  // host-only .so calling arc4random (GLIBC_2.36)
};

// Builds (or reuses) every fixture; an error names the failing command. A missing nvcc is an
// error, never a skip.
absl::StatusOr<const NvccFixtures*> GetNvccFixtures();

struct WheelMember {
  std::string name;
  std::string source_path;  // file to copy in, or
  std::string text;         // literal content when source_path is empty
};

struct WheelSpec {
  std::string path;               // where the .whl goes; its basename is the wheel's file name
  std::string dist_info;          // "demo_pkg-1.0.dist-info"
  std::vector<std::string> tags;  // Tag: lines of WHEEL
  std::vector<WheelMember> members;
  // After RECORD is written: replace this member's content (tampering) ...
  std::string tamper_member;
  std::string tamper_text;
};

// Assembles a wheel with Python's zipfile (deflated), computing RECORD from the members.
absl::Status BuildWheel(const WheelSpec& spec);

}  // namespace farm::testing
