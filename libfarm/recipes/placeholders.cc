#include "libfarm/recipes/placeholders.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace farm {
namespace {

bool IsNameChar(char c) { return (c >= 'a' && c <= 'z') || c == '_'; }

// If a placeholder starts at text[i] ('{'), its name's length; otherwise 0.
size_t PlaceholderNameLength(absl::string_view text, size_t i) {
  if (text[i] != '{' || (i > 0 && text[i - 1] == '$')) return 0;
  size_t j = i + 1;
  while (j < text.size() && IsNameChar(text[j])) ++j;
  if (j == i + 1 || j >= text.size() || text[j] != '}') return 0;
  return j - i - 1;
}

std::string Braced(const std::vector<std::string>& names) {
  std::vector<std::string> braced;
  for (const std::string& n : names) braced.push_back(absl::StrCat("{", n, "}"));
  return absl::StrJoin(braced, ", ");
}

// Walks `text`, calling `on_literal` for literal runs and `on_placeholder` for names.
template <typename Literal, typename Placeholder>
void Scan(absl::string_view text, Literal on_literal, Placeholder on_placeholder) {
  for (size_t i = 0; i < text.size();) {
    if ((text[i] == '{' || text[i] == '}') && i + 1 < text.size() && text[i + 1] == text[i]) {
      on_literal(text.substr(i, 1));
      i += 2;
      continue;
    }
    if (size_t n = PlaceholderNameLength(text, i); n > 0) {
      on_placeholder(std::string(text.substr(i + 1, n)));
      i += n + 2;
      continue;
    }
    on_literal(text.substr(i, 1));
    ++i;
  }
}

}  // namespace

const std::vector<std::string>& BuildPlaceholders() {
  static const auto* names =
      new std::vector<std::string>{"archs", "cmake_archs", "sm_archs", "jobs",   "farm_jobs",
                                   "cuda",  "cuda_home",   "python",   "version"};
  return *names;
}

const std::vector<std::string>& SourcePlaceholders() {
  static const auto* names = new std::vector<std::string>{"version"};
  return *names;
}

const std::vector<std::string>& PublishPlaceholders() {
  static const auto* names = new std::vector<std::string>{"wheel", "filename", "name", "version"};
  return *names;
}

std::vector<std::string> FindPlaceholders(absl::string_view text) {
  std::vector<std::string> found;
  Scan(
      text, [](absl::string_view) {}, [&](std::string name) { found.push_back(std::move(name)); });
  return found;
}

absl::Status CheckPlaceholders(absl::string_view text, const std::vector<std::string>& allowed) {
  for (const std::string& name : FindPlaceholders(text)) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown placeholder {", name,
                                                     "}: use one of ", Braced(allowed),
                                                     " (write {{ and }} for literal braces)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ExpandPlaceholders(absl::string_view text,
                                               const std::map<std::string, std::string>& values) {
  std::string out;
  std::string missing;
  Scan(
      text, [&](absl::string_view literal) { absl::StrAppend(&out, literal); },
      [&](const std::string& name) {
        auto it = values.find(name);
        if (it == values.end()) {
          if (missing.empty()) missing = name;
          return;
        }
        out += it->second;
      });
  if (!missing.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no value for placeholder {", missing, "} in \"", text, "\""));
  }
  return out;
}

std::string ExpandHostVariables(
    absl::string_view text,
    const std::function<std::optional<std::string>(const std::string&)>& lookup) {
  auto is_var_start = [](char c) { return absl::ascii_isalpha(c) || c == '_'; };
  auto is_var_char = [](char c) { return absl::ascii_isalnum(c) || c == '_'; };
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out.push_back(text[i++]);
      continue;
    }
    if (text[i + 1] == '$') {
      out.push_back('$');
      i += 2;
      continue;
    }
    if (text[i + 1] == '{') {
      const size_t close = text.find('}', i + 2);
      if (close == absl::string_view::npos) {
        absl::StrAppend(&out, text.substr(i));
        break;
      }
      absl::string_view inner = text.substr(i + 2, close - i - 2);
      std::string fallback;
      if (size_t dash = inner.find(":-"); dash != absl::string_view::npos) {
        fallback = std::string(inner.substr(dash + 2));
        inner = inner.substr(0, dash);
      }
      std::optional<std::string> value = lookup(std::string(inner));
      out += value && !value->empty() ? *value : fallback;
      i = close + 1;
      continue;
    }
    if (is_var_start(text[i + 1])) {
      size_t j = i + 1;
      while (j < text.size() && is_var_char(text[j])) ++j;
      std::optional<std::string> value = lookup(std::string(text.substr(i + 1, j - i - 1)));
      if (value) out += *value;
      i = j;
      continue;
    }
    out.push_back(text[i++]);
  }
  return out;
}

}  // namespace farm
