#include "libfarm/cc/depfile_layout.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace farm::cc {
namespace {

absl::Status NotRewritable(absl::string_view why) {
  return absl::FailedPreconditionError(absl::StrCat("the dependency file ", why));
}

struct DepfileRule {
  std::vector<std::string> targets;
  std::vector<std::string> prerequisites;
};

// GCC's mkdeps.cc: a name that would pass column 72 starts a new line (" \\\n"), and every
// name but a line's first target follows one space.
std::string GccLayout(const DepfileRule& rule) {
  constexpr size_t kColumns = 72;
  std::string out;
  size_t column = 0;
  auto write = [&](const std::string& name) {
    if (column != 0) {
      if (column + name.size() > kColumns) {
        out += " \\\n";
        column = 0;
      }
      ++column;
      out += ' ';
    }
    column += name.size();
    out += name;
  };
  for (const std::string& t : rule.targets) write(t);
  out += ':';
  ++column;
  for (const std::string& p : rule.prerequisites) write(p);
  out += '\n';
  return out;
}

// clang's DependencyFileGenerator: 75 columns, with room left for a trailing " \".
std::string ClangLayout(const DepfileRule& rule) {
  constexpr size_t kColumns = 75;
  std::string out;
  size_t column = 0;
  for (const std::string& t : rule.targets) {
    if (column == 0) {
      column += t.size();
    } else if (column + t.size() + 2 > kColumns) {
      column = t.size() + 2;
      out += " \\\n  ";
    } else {
      column += t.size() + 1;
      out += ' ';
    }
    out += t;
  }
  out += ':';
  ++column;
  for (const std::string& p : rule.prerequisites) {
    if (column + (p.size() + 1) + 2 > kColumns) {
      out += " \\\n ";
      column = 2;
    }
    out += ' ';
    out += p;
    column += p.size() + 1;
  }
  out += '\n';
  return out;
}

std::string Layout(const DepfileRule& rule, CompilerFamily family) {
  return family == CompilerFamily::kGcc ? GccLayout(rule) : ClangLayout(rule);
}

// The rule on the file's first logical line ("T...: P... \\\n P..."), or an error.
absl::StatusOr<DepfileRule> ParseRule(absl::string_view line) {
  DepfileRule rule;
  bool in_targets = true;
  for (absl::string_view word : absl::StrSplit(line, absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
    if (word == "\\") continue;  // a line continuation
    if (absl::StrContains(word, '\\')) return NotRewritable("spells a name with an escape");
    if (in_targets && absl::EndsWith(word, ":")) {
      word.remove_suffix(1);
      if (!word.empty()) rule.targets.emplace_back(word);
      in_targets = false;
      continue;
    }
    (in_targets ? rule.targets : rule.prerequisites).emplace_back(word);
  }
  if (in_targets || rule.targets.empty()) return NotRewritable("has no rule");
  return rule;
}

}  // namespace

absl::StatusOr<std::string> RewriteDepfilePaths(absl::string_view text, CompilerFamily family,
                                                const DepfilePathMap& map) {
  // The rule ends at the first newline that no backslash continues.
  size_t end = 0;
  for (;; ++end) {
    end = text.find('\n', end);
    if (end == absl::string_view::npos) return NotRewritable("does not end its rule's line");
    if (end == 0 || text[end - 1] != '\\') break;
  }
  const absl::string_view rule_text = text.substr(0, end + 1);
  auto rule = ParseRule(rule_text.substr(0, end));
  if (!rule.ok()) return rule.status();
  if (Layout(*rule, family) != rule_text) {
    return NotRewritable("is not laid out the way farm-cc lays out this compiler's");
  }
  DepfileRule mapped;
  for (auto [from, into] : {std::pair{&rule->targets, &mapped.targets},
                            std::pair{&rule->prerequisites, &mapped.prerequisites}}) {
    for (const std::string& name : *from) {
      auto m = map(name);
      if (!m.ok()) return m.status();
      into->push_back(*std::move(m));
    }
  }
  std::string out = Layout(mapped, family);
  // -MP's phony rules, one "NAME:" per line (clang puts an empty line before each).
  absl::string_view rest = text.substr(end + 1);
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    if (nl == absl::string_view::npos) return NotRewritable("does not end its last line");
    absl::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    if (!line.empty()) {
      if (!absl::EndsWith(line, ":") || absl::StrContains(line, ' ') ||
          absl::StrContains(line, '\\')) {
        return NotRewritable(absl::StrCat("holds a line farm-cc does not know: '", line, "'"));
      }
      line.remove_suffix(1);
      auto m = map(line);
      if (!m.ok()) return m.status();
      absl::StrAppend(&out, *m, ":");
    }
    out += '\n';
  }
  return out;
}

}  // namespace farm::cc
