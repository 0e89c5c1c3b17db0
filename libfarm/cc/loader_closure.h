// The files the dynamic loader maps to run a program: its PT_INTERP loader and the shared
// libraries of its DT_NEEDED closure, as this host's loader resolves them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm::cc {

// The PT_INTERP text of the ELF file at `path` ("/lib64/ld-linux-x86-64.so.2"); nullopt for a
// static program or a shared library without one. FAILED_PRECONDITION for a file that is not a
// 64-bit little-endian ELF file.
absl::StatusOr<std::optional<std::string>> ElfInterpreter(const std::string& path);

// The absolute paths in `<loader> --list <program>` output (the format ldd prints): each
// "name => /path (0x...)" and "/path (0x...)" line; the kernel's vDSO ("linux-vdso.so.1
// (0x...)") has no file and is skipped. FAILED_PRECONDITION naming a library "=> not found".
absl::StatusOr<std::vector<std::string>> ParseLoaderList(absl::string_view output);

// The loader and libraries `program` loads: runs its loader with --list, with this process's
// environment (LD_LIBRARY_PATH included, as the compile will run). Empty for a static program.
absl::StatusOr<std::vector<std::string>> LoaderClosure(const std::string& program);

}  // namespace farm::cc
