#include "libfarm/units/byte_size.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace farm {

absl::StatusOr<uint64_t> ParseByteSize(const std::string& text) {
  const std::string t(absl::StripAsciiWhitespace(text));
  size_t unit_at = 0;
  while (unit_at < t.size() && (absl::ascii_isdigit(t[unit_at]) || t[unit_at] == '.')) ++unit_at;
  std::string unit = absl::AsciiStrToLower(absl::StripAsciiWhitespace(t.substr(unit_at)));
  double number = 0;
  const auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid size '", text, "': use a number with an optional unit, e.g. 512MiB or 20GiB"));
  };
  if (unit_at == 0 || !absl::SimpleAtod(t.substr(0, unit_at), &number) || number < 0) return bad();
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();
  if (unit.size() == 2 && unit[1] == 'i') unit.pop_back();
  int shift = 0;
  if (unit.empty()) {
    shift = 0;
  } else if (unit == "k") {
    shift = 10;
  } else if (unit == "m") {
    shift = 20;
  } else if (unit == "g") {
    shift = 30;
  } else if (unit == "t") {
    shift = 40;
  } else {
    return bad();
  }
  const double bytes = std::ldexp(number, shift);
  if (bytes >= 18e18) return bad();
  return static_cast<uint64_t>(bytes);
}

std::string FormatByteSize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  if (u == 0) return absl::StrCat(bytes, " B");
  return absl::StrFormat("%.1f %s", v, kUnits[u]);
}

}  // namespace farm
