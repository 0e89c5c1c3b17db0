#include "libfarm/elf/ar_archive.h"

#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace farm {
namespace {

constexpr std::string_view kMagic = "!<arch>\n";
constexpr std::string_view kThinMagic = "!<thin>\n";
constexpr uint64_t kHeaderSize = 60;

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed ar archive: ", what));
}

std::string_view Field(ByteSpan header, size_t offset, size_t size) {
  std::string_view text = AsChars(header.subspan(offset, size));
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

}  // namespace

bool HasArMagic(ByteSpan data) {
  return AsChars(data).substr(0, kMagic.size()) == kMagic ||
         AsChars(data).substr(0, kThinMagic.size()) == kThinMagic;
}

absl::StatusOr<std::vector<ArMember>> ReadArArchive(ByteSpan data) {
  if (AsChars(data).substr(0, kThinMagic.size()) == kThinMagic) {
    return absl::UnimplementedError(
        "thin ar archive: its members live in other files; inspect those files instead");
  }
  if (AsChars(data).substr(0, kMagic.size()) != kMagic) return Malformed("no !<arch> magic");
  std::vector<ArMember> members;
  ByteSpan long_names;
  uint64_t offset = kMagic.size();
  while (offset < data.size()) {
    const auto header = SubSpan(data, offset, kHeaderSize);
    if (!header) return Malformed(absl::StrCat("truncated member header at offset ", offset));
    if ((*header)[58] != '`' || (*header)[59] != '\n') {
      return Malformed(absl::StrCat("bad member header terminator at offset ", offset));
    }
    uint64_t size = 0;
    const std::string_view size_field = Field(*header, 48, 10);
    if (!absl::SimpleAtoi(absl::string_view(size_field.data(), size_field.size()), &size)) {
      return Malformed(absl::StrCat("bad member size at offset ", offset));
    }
    auto body = SubSpan(data, offset + kHeaderSize, size);
    if (!body) return Malformed(absl::StrCat("member at offset ", offset, " runs past the end"));
    std::string_view name = Field(*header, 0, 16);
    std::string member_name;
    if (name == "/" || name == "/SYM64/" || name == "__.SYMDEF" || name == "__.SYMDEF SORTED") {
      // symbol index: not a file
    } else if (name == "//") {
      long_names = *body;
    } else if (name.size() > 1 && name[0] == '/') {
      uint64_t name_offset = 0;
      if (!absl::SimpleAtoi(absl::string_view(name.data() + 1, name.size() - 1), &name_offset) ||
          name_offset >= long_names.size()) {
        return Malformed(absl::StrCat("bad long-name reference ", std::string(name)));
      }
      std::string_view rest = AsChars(long_names.subspan(name_offset));
      const size_t end = rest.find("/\n");
      if (end == std::string_view::npos) return Malformed("unterminated long name");
      member_name = std::string(rest.substr(0, end));
    } else if (name.substr(0, 3) == "#1/") {
      // BSD: the name is stored at the start of the member's data.
      uint64_t name_size = 0;
      if (!absl::SimpleAtoi(absl::string_view(name.data() + 3, name.size() - 3), &name_size) ||
          name_size > body->size()) {
        return Malformed(absl::StrCat("bad BSD name length in ", std::string(name)));
      }
      member_name = std::string(AsChars(body->subspan(0, name_size)));
      while (!member_name.empty() && member_name.back() == '\0') member_name.pop_back();
      body = body->subspan(name_size);
    } else {
      if (!name.empty() && name.back() == '/') name.remove_suffix(1);
      member_name = std::string(name);
    }
    if (!member_name.empty()) members.push_back(ArMember{std::move(member_name), *body});
    offset += kHeaderSize + size + (size & 1);  // members are 2-byte aligned
  }
  return members;
}

}  // namespace farm
