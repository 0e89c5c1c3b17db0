// The shared libraries a host's dynamic loader knows, by soname. A worker advertises them
// (WorkerCapabilities.libraries) so a recipe's host_library prerequisite ("libcudnn.so.9") is
// checked when a build is planned, before a build host spends hours finding it missing.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace farm {

// The most names a worker advertises and the coordinator accepts: a host's loader cache holds
// a few thousand at most, and each name travels with every fleet listing.
inline constexpr size_t kMaxAdvertisedLibraries = 4096;

// A shared library's file name: NAME.so with optional ".N" components, NAME from letters,
// digits and . _ - + (starting with a letter or digit), at most 255 bytes ("libcudnn.so.9",
// "libstdc++.so.6", "ld-linux-aarch64.so.1").
bool IsSoname(absl::string_view name);

// The sonames in `ldconfig -p` output for `cpu_arch` ("x86_64" keeps "(libc6,x86-64)" entries
// and drops i386 ones; "aarch64" keeps "(libc6,AArch64)"; another arch keeps every entry).
std::vector<std::string> ParseLdconfigCache(absl::string_view output, absl::string_view cpu_arch);

// The sonames of the files (or links) in `dir`, e.g. a toolkit's lib64; none if unreadable.
std::vector<std::string> SharedLibrariesIn(const std::string& dir);

// What this host advertises: `ldconfig -p` for its CPU arch plus the libraries in each
// toolkit root's lib64 and lib (a toolkit is often not in the loader's cache), sorted, without
// duplicates, at most kMaxAdvertisedLibraries (the rest are dropped with a warning).
std::vector<std::string> DetectSharedLibraries(absl::string_view cpu_arch,
                                               const std::vector<std::string>& toolkit_roots);

// INVALID_ARGUMENT for a list a worker must not advertise: too long, or a name that is not a
// soname. The coordinator checks every registration with it: the list is the worker's word.
absl::Status ValidateAdvertisedLibraries(const std::vector<std::string>& names);

}  // namespace farm
