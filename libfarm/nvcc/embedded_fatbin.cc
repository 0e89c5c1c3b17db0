#include "libfarm/nvcc/embedded_fatbin.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace farm {
namespace {

constexpr absl::string_view kQuadPrefix = "\".quad ";
constexpr absl::string_view kArrayDeclaration = "extern const unsigned long long fatbinData[";

constexpr absl::string_view kPlaceholder =
    "#ifndef __SKIP_INTERNAL_FATBINARY_HEADERS\n"
    "#include \"fatbinary_section.h\"\n"
    "#endif\n"
    "#define __CUDAFATBINSECTION  \".nvFatBinSegment\"\n"
    "#define __CUDAFATBINDATASECTION  \".nv_fatbin\"\n"
    "asm(\n"
    "\".section .nv_fatbin, \\\"a\\\"\\n\"\n"
    "\".align 8\\n\"\n"
    "\"fatbinData:\\n\"\n"
    "\".quad 0x0000000000000000\\n\"\n"
    "\".text\\n\");\n"
    "#ifdef __cplusplus\n"
    "extern \"C\" {\n"
    "#endif\n"
    "extern const unsigned long long fatbinData[1];\n"
    "#ifdef __cplusplus\n"
    "}\n"
    "#endif\n"
    "#ifdef __cplusplus\n"
    "extern \"C\" {\n"
    "#endif\n"
    "static const __fatBinC_Wrapper_t __fatDeviceText __attribute__ ((aligned (8))) "
    "__attribute__ ((section (__CUDAFATBINSECTION)))= \n"
    "\t{ 0x466243b1, 1, fatbinData, 0 };\n"
    "#ifdef __cplusplus\n"
    "}\n"
    "#endif\n";

// Appends the values of one `".quad 0x..., 0x...\n"` line.
absl::Status AppendQuads(absl::string_view line, std::string& bytes) {
  absl::string_view values = line.substr(kQuadPrefix.size());
  if (!absl::ConsumeSuffix(&values, "\\n\"")) {
    return absl::InvalidArgumentError(absl::StrCat("unexpected .fatbin.c line: ", line));
  }
  for (absl::string_view value : absl::StrSplit(values, ',')) {
    value = absl::StripAsciiWhitespace(value);
    uint64_t quad = 0;
    if (!absl::ConsumePrefix(&value, "0x") || value.size() != 16 ||
        !absl::SimpleHexAtoi(value, &quad)) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected .fatbin.c value in: ", line));
    }
    char le[sizeof(quad)];
    std::memcpy(le, &quad, sizeof(quad));  // hosts are little-endian, as the ELF target
    bytes.append(le, sizeof(le));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<EmbeddedFatbin> ParseEmbeddedFatbin(absl::string_view text) {
  EmbeddedFatbin out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, kQuadPrefix)) {
      if (absl::Status s = AppendQuads(line, out.bytes); !s.ok()) return s;
      continue;
    }
    if (absl::StartsWith(line, kArrayDeclaration)) {
      absl::StrAppend(&out.frame, kArrayDeclaration, "];\n");
      continue;
    }
    absl::StrAppend(&out.frame, line, "\n");
  }
  if (out.bytes.empty()) return absl::InvalidArgumentError("a .fatbin.c without .quad lines");
  return out;
}

std::string PlaceholderFatbinC() { return std::string(kPlaceholder); }

}  // namespace farm
