#include "libfarm/cc/include_probes.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

#include <map>
#include <optional>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_split.h"

namespace farm::cc {
namespace {

std::string InDir(const std::string& dir, const std::string& name) {
  return (dir == "/" ? "" : dir) + "/" + name;
}

// Directory listings read once per call, to rule out a probe without a system call: nearly
// every name is looked up in a dozen directories and found in one, and each other one cost a
// failed stat().
class DirectoryListings {
 public:
  // False when `name` below the existing directory `dir` cannot exist: a component is missing
  // from its directory's listing. True when it may: stat() decides (also for '.', '..' and
  // directories this cannot list).
  bool MayExist(const std::string& dir, const std::string& name) {
    std::string at = dir;
    for (absl::string_view component : absl::StrSplit(name, '/')) {
      if (component.empty() || component == "." || component == "..") return true;
      const std::set<std::string, std::less<>>* entries = Listing(at);
      if (entries == nullptr) return true;
      if (entries->find(component) == entries->end()) return false;
      at = InDir(at, std::string(component));
    }
    return true;
  }

 private:
  // nullptr when `dir` cannot be listed; empty when it does not exist (the compiler's
  // nonexistent search directories, where a header may appear later).
  const std::set<std::string, std::less<>>* Listing(const std::string& dir) {
    auto [it, inserted] = listings_.try_emplace(dir);
    if (inserted) {
      DIR* d = ::opendir(dir.c_str());
      if (d != nullptr) {
        std::set<std::string, std::less<>> entries;
        while (const dirent* e = ::readdir(d)) entries.insert(e->d_name);
        ::closedir(d);
        it->second = std::move(entries);
      } else if (errno == ENOENT || errno == ENOTDIR) {
        it->second.emplace();
      }
    }
    return it->second ? &*it->second : nullptr;
  }

  std::map<std::string, std::optional<std::set<std::string, std::less<>>>> listings_;
};

}  // namespace

absl::Status AddIncludedHeaders(FileTreeBuilder& builder,
                                const std::vector<std::string>& include_dirs,
                                const std::string& cwd, bool* precompiled_found) {
  // Each directory once: callers pass the command line's and the compiler's own search list,
  // which repeats them.
  std::vector<std::string> search;
  std::set<std::string> searched;
  for (const std::string& dir : include_dirs) {
    if (dir.empty()) continue;
    std::string absolute = dir[0] == '/' ? dir : cwd + "/" + dir;
    if (searched.insert(absolute).second) search.push_back(std::move(absolute));
  }
  absl::flat_hash_set<std::string> tried;
  absl::flat_hash_set<std::string> searched_names;
  DirectoryListings listings;
  // Adds DIR/NAME when it is a file not tried before.
  auto try_in = [&](const std::string& dir, const std::string& name) -> absl::Status {
    const std::string path = InDir(dir, name);
    if (!tried.insert(path).second) return absl::OkStatus();
    if (precompiled_found != nullptr && listings.MayExist(dir, name + ".gch")) {
      struct stat pch;
      if (stat((path + ".gch").c_str(), &pch) == 0) *precompiled_found = true;
    }
    if (!listings.MayExist(dir, name)) return absl::OkStatus();
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
          if (absl::Status added = try_in("/", included.name.substr(1)); !added.ok()) {
            return added;
          }
          continue;
        }
        if (absl::Status added = try_in(site.directory, included.name); !added.ok()) {
          return added;
        }
        // The search list is the same for every includer: once per name.
        if (!searched_names.insert(included.name).second) continue;
        for (const std::string& dir : search) {
          if (absl::Status added = try_in(dir, included.name); !added.ok()) return added;
        }
      }
    }
    if (probes.empty()) continue;
    std::set<std::string> directories = builder.Directories();
    for (const std::string& name : probes) {
      for (const std::string& dir : directories) {
        if (absl::Status added = try_in(dir, name); !added.ok()) return added;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace farm::cc
