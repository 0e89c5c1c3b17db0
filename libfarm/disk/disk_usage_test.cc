#include "libfarm/disk/disk_usage.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace farm {
namespace {

namespace fs = std::filesystem;

TEST(DiskUsageTest, CountsEachFileOnceAndNeverFollowsLinks) {
  const fs::path dir = fs::path(::testing::TempDir()) / "disk_usage";
  fs::remove_all(dir);
  fs::create_directories(dir / "a");
  const std::string block(1 << 20, 'x');
  std::ofstream(dir / "a" / "one") << block;
  std::ofstream(dir / "two") << block;
  fs::create_hard_link(dir / "two", dir / "a" / "two-again");
  fs::create_directory_symlink("/usr", dir / "usr-link");
  const uint64_t used = DiskUsage({dir.string()});
  // Two MiB of data, the hard link once, not /usr; directories take a few blocks.
  EXPECT_GE(used, uint64_t{2} << 20);
  EXPECT_LT(used, (uint64_t{2} << 20) + (uint64_t{256} << 10));
  EXPECT_EQ(DiskUsage({(dir / "a" / "one").string(), (dir / "a" / "one").string()}),
            DiskUsage({(dir / "a" / "one").string()}));
  EXPECT_EQ(DiskUsage({(dir / "missing").string()}), 0u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace farm
