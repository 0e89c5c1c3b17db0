#include "libfarm/cc/loader_closure.h"

#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "libfarm/elf/elf_file.h"
#include "libfarm/elf/mapped_file.h"
#include "libfarm/process/subprocess.h"

namespace farm::cc {
namespace {

constexpr uint32_t kProgramInterpreter = 3;  // PT_INTERP

template <typename T>
T Read(ByteSpan bytes, uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

}  // namespace

absl::StatusOr<std::optional<std::string>> ElfInterpreter(const std::string& path) {
  absl::StatusOr<MappedFile> file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  ByteSpan bytes = file->bytes();
  absl::StatusOr<ElfFile> elf = ElfFile::Parse(bytes);
  if (!elf.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not a 64-bit ELF file: ", elf.status().message()));
  }
  // The program header table: e_phoff at 32, e_phentsize at 54, e_phnum at 56 (ELF64).
  uint64_t table = Read<uint64_t>(bytes, 32);
  uint16_t entry_size = Read<uint16_t>(bytes, 54);
  uint16_t count = Read<uint16_t>(bytes, 56);
  for (uint16_t i = 0; i < count; ++i) {
    uint64_t at = table + uint64_t{i} * entry_size;
    if (entry_size < 56 || at + 56 > bytes.size()) {
      return absl::FailedPreconditionError(absl::StrCat(path, ": program headers out of range"));
    }
    if (Read<uint32_t>(bytes, at) != kProgramInterpreter) continue;
    uint64_t offset = Read<uint64_t>(bytes, at + 8);
    uint64_t size = Read<uint64_t>(bytes, at + 32);
    if (offset > bytes.size() || size > bytes.size() - offset) {
      return absl::FailedPreconditionError(absl::StrCat(path, ": PT_INTERP out of range"));
    }
    std::string interpreter(reinterpret_cast<const char*>(bytes.data() + offset), size);
    interpreter.resize(strnlen(interpreter.c_str(), interpreter.size()));
    return std::optional<std::string>(interpreter);
  }
  return std::optional<std::string>();
}

absl::StatusOr<std::vector<std::string>> ParseLoaderList(absl::string_view output) {
  std::vector<std::string> paths;
  for (absl::string_view line : absl::StrSplit(output, '\n', absl::SkipWhitespace())) {
    line = absl::StripAsciiWhitespace(line);
    absl::string_view path = line;
    if (size_t arrow = line.find(" => "); arrow != absl::string_view::npos) {
      path = line.substr(arrow + 4);
      if (absl::StartsWith(path, "not found")) {
        return absl::FailedPreconditionError(
            absl::StrCat("the loader finds no ", line.substr(0, arrow),
                         ". Fix: install it or set LD_LIBRARY_PATH as the compiler needs"));
      }
    }
    if (size_t address = path.rfind(" (0x"); address != absl::string_view::npos) {
      path = path.substr(0, address);
    }
    if (absl::StartsWith(path, "/")) paths.emplace_back(path);
    // Anything else is the vDSO or "statically linked": no file to carry.
  }
  return paths;
}

absl::StatusOr<std::vector<std::string>> LoaderClosure(const std::string& program) {
  absl::StatusOr<std::optional<std::string>> interpreter = ElfInterpreter(program);
  if (!interpreter.ok()) return interpreter.status();
  if (!interpreter->has_value()) return std::vector<std::string>();
  absl::StatusOr<CommandResult> listed =
      RunCommand({**interpreter, "--list", program}, absl::Seconds(60));
  if (!listed.ok()) return listed.status();
  if (listed->exit_code != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(**interpreter, " --list ", program, " failed (exit ", listed->exit_code,
                     "): ", listed->stderr_text, listed->stdout_text));
  }
  absl::StatusOr<std::vector<std::string>> paths = ParseLoaderList(listed->stdout_text);
  if (!paths.ok()) return paths.status();
  paths->insert(paths->begin(), **interpreter);
  return paths;
}

}  // namespace farm::cc
