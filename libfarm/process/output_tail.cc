#include "libfarm/process/output_tail.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "libfarm/text/utf8.h"

namespace farm {

std::string TailLines(const std::string& text, int max_lines) {
  std::vector<absl::string_view> lines =
      absl::StrSplit(absl::StripTrailingAsciiWhitespace(text), '\n');
  if (lines.size() == 1 && lines.front().empty()) return "";
  const size_t keep = std::min(lines.size(), static_cast<size_t>(std::max(max_lines, 0)));
  std::string tail =
      absl::StrJoin(lines.end() - static_cast<std::ptrdiff_t>(keep), lines.end(), "\n");
  if (tail.size() > 4000) tail = absl::StrCat("...", Utf8Tail(tail, 4000));
  return tail;
}

}  // namespace farm
