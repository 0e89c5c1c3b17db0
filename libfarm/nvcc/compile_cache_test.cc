#include "libfarm/nvcc/compile_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

farm::v1::CompileResult EntryWriting(const std::vector<std::string>& paths) {
  farm::v1::CompileResult entry;
  for (const std::string& path : paths) entry.add_outputs()->set_path(path);
  return entry;
}

TEST(CompileCacheOutputsTest, AreTheObjectAndTheDependencyFileAsTheCommandNamesThem) {
  auto command = ParseNvccCommandLine({"-MD", "-MF", "sub/k.d", "-c", "k.cu", "-o", "../o/k.o"});
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_THAT(CompileCacheOutputs(*command), ElementsAre("../o/k.o", "sub/k.d"));
  auto plain = ParseNvccCommandLine({"-c", "k.cu", "-o", "k.o"});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_THAT(CompileCacheOutputs(*plain), ElementsAre("k.o"));
}

TEST(CheckRestorableOutputsTest, AcceptsExactlyTheCallsOwnOutputsInAnyOrder) {
  EXPECT_TRUE(CheckRestorableOutputs(EntryWriting({"k.d", "k.o"}), {"k.o", "k.d"}).ok());
  EXPECT_TRUE(CheckRestorableOutputs(EntryWriting({"../o/k.o"}), {"../o/k.o"}).ok());
}

TEST(CheckRestorableOutputsTest, RefusesAnyPathTheCallDoesNotName) {
  for (const char* raw :
       {"/home/u/.bashrc", "../k.o", "./k.o", "sub/../k.o", "k.o/", "/abs/k.o", ""}) {
    const std::string hostile = raw;
    absl::Status s = CheckRestorableOutputs(EntryWriting({"k.o", hostile}), {"k.o"});
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << hostile;
    EXPECT_THAT(s.message(), HasSubstr("'" + hostile + "'"));
    EXPECT_THAT(s.message(), HasSubstr("Fix:"));
  }
  // An absolute path is fine only when it is the one the call names.
  EXPECT_FALSE(CheckRestorableOutputs(EntryWriting({"/w/k.o"}), {"/w/other.o"}).ok());
}

TEST(CheckRestorableOutputsTest, RefusesDuplicatesAndMissingOutputs) {
  EXPECT_THAT(CheckRestorableOutputs(EntryWriting({"k.o", "k.o"}), {"k.o"}).message(),
              HasSubstr("twice"));
  // Restoring the object but not the dependency file would leave a stale k.d behind.
  EXPECT_THAT(CheckRestorableOutputs(EntryWriting({"k.o"}), {"k.o", "k.d"}).message(),
              HasSubstr("does not restore 'k.d'"));
  EXPECT_FALSE(CheckRestorableOutputs(EntryWriting({}), {"k.o"}).ok());
}

TEST(IncludedFilesTest, ReadsLineMarkersOnlySkippingPseudoFilesDirectoriesAndTemporaries) {
  const std::string text =
      "# 1 \"/src/k.cu\"\n"
      "# 1 \"/build/dir//\"\n"
      "# 1 \"<built-in>\"\n"
      "# 1 \"<command-line>\"\n"
      "# 1 \"/usr/include/stdio.h\" 1 3 4\n"
      "#pragma GCC diagnostic ignored \"-Wctor-dtor-privacy\"\n"
      "#line 7 \"/src/../src/k.h\"\n"
      "# 2 \"/tmp/farm-x/k.cudafe1.stub.c\"\n"
      "int x = printf(\"# 1 \\\"/not/a/marker.h\\\"\");\n"
      "# 9 \"/usr/include/stdio.h\" 2 3 4\n";
  EXPECT_THAT(IncludedFiles(LineMarkerFiles(text), "/tmp/farm-x"),
              ElementsAre("/src/k.cu", "/src/k.h", "/usr/include/stdio.h"));
}

}  // namespace
}  // namespace farm
