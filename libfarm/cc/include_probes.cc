#include "libfarm/cc/include_probes.h"

#include <sys/stat.h>

#include <set>

namespace farm::cc {
namespace {

std::string InDir(const std::string& dir, const std::string& name) {
  return (dir == "/" ? "" : dir) + "/" + name;
}

}  // namespace

absl::Status AddIncludedHeaders(FileTreeBuilder& builder,
                                const std::vector<std::string>& include_dirs,
                                const std::string& cwd) {
  // Each directory once: callers pass the command line's and the compiler's own search list,
  // which repeats them.
  std::vector<std::string> search;
  std::set<std::string> searched;
  for (const std::string& dir : include_dirs) {
    if (dir.empty()) continue;
    std::string absolute = dir[0] == '/' ? dir : cwd + "/" + dir;
    if (searched.insert(absolute).second) search.push_back(std::move(absolute));
  }
  std::set<std::string> tried;
  // Adds `path` when it is a file not tried before.
  auto try_path = [&](const std::string& path) -> absl::Status {
    if (!tried.insert(path).second) return absl::OkStatus();
    struct stat info;
    if (stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return absl::OkStatus();
    return builder.Add(path, cwd);
  };
  size_t done = 0;
  while (done < builder.include_sites().size()) {
    std::set<std::string> probes;
    for (; done < builder.include_sites().size(); ++done) {
      // Copied: adding files grows include_sites().
      FileTreeBuilder::IncludeSite site = builder.include_sites()[done];
      for (const IncludedName& included : site.names) {
        if (included.probe) probes.insert(included.name);
        if (!included.name.empty() && included.name[0] == '/') {
          if (absl::Status added = try_path(included.name); !added.ok()) return added;
          continue;
        }
        if (absl::Status added = try_path(InDir(site.directory, included.name)); !added.ok()) {
          return added;
        }
        for (const std::string& dir : search) {
          if (absl::Status added = try_path(InDir(dir, included.name)); !added.ok()) return added;
        }
      }
    }
    if (probes.empty()) continue;
    std::set<std::string> directories = builder.Directories();
    for (const std::string& name : probes) {
      for (const std::string& dir : directories) {
        if (absl::Status added = try_path(InDir(dir, name)); !added.ok()) return added;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace farm::cc
