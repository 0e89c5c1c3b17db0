#include "libfarm/cc/make_dependencies.h"

#include <set>

namespace farm::cc {

std::vector<std::string> ParseMakeDependencies(absl::string_view text) {
  std::vector<std::string> files;
  std::set<std::string> seen;
  std::string word;
  bool in_word = false;
  auto end_word = [&] {
    if (!in_word) return;
    in_word = false;
    // A target ("t.o:"), or the lone ':' some writers put after one.
    if (!word.empty() && word.back() == ':') {
      word.clear();
      return;
    }
    if (seen.insert(word).second) files.push_back(word);
    word.clear();
  };
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '\\') {
      size_t run = 0;
      while (i + run < text.size() && text[i + run] == '\\') ++run;
      char next = i + run < text.size() ? text[i + run] : '\0';
      if (next == '\n' ||
          (next == '\r' && i + run + 1 < text.size() && text[i + run + 1] == '\n')) {
        // Line continuation: the backslashes before it (but the last) are part of the word.
        word.append(run - 1, '\\');
        if (run > 1) in_word = true;
        end_word();
        i += run + (next == '\r' ? 2 : 1);
        continue;
      }
      if (next == ' ' || next == '\t') {
        word.append(run / 2, '\\');
        in_word = true;
        if (run % 2 == 1) {
          word.push_back(next);
          i += run + 1;
        } else {
          i += run;  // the blank ends the word
        }
        continue;
      }
      if ((next == '#' || next == ':') && run == 1) {
        word.push_back(next);
        in_word = true;
        i += 2;
        continue;
      }
      word.append(run, '\\');
      in_word = true;
      i += run;
      continue;
    }
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      word.push_back('$');
      in_word = true;
      i += 2;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      end_word();
      ++i;
      continue;
    }
    word.push_back(c);
    in_word = true;
    ++i;
  }
  end_word();
  return files;
}

}  // namespace farm::cc
