#include "libfarm/nvcc/nvcc_command_line.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

namespace farm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

NvccCommandLine MustParse(const std::vector<std::string>& args) {
  auto cmd = ParseNvccCommandLine(args);
  EXPECT_TRUE(cmd.ok()) << cmd.status();
  return cmd.ok() ? *cmd : NvccCommandLine{};
}

TEST(NvccCommandLineTest, ParsesCMakeStyleCompile) {
  NvccCommandLine cmd = MustParse({"-DNDEBUG",
                                   "-I/src/include",
                                   "-isystem",
                                   "/opt/x",
                                   "-O3",
                                   "-std=c++17",
                                   "-Xcompiler=-fPIC",
                                   "--generate-code=arch=compute_90,code=[compute_90,sm_90]",
                                   "-gencode",
                                   "arch=compute_75,code=sm_75",
                                   "-MD",
                                   "-MT",
                                   "k.o",
                                   "-MF",
                                   "k.o.d",
                                   "-x",
                                   "cu",
                                   "-c",
                                   "/src/k.cu",
                                   "-o",
                                   "k.o",
                                   "--compress-mode=size",
                                   "-t",
                                   "2",
                                   "-lineinfo"});
  EXPECT_EQ(cmd.mode, NvccMode::kCompile);
  EXPECT_THAT(cmd.inputs, ElementsAre("/src/k.cu"));
  EXPECT_EQ(cmd.output, "k.o");
  ASSERT_EQ(cmd.gencodes.size(), 2u);
  EXPECT_EQ(cmd.gencodes[0].arch, "compute_90");
  EXPECT_THAT(cmd.gencodes[0].codes, ElementsAre("compute_90", "sm_90"));
  EXPECT_THAT(cmd.gencodes[1].codes, ElementsAre("sm_75"));
  EXPECT_THAT(cmd.compiler_options, ElementsAre("-fPIC"));
  EXPECT_TRUE(cmd.dependencies.with_compile);
  EXPECT_EQ(cmd.dependencies.file, "k.o.d");
  EXPECT_THAT(cmd.dependencies.targets, ElementsAre("k.o"));
  EXPECT_EQ(cmd.compress_mode, "size");
  EXPECT_EQ(cmd.threads, 2);
  EXPECT_TRUE(cmd.line_info);
  EXPECT_EQ(cmd.language, "cu");
  EXPECT_TRUE(CheckDecomposable(cmd).ok());
}

TEST(NvccCommandLineTest, GencodeSpellings) {
  for (const char* value :
       {"arch=compute_80,code=[sm_80,sm_86]", "arch=compute_80,code=sm_80,sm_86",
        "arch=compute_80,code=\"sm_80,sm_86\""}) {
    auto spec = ParseGencode(value);
    ASSERT_TRUE(spec.ok()) << value << ": " << spec.status();
    EXPECT_EQ(spec->arch, "compute_80");
    EXPECT_THAT(spec->codes, ElementsAre("sm_80", "sm_86")) << value;
  }
  auto ptx_only = ParseGencode("arch=compute_90,code=compute_90");
  ASSERT_TRUE(ptx_only.ok());
  EXPECT_THAT(ptx_only->codes, ElementsAre("compute_90"));
  auto specific = ParseGencode("arch=compute_100f,code=sm_100f");
  ASSERT_TRUE(specific.ok());
  EXPECT_THAT(specific->codes, ElementsAre("sm_100f"));
  EXPECT_TRUE(IsNotDecomposable(ParseGencode("arch=compute_90,code=lto_90").status()));
  EXPECT_TRUE(IsNotDecomposable(ParseGencode("code=sm_90").status()));
}

TEST(NvccCommandLineTest, RdcAndDeviceCompileAndArchSpecific) {
  NvccCommandLine rdc = MustParse({"-rdc=true", "-c", "a.cu", "-arch=sm_90a"});
  EXPECT_TRUE(rdc.relocatable_device_code);
  EXPECT_THAT(rdc.arch, ElementsAre("sm_90a"));
  NvccCommandLine dc = MustParse({"-dc", "a.cu", "--gpu-architecture", "sm_100f"});
  EXPECT_TRUE(dc.relocatable_device_code);
  EXPECT_EQ(dc.mode, NvccMode::kCompile);
  EXPECT_TRUE(CheckDecomposable(dc).ok());
}

TEST(NvccCommandLineTest, ExpandsOptionsFilesRecursively) {
  const std::string dir = ::testing::TempDir();
  {
    std::ofstream(dir + "/inner.opts") << "-Xptxas -v,-O2\n";
    std::ofstream(dir + "/outer.opts")
        << "-gencode \"arch=compute_90,code=[compute_90,sm_90]\"\n-optf inner.opts\n"
        << "-I'/path with space'\n";
  }
  auto cmd = ParseNvccCommandLine({"-c", "k.cu", "--options-file", "outer.opts"}, dir);
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_THAT(cmd->args,
              ElementsAre("-c", "k.cu", "-gencode", "arch=compute_90,code=[compute_90,sm_90]",
                          "-Xptxas", "-v,-O2", "-I/path with space"));
  EXPECT_THAT(cmd->ptxas_options, ElementsAre("-v", "-O2"));
  ASSERT_EQ(cmd->gencodes.size(), 1u);
  EXPECT_EQ(
      ParseNvccCommandLine({"-c", "k.cu", "--options-file", "missing.opts"}, dir).status().code(),
      absl::StatusCode::kNotFound);
}

// nvcc 13.0 says "Don't know what to do with '@r.rsp'": farm-nvcc must not accept it.
TEST(NvccCommandLineTest, ResponseFileIsNotDecomposable) {
  auto cmd = ParseNvccCommandLine({"-c", "k.cu", "@r.rsp"});
  EXPECT_TRUE(IsNotDecomposable(cmd.status())) << cmd.status();
}

// PyTorch's torch_cuda calls: CMake's -forward-unknown-to-host-compiler, then host warning
// flags after one -Xcompiler (CMake drops the repeated ones). nvcc forwards the unknown
// words to the host compiler; the split leaves them to nvcc's plan.
TEST(NvccCommandLineTest, HostCompilerWordsAreLeftToNvcc) {
  NvccCommandLine cmd =
      MustParse({"-forward-unknown-to-host-compiler", "-Xcompiler", "-Wall", "-Wextra",
                 "-Wdeprecated", "-Wno-unused-parameter", "-fPIC", "-pthread", "-mcpu=neoverse-v2",
                 "-c", "/src/k.cu", "-o", "k.o", "-gencode", "arch=compute_90,code=sm_90"});
  EXPECT_THAT(cmd.compiler_options, ElementsAre("-Wall"));
  EXPECT_THAT(cmd.unknown_options,
              ElementsAre("-Wextra", "-Wdeprecated", "-Wno-unused-parameter", "-fPIC", "-pthread"));
  EXPECT_THAT(cmd.inputs, ElementsAre("/src/k.cu"));
  EXPECT_EQ(cmd.args_without_dependencies, cmd.args);
  EXPECT_TRUE(CheckDecomposable(cmd).ok()) << CheckDecomposable(cmd);
}

// An unknown word followed by a separate value: nvcc takes the value for an input file, and
// so does farm-nvcc (two inputs are not split).
TEST(NvccCommandLineTest, UnknownOptionDoesNotSwallowTheNextWord) {
  NvccCommandLine cmd = MustParse({"-c", "k.cu", "--frobnicate", "value", "-o", "k.o"});
  EXPECT_THAT(cmd.unknown_options, ElementsAre("--frobnicate"));
  EXPECT_THAT(cmd.inputs, ElementsAre("k.cu", "value"));
  EXPECT_THAT(CheckDecomposable(cmd).message(), HasSubstr("2 input files"));
}

// torch.utils.cpp_extension: --generate-dependencies-with-compile --dependency-output F, no
// -MT. nvcc 13.0 then names the object as the target (checked by hand).
TEST(NvccCommandLineTest, DependencyTargetDefaultsToTheObject) {
  NvccCommandLine cmd = MustParse({"--generate-dependencies-with-compile", "--dependency-output",
                                   "/b/k.o.d", "-c", "/s/k.cu", "-o", "/b/k.o"});
  EXPECT_EQ(cmd.dependencies.file, "/b/k.o.d");
  EXPECT_THAT(cmd.dependencies.targets, ElementsAre("/b/k.o"));
  EXPECT_TRUE(CheckDecomposable(cmd).ok());
}

// Without -MF nvcc writes the object's name with its last extension replaced by .d (added
// when there is none); without -o the object is the input's base name with .o, here.
TEST(NvccCommandLineTest, DependencyFileDefaultsAsNvccNamesIt) {
  struct Case {
    std::vector<std::string> args;
    const char* file;
    const char* target;
  };
  for (const Case& c : std::vector<Case>{
           {{"-MD", "-c", "k.cu", "-o", "obj/k.cu.o"}, "obj/k.cu.d", "obj/k.cu.o"},
           {{"-MMD", "-c", "k.cu", "-o", "obj.dir/noext"}, "obj.dir/noext.d", "obj.dir/noext"},
           {{"-MD", "-c", "sub/j.cu"}, "j.d", "j.o"},
           {{"-MD", "-MT", "t", "-c", "k.cu", "-o", "a.o"}, "a.d", "t"},
       }) {
    NvccCommandLine cmd = MustParse(c.args);
    EXPECT_EQ(cmd.dependencies.file, c.file) << c.args.back();
    EXPECT_THAT(cmd.dependencies.targets, ElementsAre(c.target));
  }
}

TEST(NvccCommandLineTest, ModesThatStayLocal) {
  struct Case {
    std::vector<std::string> args;
    const char* reason;
  };
  for (const Case& c : std::vector<Case>{
           {{"-dlink", "a.o", "b.o", "-o", "dl.o", "-arch=sm_90"}, "-dlink"},
           {{"-E", "k.cu"}, "-E"},
           {{"-M", "k.cu"}, "-M"},
           {{"k.cu", "-o", "app"}, "linking"},
           {{"-c", "a.cu", "b.cu"}, "2 input files"},
           {{"-c", "host.cpp"}, "not a .cu"},
           {{"-c", "k.cu", "-arch=native"}, "native"},
           {{"-c", "k.cu", "--keep"}, "--keep"},
           {{"-c", "k.cu", "-dlto", "-arch=sm_90"}, "link-time"},
           {{"-c", "k.cu", "-G"}, "-G"},
           {{"-c", "k.cu", "--split-compile", "4"}, "--split-compile"},
           {{"-c", "k.cu", "-objtemp"}, "-objtemp"},
           {{"-c", "k.cu", "-ltoir"}, "-ltoir"},
       }) {
    auto cmd = ParseNvccCommandLine(c.args);
    absl::Status status = cmd.ok() ? CheckDecomposable(*cmd) : cmd.status();
    EXPECT_TRUE(IsNotDecomposable(status)) << c.reason << ": " << status;
    EXPECT_THAT(status.message(), HasSubstr(c.reason));
  }
}

// -lineinfo names the sources as cicc finds them from its directory; SplitCompile names a
// relative one from the call's directory for the worker (LineMarkersFrom).
TEST(NvccCommandLineTest, LineInfoWithARelativeSourceSplits) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-lineinfo", "-c", "k.cu", "-arch=sm_90"},
        std::vector<std::string>{"-lineinfo", "-Iinc", "-c", "src/k.cu", "-o", "k.o"},
        std::vector<std::string>{"--generate-line-info", "-c", "/src/k.cu", "-o", "k.o"}}) {
    NvccCommandLine cmd = MustParse(args);
    EXPECT_TRUE(cmd.line_info);
    EXPECT_TRUE(CheckDecomposable(cmd).ok()) << CheckDecomposable(cmd);
  }
}

TEST(NvccCommandLineTest, EnvironmentFlagsMayNotHideARefusalOrAFile) {
  EXPECT_TRUE(
      CheckEnvironmentFlags("NVCC_APPEND_FLAGS", "-static-global-template-stub=false").ok());
  EXPECT_TRUE(CheckEnvironmentFlags("NVCC_PREPEND_FLAGS", "-Xcompiler '-Wall -Wextra' -DX=1").ok());
  EXPECT_TRUE(CheckEnvironmentFlags("NVCC_APPEND_FLAGS", "").ok());
  for (const char* value : {"-G", "--keep", "-MD", "-o x.o", "extra.cu", "-c", "-t 2", "'open"}) {
    absl::Status s = CheckEnvironmentFlags("NVCC_APPEND_FLAGS", value);
    EXPECT_TRUE(IsNotDecomposable(s)) << value << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr("NVCC_APPEND_FLAGS")) << value;
  }
}

TEST(NvccCommandLineTest, ValuesAreChecked) {
  EXPECT_FALSE(ParseNvccCommandLine({"-c", "k.cu", "-t", "two"}).ok());
  EXPECT_FALSE(ParseNvccCommandLine({"-c", "k.cu", "-rdc=maybe"}).ok());
  EXPECT_TRUE(
      IsNotDecomposable(ParseNvccCommandLine({"-c", "k.cu", "--compress-mode=tiny"}).status()));
  EXPECT_FALSE(ParseNvccCommandLine({"-c", "k.cu", "-o"}).ok());
}

}  // namespace
}  // namespace farm
