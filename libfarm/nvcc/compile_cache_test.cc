#include "libfarm/nvcc/compile_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::ElementsAre;

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
