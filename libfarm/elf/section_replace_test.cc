#include "libfarm/elf/section_replace.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "libfarm/files/file_contents.h"
#include "libfarm/process/subprocess.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

// A source whose ".blob" section, declared in asm as nvcc's .fatbin.c declares .nv_fatbin,
// holds `quads` 8-byte values, with code and data on either side of it.
std::string Source(int quads) {
  std::string data;
  for (int i = 0; i < quads; ++i) data += "\".quad " + std::to_string(0x1000 + i) + "\\n\"\n";
  return "static int counter = 3;\n"
         "int Before(int x) { return x * counter + 1; }\n"
         "asm(\".section .blob, \\\"a\\\"\\n\" \".align 8\\n\" \"blobData:\\n\"\n" +
         data +
         "\".text\\n\");\n"
         "extern const unsigned long long blobData[];\n"
         "const void* BlobAddress() { return blobData; }\n"
         "static const char kTable[] __attribute__((aligned(32))) = \"after the blob\";\n"
         "const char* After() { return kTable; }\n";
}

class SectionReplaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("section_replace_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Compiles Source(quads) with gcc -O2 -fPIC and returns the object's bytes.
  std::string Compile(int quads) {
    // One file name for every size: the object names its source.
    const fs::path sub = dir_ / std::to_string(quads);
    fs::create_directories(sub);
    const std::string c = (sub / "blob.c").string();
    std::ofstream(c) << Source(quads);
    const std::string o = c + ".o";
    auto r = RunCommand({"gcc", "-O2", "-fPIC", "-c", c, "-o", o});
    EXPECT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->stderr_text : r.status().ToString());
    auto bytes = ReadFileContents(o);
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    return bytes.ok() ? *bytes : std::string();
  }

  // The ".blob" bytes Source(quads) assembles to.
  static std::string BlobBytes(int quads) {
    std::string out;
    for (int i = 0; i < quads; ++i) {
      const uint64_t v = 0x1000 + i;
      out.append(reinterpret_cast<const char*>(&v), sizeof(v));
    }
    return out;
  }

  fs::path dir_;
};

TEST_F(SectionReplaceTest, GrowingTheSectionGivesTheObjectTheAssemblerWouldHaveWritten) {
  const std::string small = Compile(1);
  const std::string large = Compile(1000);
  ASSERT_NE(small.size(), large.size());
  auto grown = ReplaceSectionContents(small, ".blob", BlobBytes(1000));
  ASSERT_TRUE(grown.ok()) << grown.status();
  EXPECT_TRUE(*grown == large) << "the rewritten object differs from gcc's";
  auto shrunk = ReplaceSectionContents(large, ".blob", BlobBytes(1));
  ASSERT_TRUE(shrunk.ok()) << shrunk.status();
  EXPECT_TRUE(*shrunk == small);
}

TEST_F(SectionReplaceTest, RefusesWhatItCannotRewriteExactly) {
  const std::string object = Compile(2);
  auto missing = ReplaceSectionContents(object, ".nv_fatbin", "x");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.status().message().find("no '.nv_fatbin' section"), std::string::npos);
  // .text has relocations: moving it would break them.
  auto relocated = ReplaceSectionContents(object, ".text", "x");
  EXPECT_EQ(relocated.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReplaceSectionContents("not an object", ".blob", "x").status().code(),
            absl::StatusCode::kInvalidArgument);
  // Bytes after the last section are not the assembler's layout.
  auto padded = ReplaceSectionContents(object + std::string(8, '\0'), ".blob", "x");
  EXPECT_EQ(padded.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace farm
