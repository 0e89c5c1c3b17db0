#include "libfarm/nvcc/compile_cache.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_join.h"

namespace farm {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;

farm::v1::CompileResult EntryWriting(const std::vector<std::string>& paths) {
  farm::v1::CompileResult entry;
  for (const std::string& path : paths) entry.add_outputs()->set_path(path);
  return entry;
}

std::vector<std::string> Paths(const std::vector<CompileCacheOutput>& outputs) {
  std::vector<std::string> paths;
  for (const auto& out : outputs) paths.push_back(out.role + ": " + out.path);
  return paths;
}

TEST(CompileCacheOutputsTest, AreTheObjectAndTheDependencyFileAsTheCommandNamesThem) {
  auto command = ParseNvccCommandLine({"-MD", "-MF", "sub/k.d", "-c", "k.cu", "-o", "../o/k.o"});
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_THAT(Paths(CompileCacheOutputs(*command)),
              ElementsAre("object: ../o/k.o", "dependency file: sub/k.d"));
  auto plain = ParseNvccCommandLine({"-c", "k.cu", "-o", "k.o"});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_THAT(Paths(CompileCacheOutputs(*plain)), ElementsAre("object: k.o"));
}

TEST(CheckRestorableOutputsTest, AcceptsExactlyTheCallsOwnRolesInAnyOrder) {
  EXPECT_TRUE(CheckRestorableOutputs(EntryWriting({kDependencyFileRole, kObjectRole}),
                                     {kObjectRole, kDependencyFileRole})
                  .ok());
  EXPECT_TRUE(CheckRestorableOutputs(EntryWriting({kObjectRole}), {kObjectRole}).ok());
}

TEST(CheckRestorableOutputsTest, RefusesAnyPathOrRoleTheCallDoesNotName) {
  // An entry names roles, never paths: even the call's own object path is refused.
  for (const char* raw : {"/home/u/.bashrc", "../k.o", "k.o", "./object", "object/", "Object",
                          "dependency file", ""}) {
    const std::string hostile = raw;
    absl::Status s = CheckRestorableOutputs(EntryWriting({kObjectRole, hostile}), {kObjectRole});
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << hostile;
    EXPECT_THAT(s.message(), HasSubstr("'" + hostile + "'"));
    if (hostile != kObjectRole) {
      EXPECT_THAT(s.message(), HasSubstr("Fix:"));
    }
  }
}

TEST(CheckRestorableOutputsTest, RefusesDuplicatesAndMissingOutputs) {
  EXPECT_THAT(
      CheckRestorableOutputs(EntryWriting({kObjectRole, kObjectRole}), {kObjectRole}).message(),
      HasSubstr("twice"));
  // Restoring the object but not the dependency file would leave a stale k.d behind.
  EXPECT_THAT(
      CheckRestorableOutputs(EntryWriting({kObjectRole}), {kObjectRole, kDependencyFileRole})
          .message(),
      HasSubstr("does not restore 'dependency file'"));
  EXPECT_FALSE(CheckRestorableOutputs(EntryWriting({}), {kObjectRole}).ok());
}

// A scratch dir made the working directory for one test, with a source and an include dir.
class CompileKeyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/compile-key-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    fs::create_directories(root_ + "/a/include");
    fs::create_directories(root_ + "/b");
    std::ofstream(root_ + "/a/k.cu") << "__global__ void k() {}\n";
    old_cwd_ = fs::current_path();
    fs::current_path(root_ + "/a");
  }
  void TearDown() override {
    fs::current_path(old_cwd_);
    fs::remove_all(root_);
  }

  std::string KeyIn(const std::string& dir, const std::vector<std::string>& args) {
    fs::current_path(dir);
    auto command = ParseNvccCommandLine(args);
    EXPECT_TRUE(command.ok()) << command.status();
    auto key = CompileCacheKey("/usr/local/cuda/bin/nvcc", *command);
    EXPECT_TRUE(key.ok()) << key.status();
    return key.ok() ? key->key : "";
  }

  CompileKeyScope ScopeOf(const std::vector<std::string>& args) {
    auto command = ParseNvccCommandLine(args);
    EXPECT_TRUE(command.ok()) << command.status();
    return CompileKeyScopeOf(*command, fs::current_path().string());
  }

  std::string root_;
  fs::path old_cwd_;
};

TEST_F(CompileKeyTest, AbsolutePathsLeaveTheDirectoryAndTheOutputNamesOut) {
  const std::string src = root_ + "/a/k.cu";
  const std::string inc = "-I" + root_ + "/a/include";
  const std::vector<std::string> x = {inc,  "-MD", "-MT", "obj/k.o", "-MF",        "obj/x.o.d",
                                      "-c", src,   "-o",  "obj/x.o", "-arch=sm_90"};
  std::vector<std::string> y = x;
  y[5] = "other/y.o.d";
  y[9] = "other/y.o";
  const std::string key = KeyIn(root_ + "/a", x);
  EXPECT_EQ(KeyIn(root_ + "/a", y), key);
  EXPECT_EQ(KeyIn(root_ + "/b", x), key);
  // Other spellings of the options are other arguments, their values still placeholders.
  EXPECT_EQ(KeyIn(root_ + "/b", {inc, "-MD", "-MT", "obj/k.o", "--dependency-output=d/y.d", "-c",
                                 src, "--output-file", "y.o", "-arch=sm_90"}),
            KeyIn(root_ + "/a", {inc, "-MD", "-MT", "obj/k.o", "--dependency-output=e/x.d", "-c",
                                 src, "--output-file", "x.o", "-arch=sm_90"}));
  // Everything else still counts: the dependency target, an argument, the source's path.
  EXPECT_NE(KeyIn(root_ + "/a", {inc, "-MD", "-MT", "obj/y.o", "-MF", "obj/x.o.d", "-c", src, "-o",
                                 "obj/x.o", "-arch=sm_90"}),
            key);
  EXPECT_NE(KeyIn(root_ + "/a", {inc, "-MD", "-MT", "obj/k.o", "-MF", "obj/x.o.d", "-c", src, "-o",
                                 "obj/x.o", "-arch=sm_75"}),
            key);
  fs::copy_file(src, root_ + "/b/k.cu");
  EXPECT_NE(KeyIn(root_ + "/a", {inc, "-MD", "-MT", "obj/k.o", "-MF", "obj/x.o.d", "-c",
                                 root_ + "/b/k.cu", "-o", "obj/x.o", "-arch=sm_90"}),
            key);
}

TEST_F(CompileKeyTest, WithoutMtTheObjectNameIsTheDependencyTargetAndCounts) {
  const std::string src = root_ + "/a/k.cu";
  EXPECT_NE(KeyIn(root_ + "/a", {"-MD", "-c", src, "-o", "x.o", "-arch=sm_90"}),
            KeyIn(root_ + "/a", {"-MD", "-c", src, "-o", "y.o", "-arch=sm_90"}));
  EXPECT_EQ(KeyIn(root_ + "/a", {"-c", src, "-o", "x.o", "-arch=sm_90"}),
            KeyIn(root_ + "/a", {"-c", src, "-o", "y.o", "-arch=sm_90"}));
}

TEST_F(CompileKeyTest, RelativePathsKeepTheDirectory) {
  const std::string src = root_ + "/a/k.cu";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"-c", "k.cu", "-o", "k.o"},
           {"-Iinclude", "-c", src, "-o", "k.o"},
           {"-I", "missing", "-c", src, "-o", "k.o"},
           {"-isystem=gen", "-c", src, "-o", "k.o"},
           {"-Xcompiler=-Iinclude", "-c", src, "-o", "k.o"},
           {"-Xcompiler", "--sysroot=sysroot/x", "-c", src, "-o", "k.o"},
           {"-ccbin", "bin/g++", "-c", src, "-o", "k.o"},
       }) {
    const CompileKeyScope scope = ScopeOf(args);
    EXPECT_TRUE(scope.working_directory.has_value()) << absl::StrJoin(args, " ");
    EXPECT_FALSE(scope.output_names.has_value()) << absl::StrJoin(args, " ");
  }
  EXPECT_NE(KeyIn(root_ + "/a", {"-Iinclude", "-c", src, "-o", "k.o"}),
            KeyIn(root_ + "/b", {"-Iinclude", "-c", src, "-o", "k.o"}));
}

TEST_F(CompileKeyTest, DebugInfoKeepsTheDirectoryAndTheNames) {
  const std::string src = root_ + "/a/k.cu";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"-g", "-c", src, "-o", "k.o"},
           {"--debug", "-c", src, "-o", "k.o"},
           {"-Xcompiler", "-g", "-c", src, "-o", "k.o"},
           {"-Xcompiler=-O2,-gsplit-dwarf", "-c", src, "-o", "k.o"},
           {"-forward-unknown-to-host-compiler", "-ggdb", "-c", src, "-o", "k.o"},
           {"-Xcompiler", "-ffile-prefix-map=/a=/b", "-c", src, "-o", "k.o"},
           {"-Xptxas", "-g", "-c", src, "-o", "k.o"},
       }) {
    const CompileKeyScope scope = ScopeOf(args);
    EXPECT_TRUE(scope.working_directory.has_value()) << absl::StrJoin(args, " ");
    EXPECT_TRUE(scope.output_names.has_value()) << absl::StrJoin(args, " ");
  }
  EXPECT_NE(KeyIn(root_ + "/a", {"-g", "-c", src, "-o", "k.o"}),
            KeyIn(root_ + "/b", {"-g", "-c", src, "-o", "k.o"}));
  EXPECT_NE(KeyIn(root_ + "/a", {"-g", "-c", src, "-o", "k.o"}),
            KeyIn(root_ + "/a", {"-g", "-c", src, "-o", "j.o"}));
}

TEST_F(CompileKeyTest, LineInfoRecordsSourceStampsWithoutKeepingTheDirectory) {
  const CompileKeyScope scope = ScopeOf({"-lineinfo", "-c", root_ + "/a/k.cu", "-o", "k.o"});
  EXPECT_TRUE(scope.source_stamps);
  EXPECT_FALSE(scope.working_directory.has_value());
  EXPECT_FALSE(ScopeOf({"-c", root_ + "/a/k.cu", "-o", "k.o"}).source_stamps);
}

TEST_F(CompileKeyTest, EnvironmentFlagsAndRelativeIncludePathsCount) {
  const std::string src = root_ + "/a/k.cu";
  setenv("NVCC_APPEND_FLAGS", "-Xcompiler -g", 1);
  EXPECT_TRUE(ScopeOf({"-c", src, "-o", "k.o"}).output_names.has_value());
  unsetenv("NVCC_APPEND_FLAGS");
  setenv("CPATH", "/usr/include:gen", 1);
  EXPECT_THAT(ScopeOf({"-c", src, "-o", "k.o"}).working_directory, Optional(HasSubstr("CPATH")));
  unsetenv("CPATH");
  EXPECT_FALSE(ScopeOf({"-c", src, "-o", "k.o"}).working_directory.has_value());
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

TEST(IncludedFilesTest, ResolvesRelativePathsInTheWorkingDirectory) {
  const std::string text = "# 1 \"src/k.cu\"\n";
  EXPECT_THAT(IncludedFiles(LineMarkerFiles(text), "/tmp/farm-x"),
              ElementsAre(fs::current_path().string() + "/src/k.cu"));
}

}  // namespace
}  // namespace farm
