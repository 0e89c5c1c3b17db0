// The locale files a compile's diagnostics depend on. GCC quotes with ‘’ and translates its
// messages when the locale says so; a sandbox without the locale's files would fall back to
// the C locale and print other bytes. So a compile run under a locale other than C/POSIX ships
// the files that locale needs (in its input tree), and the worker's compile prints what the
// build host's would.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace farm {

// Absolute paths of the existing files for the locales `env` selects for LC_CTYPE and
// LC_MESSAGES (LC_ALL, else LC_xxx, else LANG): the locale archive or the locale's directory
// under /usr/lib/locale, and the gcc/cpplib message catalogs under /usr/share/locale. None
// for C, POSIX or nothing set.
std::vector<std::string> LocaleFiles(const std::map<std::string, std::string>& env);

}  // namespace farm
