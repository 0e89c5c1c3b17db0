#include "libfarm/disk/disk_usage.h"

#include <ftw.h>
#include <sys/stat.h>

#include <set>
#include <utility>

namespace farm {
namespace {

// nftw's callback takes no context; one walk at a time per thread.
thread_local std::set<std::pair<dev_t, ino_t>>* seen = nullptr;
thread_local uint64_t* total = nullptr;

int Count(const char*, const struct stat* st, int type, struct FTW*) {
  if (type == FTW_F || type == FTW_D || type == FTW_SL || type == FTW_DP) {
    if (seen->emplace(st->st_dev, st->st_ino).second) {
      *total += static_cast<uint64_t>(st->st_blocks) * 512;
    }
  }
  return FTW_CONTINUE;
}

}  // namespace

uint64_t DiskUsage(const std::vector<std::string>& paths) {
  std::set<std::pair<dev_t, ino_t>> inodes;
  uint64_t bytes = 0;
  seen = &inodes;
  total = &bytes;
  for (const std::string& path : paths) {
    ::nftw(path.c_str(), Count, 32, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL);
  }
  seen = nullptr;
  total = nullptr;
  return bytes;
}

}  // namespace farm
