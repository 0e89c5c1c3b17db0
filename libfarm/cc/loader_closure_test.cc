#include "libfarm/cc/loader_closure.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::cc {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseLoaderListTest, LibrariesLoaderAndVdso) {
  absl::StatusOr<std::vector<std::string>> paths = ParseLoaderList(
      "\tlinux-vdso.so.1 (0x00007ffd1a5f2000)\n"
      "\tlibisl.so.23 => /lib/x86_64-linux-gnu/libisl.so.23 (0x00007f1311a00000)\n"
      "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f1311682000)\n"
      "\t/lib64/ld-linux-x86-64.so.2 (0x00007f1311dcb000)\n");
  ASSERT_TRUE(paths.ok()) << paths.status();
  EXPECT_THAT(*paths,
              ElementsAre("/lib/x86_64-linux-gnu/libisl.so.23", "/lib/x86_64-linux-gnu/libc.so.6",
                          "/lib64/ld-linux-x86-64.so.2"));
  EXPECT_THAT(*ParseLoaderList("\tstatically linked\n"), ElementsAre());
}

TEST(ParseLoaderListTest, MissingLibraryIsAnError) {
  absl::StatusOr<std::vector<std::string>> paths =
      ParseLoaderList("\tlibfoo.so.1 => not found\n\tlibc.so.6 => /lib/libc.so.6 (0x1)\n");
  ASSERT_FALSE(paths.ok());
  EXPECT_THAT(paths.status().message(), HasSubstr("libfoo.so.1"));
}

TEST(LoaderClosureTest, RealCc1plus) {
  absl::StatusOr<std::optional<std::string>> interpreter =
      ElfInterpreter("/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus");
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  EXPECT_EQ(interpreter->value_or(""), "/lib64/ld-linux-x86-64.so.2");
  absl::StatusOr<std::vector<std::string>> closure =
      LoaderClosure("/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus");
  ASSERT_TRUE(closure.ok()) << closure.status();
  EXPECT_EQ(closure->front(), "/lib64/ld-linux-x86-64.so.2");
  EXPECT_THAT(*closure, Contains(HasSubstr("/libc.so.6")));
  EXPECT_THAT(*closure, Contains(HasSubstr("/libisl.so")));
  EXPECT_THAT(*closure, Contains(HasSubstr("/libgmp.so")));
}

TEST(LoaderClosureTest, SharedLibraryAndNonElf) {
  // libc.so.6 has a PT_INTERP of its own on glibc; a text file is no ELF at all.
  EXPECT_FALSE(ElfInterpreter("/etc/os-release").ok());
  EXPECT_FALSE(ElfInterpreter("/nonexistent/x").ok());
}

}  // namespace
}  // namespace farm::cc
