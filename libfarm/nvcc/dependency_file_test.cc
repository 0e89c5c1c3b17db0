#include "libfarm/nvcc/dependency_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libfarm/nvcc/line_markers.h"

namespace farm {
namespace {

using ::testing::ElementsAre;
using ::testing::FieldsAre;

TEST(LineMarkerFilesTest, EachFileOnceInFirstSeenOrderWithItsSystemFlag) {
  const std::string text =
      "# 1 \"k.cu\"\n"
      "# 1 \"<built-in>\"\n"
      "# 1 \"/usr/include/stdio.h\" 1 3 4\n"
      "# 1 \"/usr/include/features.h\" 1 3 4\n"
      "# 9 \"/usr/include/stdio.h\" 2 3 4\n"
      "#pragma GCC diagnostic ignored \"-Wctor-dtor-privacy\"\n"
      "  # 3 \"indented.h\"\n"
      "#line 7 \"dir with space/k.h\"\n"
      "# 2 \"quote\\\"d\\\\.h\" 1\n"
      "# 4 \"k.cu\" 2\n"
      "int x = printf(\"# 1 \\\"/not/a/marker.h\\\"\");\n";
  EXPECT_THAT(LineMarkerFiles(text), ElementsAre(FieldsAre("k.cu", false, false),
                                                 FieldsAre("/usr/include/stdio.h", true, false),
                                                 FieldsAre("/usr/include/features.h", true, false),
                                                 FieldsAre("dir with space/k.h", false, false),
                                                 FieldsAre("quote\"d\\.h", false, false)));
}

// With -lineinfo cicc names a file a marker spells relative from its own directory: the
// worker's, unless the markers already name it from the build host's.
TEST(LineMarkersFromTest, RelativeFilesAreNamedFromTheDirectoryTheRestStaysAsItWas) {
  const std::string text =
      "# 0 \"src/k.cu\"\n"
      "# 0 \"<built-in>\"\n"
      "# 1 \"/usr/include/stdio.h\" 1 3 4\n"
      "  # 3 \"indented.h\"\n"
      "#line 7 \"dir with space/k.h\"\n"
      "# 1 \"./../inc/q\\\"d.h\" 1\n"
      "# 1 \"\"\n"
      "int x = printf(\"# 1 \\\"not/a/marker.h\\\"\");\n"
      "# 2 \"src/k.cu\" 2";
  EXPECT_EQ(LineMarkersFrom(text, "/build/with \"quote\""),
            "# 0 \"/build/with \\\"quote\\\"/src/k.cu\"\n"
            "# 0 \"<built-in>\"\n"
            "# 1 \"/usr/include/stdio.h\" 1 3 4\n"
            "  # 3 \"indented.h\"\n"
            "#line 7 \"/build/with \\\"quote\\\"/dir with space/k.h\"\n"
            "# 1 \"/build/with \\\"quote\\\"/./../inc/q\\\"d.h\" 1\n"
            "# 1 \"\"\n"
            "int x = printf(\"# 1 \\\"not/a/marker.h\\\"\");\n"
            "# 2 \"/build/with \\\"quote\\\"/src/k.cu\" 2");
  EXPECT_THAT(LineMarkerFiles(LineMarkersFrom(text, "/b")),
              ElementsAre(FieldsAre("/b/src/k.cu", false, false),
                          FieldsAre("/usr/include/stdio.h", true, false),
                          FieldsAre("/b/dir with space/k.h", false, false),
                          FieldsAre("/b/./../inc/q\"d.h", false, false)));
  const std::string absolute = "# 1 \"/src/k.cu\"\n# 1 \"/src/k.h\" 1\n";
  EXPECT_EQ(LineMarkersFrom(absolute, "/b"), absolute);
}

// A device preprocess (cicc's input) spells __device__ and __global__ as attributes; the
// lines after a marker belong to its file, wherever the marker returns to.
TEST(LineMarkerFilesTest, MarksTheFilesThatDeclareDeviceFunctions) {
  const std::string text =
      "# 1 \"/src/k.cu\"\n"
      "# 1 \"/torch/include/c10/util/Half.h\" 1\n"
      "inline __attribute__((host)) __attribute__((device)) float ToFloat(Half h);\n"
      "# 1 \"/torch/include/c10/macros/Macros.h\" 1\n"
      "constexpr int kWarp = 32;\n"
      "# 9 \"/torch/include/c10/util/Half.h\" 2\n"
      "# 2 \"/src/k.cu\" 2\n"
      "int host_only;\n"
      "# 1 \"/src/kernel.cuh\" 1\n"
      "# 3 \"/src/k.cu\" 2\n"
      "extern \"C\" __attribute__((global)) void K(float* x);\n";
  EXPECT_THAT(LineMarkerFiles(text),
              ElementsAre(FieldsAre("/src/k.cu", false, true),
                          FieldsAre("/torch/include/c10/util/Half.h", false, true),
                          FieldsAre("/torch/include/c10/macros/Macros.h", false, false),
                          FieldsAre("/src/kernel.cuh", false, false)));
}

std::vector<LineMarkerFile> Files(std::initializer_list<std::pair<const char*, bool>> list) {
  std::vector<LineMarkerFile> out;
  for (const auto& [path, system] : list) out.push_back({path, system});
  return out;
}

// The shapes below are what nvcc 13.0 writes for the same inputs (checked by hand; the
// farm_nvcc integration test compares real files byte for byte).
TEST(NvccDependencyTextTest, DeviceFilesFirstThenHostOnesEachOnce) {
  DependencyOptions options;
  options.with_compile = true;
  options.targets = {"obj/k.o"};
  const std::string text = NvccDependencyText(
      {Files({{"k.cu", false}, {"/usr/include/stdio.h", true}, {"sm90.h", false}}),
       Files({{"k.cu", false}, {"sm75.h", false}}),
       Files({{"k.cu", false}, {"host only.h", false}, {"sm90.h", false}})},
      options);
  EXPECT_EQ(text,
            "obj/k.o : k.cu \\\n"
            "    /usr/include/stdio.h \\\n"
            "    sm90.h \\\n"
            "    sm75.h \\\n"
            "    host\\ only.h\n");
}

TEST(NvccDependencyTextTest, NonSystemLeavesSystemHeadersOutAndPhonyTargetsFollow) {
  DependencyOptions options;
  options.with_compile = true;
  options.nonsystem = true;
  options.phony_targets = true;
  options.targets = {"first.o", "last$.o"};  // nvcc keeps the last -MT, verbatim
  const std::string text = NvccDependencyText(
      {Files({{"k.cu", false}, {"/usr/include/stdio.h", true}, {"a b.h", false}, {"c#.h", false}})},
      options);
  EXPECT_EQ(text,
            "last$.o : k.cu \\\n"
            "    a\\ b.h \\\n"
            "    c#.h\n"
            "\n"
            "a\\ b.h:\n"
            "\n"
            "c#.h:\n");
}

}  // namespace
}  // namespace farm
