#include "libfarm/nvcc/line_markers.h"

#include <map>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace farm {
namespace {

// Parses `# N "file" flags...` or `#line N "file"`; false for any other line. The file name
// is unescaped the way gcc escapes it (\" and \\).
bool ParseMarker(absl::string_view line, std::string& file, bool& system) {
  if (line.empty() || line[0] != '#') return false;
  size_t pos = 1;
  while (pos < line.size() && line[pos] == ' ') ++pos;
  if (line.substr(pos, 4) == "line") pos += 4;
  while (pos < line.size() && line[pos] == ' ') ++pos;
  const size_t digits = pos;
  while (pos < line.size() && absl::ascii_isdigit(static_cast<unsigned char>(line[pos]))) ++pos;
  if (pos == digits || pos + 1 >= line.size() || line[pos] != ' ' || line[pos + 1] != '"') {
    return false;
  }
  file.clear();
  pos += 2;
  while (pos < line.size() && line[pos] != '"') {
    if (line[pos] == '\\' && pos + 1 < line.size()) ++pos;
    file += line[pos++];
  }
  if (pos >= line.size()) return false;  // no closing quote
  system = false;
  for (absl::string_view flags = line.substr(pos + 1); !flags.empty();) {
    flags = absl::StripLeadingAsciiWhitespace(flags);
    const size_t end = flags.find(' ');
    if (flags.substr(0, end) == "3") system = true;
    flags = end == absl::string_view::npos ? absl::string_view() : flags.substr(end);
  }
  return true;
}

// Where the quoted file name of a line marker starts (after its opening quote), or npos for
// a line that is no marker.
size_t MarkerFileStart(absl::string_view line) {
  std::string file;
  bool system = false;
  if (!ParseMarker(line, file, system)) return absl::string_view::npos;
  return line.find('"') + 1;
}

// `text` quoted as gcc quotes a file name in a line marker.
std::string QuotedAsInMarker(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string LineMarkersFrom(absl::string_view text, absl::string_view dir) {
  const std::string prefix = QuotedAsInMarker(absl::StrCat(dir, "/"));
  std::string out;
  out.reserve(text.size());
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == absl::string_view::npos) end = text.size();
    const absl::string_view line = text.substr(at, end - at);
    const size_t start = MarkerFileStart(line);
    if (start != absl::string_view::npos && start < line.size() && line[start] != '/' &&
        line[start] != '<' && line[start] != '"') {
      absl::StrAppend(&out, line.substr(0, start), prefix, line.substr(start));
    } else {
      absl::StrAppend(&out, line);
    }
    if (end < text.size()) out += '\n';
    at = end + 1;
  }
  return out;
}

std::vector<LineMarkerFile> LineMarkerFiles(absl::string_view text) {
  std::vector<LineMarkerFile> files;
  std::map<std::string, size_t, std::less<>> index;
  std::optional<size_t> current;  // the file the lines below the last marker come from
  std::string file;
  bool system = false;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == absl::string_view::npos) end = text.size();
    const absl::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (!ParseMarker(line, file, system)) {
      if (current && !files[*current].device_code &&
          (absl::StrContains(line, "__attribute__((device))") ||
           absl::StrContains(line, "__attribute__((global))"))) {
        files[*current].device_code = true;
      }
      continue;
    }
    current.reset();
    if (file.empty() || file[0] == '<') continue;  // <built-in>, <command-line>
    // With -g gcc records its working directory as `# 1 "/dir//"` (-fworking-directory):
    // a directory, not a file read.
    if (absl::EndsWith(file, "//")) continue;
    auto [it, added] = index.emplace(file, files.size());
    if (added) files.push_back({file, system});
    current = it->second;
  }
  return files;
}

}  // namespace farm
