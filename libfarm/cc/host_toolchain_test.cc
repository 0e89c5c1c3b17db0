#include "libfarm/cc/host_toolchain.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libfarm/cc/file_tree_builder.h"
#include "libfarm/digest/digest.h"
#include "libfarm/file_tree/file_tree.h"

namespace farm::cc {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

HostToolchainFiles MustDiscover(const std::string& compiler) {
  absl::StatusOr<HostToolchainFiles> files = DiscoverHostToolchain(compiler);
  EXPECT_TRUE(files.ok()) << files.status();
  return files.ok() ? *files : HostToolchainFiles{};
}

bool TreeHas(const HostToolchainFiles& files, const std::string& path) {
  for (const farm::v1::InputFile& entry : files.tree.files()) {
    if ("/" + entry.path() == path) return true;
  }
  return false;
}

TEST(DiscoverHostToolchainTest, Gxx) {
  HostToolchainFiles files = MustDiscover("/usr/bin/g++");
  EXPECT_EQ(files.compiler, "/usr/bin/g++");
  EXPECT_EQ(files.cpu_arch, "x86_64");
  EXPECT_EQ(files.family, CompilerFamily::kGcc);
  EXPECT_THAT(files.paths, Contains("/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus"));
  EXPECT_THAT(files.paths, Contains("/usr/lib/gcc/x86_64-linux-gnu/12/cc1"));
  EXPECT_THAT(files.paths, Contains("/usr/bin/as"));  // "as" from PATH, as the driver finds it
  EXPECT_THAT(files.paths, Contains("/lib64/ld-linux-x86-64.so.2"));
  EXPECT_THAT(files.paths, Contains(EndsWith("/libc.so.6")));
  EXPECT_THAT(files.paths, Contains(EndsWith("/libisl.so.23")));  // cc1plus's
  EXPECT_THAT(files.paths, Contains(HasSubstr("/libbfd")));       // as's
  EXPECT_THAT(files.paths, Contains("/etc/ld.so.cache"));
  EXPECT_THAT(files.paths, Not(Contains(HasSubstr("lto"))));
  // The links on the way are kept: g++ -> g++-12, /lib64 -> usr/lib64 ...
  EXPECT_TRUE(TreeHas(files, "/usr/bin/g++"));
  EXPECT_TRUE(TreeHas(files, "/usr/bin/g++-12"));
  EXPECT_TRUE(TreeHas(files, "/lib64"));
  EXPECT_TRUE(SameDigest(files.tree_digest, FileTreeDigest(files.tree)));
}

TEST(DiscoverHostToolchainTest, GccFromPathAndClang) {
  HostToolchainFiles gcc = MustDiscover("gcc");
  EXPECT_EQ(gcc.compiler, "/usr/bin/gcc");
  EXPECT_THAT(gcc.paths, Contains("/usr/lib/gcc/x86_64-linux-gnu/12/cc1"));

  HostToolchainFiles clang = MustDiscover("/usr/bin/clang");
  EXPECT_EQ(clang.family, CompilerFamily::kClang);
  EXPECT_EQ(clang.cpu_arch, "x86_64");
  EXPECT_THAT(clang.paths, Contains("/usr/bin/../lib/gcc/x86_64-linux-gnu/12/crtbegin.o"));
  EXPECT_THAT(clang.paths, Contains(HasSubstr("libLLVM")));
  EXPECT_THAT(clang.paths, Contains(HasSubstr("libclang-cpp")));
  EXPECT_THAT(clang.paths, Not(Contains(HasSubstr("cc1plus"))));
  EXPECT_TRUE(TreeHas(clang, "/usr/bin/clang"));              // the link as called
  EXPECT_TRUE(TreeHas(clang, "/usr/lib/llvm-14/bin/clang"));  // and its real file
  // Two toolchains never share an identity.
  EXPECT_FALSE(SameDigest(gcc.tree_digest, clang.tree_digest));
}

TEST(DiscoverHostToolchainTest, RefusesNonCompilers) {
  EXPECT_FALSE(DiscoverHostToolchain("/usr/bin/no-such-compiler").ok());
  EXPECT_FALSE(DiscoverHostToolchain("no-such-compiler-on-path").ok());
  EXPECT_FALSE(DiscoverHostToolchain("/etc/os-release").ok());  // not a program
}

TEST(CachedHostToolchainTest, SameAnswerThenRecomputedWhenAFileChanges) {
  std::string dir = ::testing::TempDir() + "/farm-cc-cache-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  std::string cache = dir + "/cache";
  absl::StatusOr<HostToolchainFiles> first = CachedHostToolchain("/usr/bin/g++", cache);
  ASSERT_TRUE(first.ok()) << first.status();
  std::vector<fs::path> written;
  for (const auto& entry : fs::directory_iterator(cache)) written.push_back(entry.path());
  ASSERT_EQ(written.size(), 1u);

  absl::StatusOr<HostToolchainFiles> second = CachedHostToolchain("/usr/bin/g++", cache);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(SameDigest(first->tree_digest, second->tree_digest));
  EXPECT_EQ(first->paths, second->paths);
  EXPECT_EQ(second->family, CompilerFamily::kGcc);
  EXPECT_EQ(second->cpu_arch, "x86_64");

  // The answer comes from the file while its stamps match: a tree hash faked in it is
  // believed; once a stamp differs, the toolchain is discovered again.
  auto read = [&] {
    std::ifstream in(written[0]);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  auto write = [&](const std::string& text) {
    std::ofstream out(written[0]);
    out << text;
  };
  std::string text = read();
  std::string real_hash;
  for (const farm::v1::InputFile& entry : first->tree.files()) {
    if (!entry.digest().hash().empty()) real_hash = entry.digest().hash();
  }
  size_t tree_hash = text.find(real_hash);
  ASSERT_NE(tree_hash, std::string::npos);
  text.replace(tree_hash, 8, "00000000");
  write(text);
  absl::StatusOr<HostToolchainFiles> faked = CachedHostToolchain("/usr/bin/g++", cache);
  ASSERT_TRUE(faked.ok()) << faked.status();
  EXPECT_FALSE(SameDigest(first->tree_digest, faked->tree_digest));

  size_t stamp = text.find("\"stamps\"");
  ASSERT_NE(stamp, std::string::npos);
  size_t mtime_at = text.find(",", text.find("[\"/", stamp)) + 1;
  text.replace(mtime_at, 1, text[mtime_at] == '1' ? "2" : "1");
  write(text);
  absl::StatusOr<HostToolchainFiles> third = CachedHostToolchain("/usr/bin/g++", cache);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_TRUE(SameDigest(first->tree_digest, third->tree_digest));  // recomputed, not the fake
  EXPECT_NE(read().find(real_hash), std::string::npos);             // and written again

  // Another driver path gets its own cache file.
  ASSERT_TRUE(CachedHostToolchain("/usr/bin/g++-12", cache).ok());
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(cache)) ++files;
  EXPECT_EQ(files, 2u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace farm::cc
