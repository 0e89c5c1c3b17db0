#include "libfarm/cc/source_text_checks.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace farm::cc {
namespace {

size_t SkipBlanks(absl::string_view text, size_t i) {
  while (i < text.size() && absl::ascii_isblank(text[i])) ++i;
  return i;
}

// The name in "<x>" or "\"x\"" at text[i], if there is one on this line.
bool ReadHeaderName(absl::string_view text, size_t i, std::string& name) {
  if (i >= text.size() || (text[i] != '<' && text[i] != '"')) return false;
  char close = text[i] == '<' ? '>' : '"';
  size_t end = i + 1;
  while (end < text.size() && text[end] != close && text[end] != '\n') ++end;
  if (end >= text.size() || text[end] != close || end == i + 1) return false;
  name = std::string(text.substr(i + 1, end - i - 1));
  return true;
}

}  // namespace

bool MentionsTimeMacros(absl::string_view text) {
  // Whole names only: glibc's headers are full of __TIME_T_TYPE and the like.
  return absl::StrContains(text, "__DATE__") || absl::StrContains(text, "__TIME__") ||
         absl::StrContains(text, "__TIMESTAMP__");
}

std::vector<IncludedName> IncludedNames(absl::string_view text) {
  std::vector<IncludedName> names;
  std::string name;
  // Directives: '#' first on a line (after blanks), then include / include_next / import.
  for (size_t line = 0; line < text.size();) {
    size_t end = text.find('\n', line);
    if (end == absl::string_view::npos) end = text.size();
    size_t i = SkipBlanks(text, line);
    if (i < end && text[i] == '#') {
      i = SkipBlanks(text, i + 1);
      absl::string_view rest = text.substr(i, end - i);
      for (absl::string_view directive : {"include_next", "include", "import"}) {
        if (absl::StartsWith(rest, directive)) {
          if (ReadHeaderName(text, SkipBlanks(text, i + directive.size()), name)) {
            names.push_back({name, false});
          }
          break;
        }
      }
    }
    line = end + 1;
  }
  constexpr absl::string_view kProbe = "__has_include";
  size_t at = 0;
  while ((at = text.find(kProbe, at)) != absl::string_view::npos) {
    size_t i = at + kProbe.size();
    at = i;
    if (text.substr(i, 5) == "_next") i += 5;
    i = SkipBlanks(text, i);
    if (i >= text.size() || text[i] != '(') continue;
    if (ReadHeaderName(text, SkipBlanks(text, i + 1), name)) names.push_back({name, true});
  }
  return names;
}

}  // namespace farm::cc
