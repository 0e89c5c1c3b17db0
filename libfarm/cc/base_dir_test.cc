#include "libfarm/cc/base_dir.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"

namespace farm::cc {
namespace {

BaseDir Src() {
  auto dir = BaseDir::Create("/home/u/src");
  EXPECT_TRUE(dir.ok()) << dir.status();
  return *dir;
}

TEST(BaseDirTest, RefusesWhatIsNotAPlainAbsoluteDirectory) {
  for (const char* bad : {"", "src", "/", "/a/../b", "/a/", "/a//b", "/my dir", "/a$b", "/a#b"}) {
    auto dir = BaseDir::Create(bad);
    EXPECT_EQ(dir.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StrContains(dir.status().message(), "Fix:")) << bad;
  }
  EXPECT_TRUE(BaseDir::Create("/home/u/src-2.9_x+y~").ok());
}

TEST(BaseDirTest, HoldsOnlyWholeComponents) {
  const BaseDir dir = Src();
  EXPECT_TRUE(dir.Holds("/home/u/src"));
  EXPECT_TRUE(dir.Holds("/home/u/src/a.cc"));
  EXPECT_FALSE(dir.Holds("/home/u/srcx/a.cc"));
  EXPECT_FALSE(dir.Holds("/home/u"));
  EXPECT_EQ(dir.ToStandIn("/home/u/src/b/a.cc"), "/farm-cc-base/b/a.cc");
  EXPECT_EQ(dir.ToStandIn("/usr/include/stdio.h"), "/usr/include/stdio.h");
  EXPECT_EQ(dir.FromStandIn("/farm-cc-base/b/a.cc"), "/home/u/src/b/a.cc");
  EXPECT_EQ(dir.FromStandIn("/farm-cc-basex/a.cc"), "/farm-cc-basex/a.cc");
}

TEST(BaseDirTest, WordsGetTheStandInWhereTheyNameAPath) {
  const BaseDir dir = Src();
  const std::pair<const char*, const char*> cases[] = {
      {"/home/u/src/a.cc", "/farm-cc-base/a.cc"},
      {"-I/home/u/src/include", "-I/farm-cc-base/include"},
      {"-isystem/home/u/src/third_party", "-isystem/farm-cc-base/third_party"},
      {"-ffile-prefix-map=/home/u/src=.", "-ffile-prefix-map=/farm-cc-base=."},
      {"/home/u/src/include:/usr/include", "/farm-cc-base/include:/usr/include"},
      {"-MF", "-MF"},
      {"CMakeFiles/x.dir/a.cc.o", "CMakeFiles/x.dir/a.cc.o"},
      {"-I/usr/local/cuda/bin/../targets/x86_64-linux/include",
       "-I/usr/local/cuda/bin/../targets/x86_64-linux/include"},
      {"-O2", "-O2"},
      {"/home/u/srcx/a.cc", "/home/u/srcx/a.cc"},
      {"x/home/u/src/a.h", "x/home/u/src/a.h"},  // relative: another file
  };
  for (const auto& [word, expected] : cases) {
    auto got = dir.ToStandInWord(word);
    ASSERT_TRUE(got.ok()) << word << ": " << got.status();
    EXPECT_EQ(*got, expected) << word;
  }
}

TEST(BaseDirTest, WordsThatNameTheBaseDirOtherwiseAreRefused) {
  const BaseDir dir = Src();
  for (const char* word : {
           "-DDATA_DIR=\"/home/u/src/data\"",  // a macro: the object may hold it in any form
           "-DROOT=/home/u/src",
           "-I../include",                    // relative, through '..'
           "-I/home/u/src/../other",          // out of the base dir by '..'
           "-I/home/u/other/../src/include",  // into it by '..'
           "-Wl,/home/u/src/x",               // not where farm-cc knows a path starts
       }) {
    auto got = dir.ToStandInWord(word);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition) << word;
  }
}

TEST(BaseDirTest, TreesMoveUnderTheStandInAndKeepTheirLinksMeaning) {
  const BaseDir dir = Src();
  farm::v1::FileTree tree;
  auto add = [&](const char* path, const char* target = "") {
    auto* f = tree.add_files();
    f->set_path(path);
    f->set_symlink_target(target);
  };
  add("home/u/src/a.cc");
  add("usr/include/stdio.h");
  add("home/u/src/include/x.h", "../y.h");            // stays inside
  add("home/u/src/include/z.h", "/home/u/src/z.h");   // absolute, inside
  add("home/u/src/include/s.h", "/usr/include/s.h");  // absolute, outside
  auto moved = dir.ToStandInTree(tree);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(moved->files(0).path(), "farm-cc-base/a.cc");
  EXPECT_EQ(moved->files(1).path(), "usr/include/stdio.h");
  EXPECT_EQ(moved->files(2).symlink_target(), "../y.h");
  EXPECT_EQ(moved->files(3).symlink_target(), "/farm-cc-base/z.h");
  EXPECT_EQ(moved->files(4).symlink_target(), "/usr/include/s.h");

  farm::v1::FileTree leaving = tree;
  leaving.add_files()->set_path("home/u/src/include/out.h");
  leaving.mutable_files(5)->set_symlink_target("../../../other/out.h");
  EXPECT_EQ(dir.ToStandInTree(leaving).status().code(), absl::StatusCode::kFailedPrecondition);

  farm::v1::FileTree squatting = tree;
  squatting.add_files()->set_path("farm-cc-base/evil.h");
  EXPECT_EQ(dir.ToStandInTree(squatting).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(BaseDirTest, TextAndObjects) {
  const BaseDir dir = Src();
  const std::string warning =
      "In file included from /home/u/src/a.cc:1:\n/home/u/src/b.h:3:2: warning: x\n"
      "/home/u/srcx/c.h is another tree\n";
  const std::string stand_in = dir.TextToStandIn(warning);
  EXPECT_EQ(stand_in,
            "In file included from /farm-cc-base/a.cc:1:\n/farm-cc-base/b.h:3:2: warning: x\n"
            "/home/u/srcx/c.h is another tree\n");
  EXPECT_EQ(dir.TextFromStandIn(stand_in), warning);

  EXPECT_TRUE(
      dir.IsNamedIn(std::string("\x7f"
                                "ELF..../home/u/src/a.cc\0",
                                22)));
  const std::string utf16 = std::string("/\0h\0o\0m\0e\0/\0u\0/\0s\0r\0c\0", 22);
  EXPECT_TRUE(dir.IsNamedIn("xx" + utf16 + "yy"));
  EXPECT_FALSE(dir.IsNamedIn("/home/u/sr c/a.cc"));
}

}  // namespace
}  // namespace farm::cc
