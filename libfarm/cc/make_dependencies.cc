#include "libfarm/cc/make_dependencies.h"

#include <set>

namespace farm::cc {

std::vector<std::string> ParseMakeDependencies(absl::string_view text) {
  std::vector<std::string> files;
  std::set<std::string> seen;
  std::vector<std::string> line_words;  // the words of this rule so far
  bool after_colon = false;
  std::string word;
  bool in_word = false;
  auto end_word = [&] {
    if (!in_word) return;
    in_word = false;
    if (!after_colon && !word.empty() && word.back() == ':') {
      // "t.o:" or a lone ':': everything before it on this rule is a target.
      line_words.clear();
      after_colon = true;
    } else {
      line_words.push_back(std::move(word));
    }
    word.clear();
  };
  auto end_rule = [&] {
    end_word();
    for (std::string& file : line_words) {
      if (seen.insert(file).second) files.push_back(std::move(file));
    }
    line_words.clear();
    after_colon = false;
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
    if (c == '\n') {
      end_rule();
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      end_word();
      ++i;
      continue;
    }
    word.push_back(c);
    in_word = true;
    ++i;
  }
  end_rule();
  return files;
}

}  // namespace farm::cc
