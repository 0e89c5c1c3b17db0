#include "libfarm/cc/source_text_checks.h"

#include <string.h>

#include <algorithm>
#include <set>
#include <utility>

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

bool IsIdentifierChar(char c) { return absl::ascii_isalnum(c) || c == '_'; }

bool NamesProbe(absl::string_view identifier, absl::string_view needle) {
  return Find(identifier, needle) != absl::string_view::npos;
}

// Whether an identifier says it probes for a header (__has_include, FMT_HAS_INCLUDE).
bool NamesAProbe(absl::string_view identifier) {
  return NamesProbe(identifier, "has_include") || NamesProbe(identifier, "HAS_INCLUDE");
}

// Where the logical line holding text[pos] starts: its own line, or an earlier one that
// backslashes splice it onto.
size_t LogicalLineStart(absl::string_view text, size_t pos) {
  size_t start = pos;
  while (start > 0) {
    const size_t newline = text.rfind('\n', start - 1);
    if (newline == absl::string_view::npos) return 0;
    size_t last = newline;
    if (last > 0 && text[last - 1] == '\r') --last;
    if (last == 0 || text[last - 1] != '\\') return newline + 1;
    start = newline;
  }
  return 0;
}

// The macro the #define on the logical line from `line_start` defines; empty for another line.
absl::string_view DefinedName(absl::string_view text, size_t line_start) {
  size_t i = SkipBlanks(text, line_start);
  if (i >= text.size() || text[i] != '#') return {};
  i = SkipBlanks(text, i + 1);
  constexpr absl::string_view kDefine = "define";
  if (!absl::StartsWith(text.substr(i), kDefine)) return {};
  i = SkipBlanks(text, i + kDefine.size());
  size_t end = i;
  while (end < text.size() && IsIdentifierChar(text[end])) ++end;
  return text.substr(i, end - i);
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
// for the compiler. With `blank_literals` false only the comments go.
std::string CodeOnly(absl::string_view text, bool blank_literals = true) {
  std::string out(text);
  size_t i = 0;
  auto blank = [&](size_t from, size_t to, bool literal = false) {
    if (literal && !blank_literals) return;
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
      blank(i, end, /*literal=*/true);
      i = end;
    } else if (c == '"' || (c == '\'' && !(i > 0 && absl::ascii_isxdigit(text[i - 1])))) {
      // A quoted literal to its closing quote on the line; a ' between digits (1'000) is a
      // digit separator, not a literal.
      size_t end = i + 1;
      while (end < text.size() && text[end] != c && text[end] != '\n') {
        end += text[end] == '\\' ? 2 : 1;
      }
      end = std::min(end + 1, text.size());
      blank(i, end, /*literal=*/true);
      i = end;
    } else {
      ++i;
    }
  }
  return out;
}

// The header names in `text`, appended to `names`, and whether it may look one up by a name
// this cannot read (`cannot_read`).
void ReadIncludes(absl::string_view text, std::vector<IncludedName>& names, bool& cannot_read) {
  std::string name;
  // Directives: '#' first on a line (after blanks), then include / include_next / import.
  // Found from each '#' (a header has far fewer of them than lines), looking back for the
  // line's start.
  for (size_t hash = 0; (hash = text.find('#', hash)) != absl::string_view::npos; ++hash) {
    size_t before = hash;
    while (before > 0 && absl::ascii_isblank(text[before - 1])) --before;
    if (before > 0 && text[before - 1] != '\n') {
      // "/* c */ #include x": still a directive.
      if (before >= 2 && text[before - 1] == '/' && text[before - 2] == '*') cannot_read = true;
      continue;
    }
    size_t end = text.find('\n', hash);
    if (end == absl::string_view::npos) end = text.size();
    const size_t i = SkipBlanks(text, hash + 1);
    if (i < text.size() && (text[i] == '/' || text[i] == '\\')) {
      cannot_read = true;  // "# /* c */ include", "#\<newline>include"
      continue;
    }
    absl::string_view rest = text.substr(i, end - i);
    bool include = false;
    for (absl::string_view directive : {"include_next", "include", "import"}) {
      if (absl::StartsWith(rest, directive)) {
        include = true;
        const size_t at = SkipBlanks(text, i + directive.size());
        if (ReadHeaderName(text, at, name)) {
          names.push_back({name, false});
        } else {
          cannot_read = true;  // #include HEADER
        }
        break;
      }
    }
    if (!include && (absl::StartsWith(rest, "embed") ||
                     (absl::StartsWith(rest, "pragma") && absl::StrContains(rest, "dependency")))) {
      cannot_read = true;
    }
  }
  // Probes: __has_include(<x>), __has_include_next, and wrappers named for them.
  for (absl::string_view needle : {"has_include", "HAS_INCLUDE"}) {
    for (size_t at = 0; (at = Find(text, needle, at)) != absl::string_view::npos;) {
      size_t start = at;
      while (start > 0 && IsIdentifierChar(text[start - 1])) --start;
      size_t end = at + needle.size();
      while (end < text.size() && IsIdentifierChar(text[end])) ++end;
      at = end;
      const absl::string_view identifier = text.substr(start, end - start);
      if (needle == "HAS_INCLUDE" && NamesProbe(identifier, "has_include")) continue;  // seen
      size_t i = SkipBlanks(text, end);
      if (i >= text.size() || text[i] != '(') {
        // `#ifdef __has_include`, `defined(X)`, `#undef X`, X's own #define: no lookup. Only
        // another macro's body passes the name on: `#define P __has_include`.
        const absl::string_view defined = DefinedName(text, LogicalLineStart(text, start));
        if (!defined.empty() && defined != identifier && !NamesAProbe(defined)) {
          cannot_read = true;
        }
        continue;
      }
      i = SkipBlanks(text, i + 1);
      if (ReadHeaderName(text, i, name)) {
        names.push_back({name, true});
        continue;
      }
      // A parameter: fine in the definition of a wrapper whose uses this finds by its name.
      if (!NamesAProbe(DefinedName(text, LogicalLineStart(text, start)))) cannot_read = true;
    }
  }
  if (!cannot_read) {
    // %:include (a digraph) and ??=include (a trigraph, in ISO modes) are directives too.
    for (size_t at = 0; (at = Find(text, "%:", at)) != absl::string_view::npos; at += 2) {
      size_t before = at;
      while (before > 0 && absl::ascii_isblank(text[before - 1])) --before;
      if (before == 0 || text[before - 1] == '\n') {
        cannot_read = true;
        break;
      }
    }
    if (Find(text, "?\?=") != absl::string_view::npos) cannot_read = true;
  }
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

std::vector<IncludedName> IncludedNames(absl::string_view text, bool* unread) {
  std::vector<IncludedName> names;
  bool cannot_read = false;
  ReadIncludes(text, names, cannot_read);
  if (cannot_read) {
    // Comments can fake an unreadable directive (`// #include MACRO` at a line's start in a
    // block comment) or hide a readable one (`# /* c */ include <a.h>`): read the text again
    // with them blanked, and only that answer counts.
    cannot_read = false;
    std::vector<IncludedName> again;
    ReadIncludes(CodeOnly(text, /*blank_literals=*/false), again, cannot_read);
    std::set<std::pair<std::string, bool>> known;
    for (const IncludedName& n : names) known.emplace(n.name, n.probe);
    for (IncludedName& n : again) {
      if (known.emplace(n.name, n.probe).second) names.push_back(std::move(n));
    }
  }
  if (unread != nullptr && cannot_read) *unread = true;
  return names;
}

}  // namespace farm::cc
