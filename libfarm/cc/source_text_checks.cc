#include "libfarm/cc/source_text_checks.h"

#include <string.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace farm::cc {
namespace {

// text.find(needle, from) by glibc's memmem: absl's find stops at each occurrence of the
// needle's first byte, and the needles here start with '_', of which C++ headers are full.
// This and reading the files were a sixth of farm-cc's own CPU per compile before.
size_t Find(absl::string_view text, absl::string_view needle, size_t from = 0) {
  if (from > text.size()) return absl::string_view::npos;
  const void* at = ::memmem(text.data() + from, text.size() - from, needle.data(), needle.size());
  return at == nullptr ? absl::string_view::npos
                       : static_cast<size_t>(static_cast<const char*>(at) - text.data());
}

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

// `text` with its comments and its string and character literals (raw strings included) as
// blanks: what the preprocessor may expand. Line splices continue a // comment as they do
// for the compiler.
std::string CodeOnly(absl::string_view text) {
  std::string out(text);
  size_t i = 0;
  auto blank = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < out.size(); ++k) {
      if (out[k] != '\n') out[k] = ' ';
    }
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      size_t end = i + 2;
      while (end < text.size() && !(text[end] == '\n' && text[end - 1] != '\\')) ++end;
      blank(i, end);
      i = end;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const size_t close = text.find("*/", i + 2);
      const size_t end = close == absl::string_view::npos ? text.size() : close + 2;
      blank(i, end);
      i = end;
    } else if (c == '"' && i > 0 && text[i - 1] == 'R') {
      // R"delim( ... )delim"
      const size_t open = text.find('(', i + 1);
      if (open == absl::string_view::npos) break;
      const std::string close = absl::StrCat(")", text.substr(i + 1, open - i - 1), "\"");
      const size_t at = text.find(close, open + 1);
      const size_t end = at == absl::string_view::npos ? text.size() : at + close.size();
      blank(i, end);
      i = end;
    } else if (c == '"' || (c == '\'' && !(i > 0 && absl::ascii_isxdigit(text[i - 1])))) {
      // A quoted literal to its closing quote on the line; a ' between digits (1'000) is a
      // digit separator, not a literal.
      size_t end = i + 1;
      while (end < text.size() && text[end] != c && text[end] != '\n') {
        end += text[end] == '\\' ? 2 : 1;
      }
      end = std::min(end + 1, text.size());
      blank(i, end);
      i = end;
    } else {
      ++i;
    }
  }
  return out;
}

}  // namespace

bool MentionsTimeMacros(absl::string_view text) {
  // Whole names only: glibc's headers are full of __TIME_T_TYPE and the like. In comments and
  // literals they expand to nothing (a header documenting its own check, a message naming it).
  // Two passes, not three: __TIME__ and __TIMESTAMP__ both begin with __TIME.
  auto names_one = [](absl::string_view t) {
    if (Find(t, "__DATE__") != absl::string_view::npos) return true;
    constexpr absl::string_view kTime = "__TIME";
    for (size_t at = 0; (at = Find(t, kTime, at)) != absl::string_view::npos;) {
      at += kTime.size();
      const absl::string_view rest = t.substr(at);
      if (absl::StartsWith(rest, "__") || absl::StartsWith(rest, "STAMP__")) return true;
    }
    return false;
  };
  // Nearly every file names none anywhere: then there is no code to strip it from.
  return names_one(text) && names_one(CodeOnly(text));
}

std::vector<IncludedName> IncludedNames(absl::string_view text) {
  std::vector<IncludedName> names;
  std::string name;
  // Directives: '#' first on a line (after blanks), then include / include_next / import.
  // Found from each '#' (a header has far fewer of them than lines), looking back for the
  // line's start.
  for (size_t hash = 0; (hash = text.find('#', hash)) != absl::string_view::npos; ++hash) {
    size_t before = hash;
    while (before > 0 && absl::ascii_isblank(text[before - 1])) --before;
    if (before > 0 && text[before - 1] != '\n') continue;
    size_t end = text.find('\n', hash);
    if (end == absl::string_view::npos) end = text.size();
    const size_t i = SkipBlanks(text, hash + 1);
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
  constexpr absl::string_view kProbe = "__has_include";
  size_t at = 0;
  while ((at = Find(text, kProbe, at)) != absl::string_view::npos) {
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
