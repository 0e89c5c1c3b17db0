#include "farm_cc/locale_files.h"

#include <filesystem>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

std::string Get(const std::map<std::string, std::string>& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? std::string() : it->second;
}

std::string Effective(const std::map<std::string, std::string>& env, const std::string& category) {
  for (const std::string& key : {std::string("LC_ALL"), category, std::string("LANG")}) {
    const std::string v = Get(env, key);
    if (!v.empty()) return v;
  }
  return "";
}

// glibc's normalized codeset: "en_US.UTF-8" -> "en_US.utf8".
std::string Normalized(const std::string& locale) {
  const size_t dot = locale.find('.');
  if (dot == std::string::npos) return locale;
  std::string codeset = absl::AsciiStrToLower(locale.substr(dot + 1));
  codeset = absl::StrReplaceAll(codeset, {{"-", ""}});
  return locale.substr(0, dot + 1) + codeset;
}

void AddFilesUnder(const fs::path& dir, std::set<std::string>& out) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) out.insert(it->path().string());
  }
}

}  // namespace

std::vector<std::string> LocaleFiles(const std::map<std::string, std::string>& env) {
  std::set<std::string> out;
  std::error_code ec;
  for (const std::string category : {"LC_CTYPE", "LC_MESSAGES"}) {
    const std::string locale = Effective(env, category);
    if (locale.empty() || locale == "C" || locale == "POSIX") continue;
    if (fs::is_regular_file("/usr/lib/locale/locale-archive", ec)) {
      out.insert("/usr/lib/locale/locale-archive");
    }
    for (const std::string& name : {locale, Normalized(locale)}) {
      AddFilesUnder(fs::path("/usr/lib/locale") / name, out);
    }
    if (category != "LC_MESSAGES") continue;
    // Catalogs by language: "de_DE.UTF-8" looks in de_DE, then de.
    const std::string language = locale.substr(0, locale.find_first_of(".@"));
    for (const std::string& dir : {language, language.substr(0, language.find('_'))}) {
      const fs::path messages = fs::path("/usr/share/locale") / dir / "LC_MESSAGES";
      for (fs::directory_iterator it(messages, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (absl::StartsWith(name, "gcc") || absl::StartsWith(name, "cpplib")) {
          out.insert(it->path().string());
        }
      }
    }
  }
  return {out.begin(), out.end()};
}

}  // namespace farm
