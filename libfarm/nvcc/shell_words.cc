#include "libfarm/nvcc/shell_words.h"

#include <cctype>

#include "absl/strings/str_cat.h"

namespace farm {

absl::StatusOr<std::vector<std::string>> SplitShellWords(absl::string_view text) {
  std::vector<std::string> words;
  std::string current;
  // A word may be empty but present (""), so track "in a word" separately from its text.
  bool in_word = false;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(std::move(current));
      current.clear();
      in_word = false;
      ++i;
    } else if (c == '\'') {
      const size_t end = text.find('\'', i + 1);
      if (end == absl::string_view::npos) {
        return absl::InvalidArgumentError(absl::StrCat("unterminated ' in: ", text));
      }
      current.append(text.data() + i + 1, end - i - 1);
      in_word = true;
      i = end + 1;
    } else if (c == '"') {
      in_word = true;
      ++i;
      bool closed = false;
      while (i < text.size()) {
        const char d = text[i];
        if (d == '"') {
          closed = true;
          ++i;
          break;
        }
        if (d == '\\' && i + 1 < text.size() &&
            (text[i + 1] == '"' || text[i + 1] == '\\' || text[i + 1] == '$' ||
             text[i + 1] == '`')) {
          current.push_back(text[i + 1]);
          i += 2;
          continue;
        }
        current.push_back(d);
        ++i;
      }
      if (!closed) return absl::InvalidArgumentError(absl::StrCat("unterminated \" in: ", text));
    } else if (c == '\\' && i + 1 < text.size()) {
      current.push_back(text[i + 1]);
      in_word = true;
      i += 2;
    } else {
      current.push_back(c);
      in_word = true;
      ++i;
    }
  }
  if (in_word) words.push_back(std::move(current));
  return words;
}

std::string ExpandShellVariables(absl::string_view word,
                                 const std::vector<std::pair<std::string, std::string>>& vars) {
  auto lookup = [&vars](absl::string_view name) -> std::string {
    // The last assignment wins, as when a shell runs them in order.
    for (auto it = vars.rbegin(); it != vars.rend(); ++it) {
      if (it->first == name) return it->second;
    }
    return "";
  };
  auto is_name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  std::string out;
  size_t i = 0;
  while (i < word.size()) {
    if (word[i] != '$' || i + 1 >= word.size()) {
      out.push_back(word[i++]);
      continue;
    }
    if (word[i + 1] == '{') {
      const size_t end = word.find('}', i + 2);
      if (end == absl::string_view::npos) {
        out.append(word.data() + i, word.size() - i);
        break;
      }
      out.append(lookup(word.substr(i + 2, end - i - 2)));
      i = end + 1;
      continue;
    }
    size_t end = i + 1;
    while (end < word.size() && is_name_char(word[end])) ++end;
    if (end == i + 1) {
      out.push_back(word[i++]);
      continue;
    }
    out.append(lookup(word.substr(i + 1, end - i - 1)));
    i = end;
  }
  return out;
}

std::string ShellQuote(absl::string_view word) {
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

}  // namespace farm
