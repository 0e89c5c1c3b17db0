#include "libfarm/cc/cc_command_line.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::cc {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

CcCompilePlan MustPlan(const std::vector<std::string>& args,
                       CompilerFamily family = CompilerFamily::kGcc) {
  absl::StatusOr<CcCompilePlan> plan = PlanRemoteCompile(args, family);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : CcCompilePlan{};
}

// The reason a call stays local ("" when it is sent).
std::string Reason(const std::vector<std::string>& args,
                   CompilerFamily family = CompilerFamily::kGcc) {
  absl::StatusOr<CcCompilePlan> plan = PlanRemoteCompile(args, family);
  if (plan.ok()) return "";
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition) << plan.status();
  return std::string(plan.status().message());
}

TEST(CompilerFamilyOfTest, NamesDrivers) {
  for (const char* gcc : {"gcc", "g++", "cc", "c++", "/usr/bin/g++-12", "x86_64-linux-gnu-g++-12",
                          "aarch64-linux-gnu-gcc", "/opt/rh/gcc-toolset-13/root/usr/bin/gcc",
                          "x86_64-conda-linux-gnu-c++"}) {
    EXPECT_EQ(CompilerFamilyOf(gcc), CompilerFamily::kGcc) << gcc;
  }
  for (const char* clang :
       {"clang", "clang++", "clang-14", "clang++-14", "/usr/lib/llvm-14/bin/clang",
        "x86_64-pc-linux-gnu-clang++", "clang-17.0"}) {
    EXPECT_EQ(CompilerFamilyOf(clang), CompilerFamily::kClang) << clang;
  }
  for (const char* other : {"nvcc", "ld", "gcc-ar", "gcc-nm-12", "clang-cl", "clang-cpp", "mpicc",
                            "distcc", "ccache", "icecc", "cpp", "", "/usr/bin/", "c99"}) {
    EXPECT_EQ(CompilerFamilyOf(other), std::nullopt) << other;
  }
}

TEST(PlanRemoteCompileTest, CMakeReleaseLine) {
  CcCompilePlan plan =
      MustPlan({"-DFOO_EXPORTS", "-I/src/include", "-isystem", "/opt/x/include", "-O3", "-DNDEBUG",
                "-fPIC", "-std=gnu++17", "-MD", "-MT", "CMakeFiles/x.dir/a.cc.o", "-MF",
                "CMakeFiles/x.dir/a.cc.o.d", "-o", "CMakeFiles/x.dir/a.cc.o", "-c", "/abs/a.cc"});
  EXPECT_EQ(plan.source, "/abs/a.cc");
  EXPECT_EQ(plan.object, "CMakeFiles/x.dir/a.cc.o");
  EXPECT_EQ(plan.depfile, "CMakeFiles/x.dir/a.cc.o.d");
  EXPECT_THAT(plan.DependencyScanArgs("/tmp/scan"),
              ElementsAre("-DFOO_EXPORTS", "-I/src/include", "-isystem", "/opt/x/include", "-O3",
                          "-DNDEBUG", "-fPIC", "-std=gnu++17", "/abs/a.cc", "-M", "-MT",
                          kScanTarget, "-MF", "/tmp/scan"));
}

TEST(PlanRemoteCompileTest, CMakeRelWithDebInfoCLine) {
  CcCompilePlan plan =
      MustPlan({"-O2", "-g", "-DNDEBUG", "-std=gnu11", "-fvisibility=hidden", "-Wall", "-Wextra",
                "-Werror=implicit-function-declaration", "-Wno-unused-parameter", "-MD", "-MT",
                "src/CMakeFiles/lib.dir/x.c.o", "-MF", "src/CMakeFiles/lib.dir/x.c.o.d", "-o",
                "src/CMakeFiles/lib.dir/x.c.o", "-c", "/src/x.c"});
  EXPECT_EQ(plan.object, "src/CMakeFiles/lib.dir/x.c.o");
  EXPECT_EQ(plan.depfile, "src/CMakeFiles/lib.dir/x.c.o.d");
}

TEST(PlanRemoteCompileTest, TorchCppExtensionLine) {
  // torch.utils.cpp_extension's ninja rule: $cxx -MMD -MF $out.d $cflags -c $in -o $out
  // $post_cflags, cflags from setuptools plus -I/-isystem, post_cflags from torch.
  const std::string venv = "/venv/lib/python3.11/site-packages/torch";
  CcCompilePlan plan = MustPlan({"-MMD",
                                 "-MF",
                                 "/w/build/temp.linux-x86_64-cpython-311/ext.o.d",
                                 "-pthread",
                                 "-Wsign-compare",
                                 "-DNDEBUG",
                                 "-g",
                                 "-fwrapv",
                                 "-O2",
                                 "-Wall",
                                 "-fPIC",
                                 "-I/w/csrc",
                                 "-isystem",
                                 venv + "/include",
                                 "-isystem",
                                 venv + "/include/torch/csrc/api/include",
                                 "-isystem",
                                 "/usr/include/python3.11",
                                 "-c",
                                 "-c",
                                 "/w/csrc/ext.cpp",
                                 "-o",
                                 "/w/build/temp.linux-x86_64-cpython-311/ext.o",
                                 "-DTORCH_API_INCLUDE_EXTENSION_H",
                                 "-DPYBIND11_COMPILER_TYPE=\"_gcc\"",
                                 "-DPYBIND11_STDLIB=\"_libstdcpp\"",
                                 "-DPYBIND11_BUILD_ABI=\"_cxxabi1018\"",
                                 "-DTORCH_EXTENSION_NAME=ext",
                                 "-D_GLIBCXX_USE_CXX11_ABI=1",
                                 "-std=c++17"});
  EXPECT_EQ(plan.source, "/w/csrc/ext.cpp");
  EXPECT_EQ(plan.object, "/w/build/temp.linux-x86_64-cpython-311/ext.o");
  EXPECT_EQ(plan.depfile, "/w/build/temp.linux-x86_64-cpython-311/ext.o.d");
}

TEST(PlanRemoteCompileTest, SetuptoolsDefaultCLine) {
  CcCompilePlan plan =
      MustPlan({"-pthread", "-Wsign-compare", "-DNDEBUG", "-g", "-fwrapv", "-O2", "-Wall", "-fPIC",
                "-I/usr/include/python3.11", "-c", "a.c", "-o", "build/temp/a.o"});
  EXPECT_EQ(plan.source, "a.c");
  EXPECT_EQ(plan.object, "build/temp/a.o");
  EXPECT_EQ(plan.depfile, "");
}

TEST(PlanRemoteCompileTest, DefaultObjectAndDepfileNames) {
  // Checked against g++ 12 and clang 14: the object is the source's base name with .o in the
  // working directory; -MD's file is the -o name with its suffix replaced by .d, else the
  // source's base name with .d.
  EXPECT_EQ(MustPlan({"-c", "sub/b.cc"}).object, "b.o");
  EXPECT_EQ(MustPlan({"-c", "-x", "c++", "noext"}).object, "noext.o");
  EXPECT_EQ(MustPlan({"-c", "dir.x/a.b.cpp"}).object, "a.b.o");
  EXPECT_EQ(MustPlan({"-c", "sub/b.cc", "-MD"}).depfile, "b.d");
  EXPECT_EQ(MustPlan({"-c", "a.cc", "-MD", "-o", "d.x/foo"}).depfile, "d.x/foo.d");
  EXPECT_EQ(MustPlan({"-c", "a.cc", "-MMD", "-o", "d.x/foo.bar.o"}).depfile, "d.x/foo.bar.d");
  EXPECT_EQ(MustPlan({"-c", "a.cc", "-MD", "-o", "out.obj"}).depfile, "out.d");
  EXPECT_EQ(MustPlan({"-c", "a.cc", "-MD", "-MFdeps/a.dep", "-o", "a.o"}).depfile, "deps/a.dep");
  EXPECT_EQ(MustPlan({"-c", "a.cc", "-oout/a.o"}).object, "out/a.o");
}

TEST(PlanRemoteCompileTest, ValuesAreNotReadAsOptionsOrSources) {
  CcCompilePlan plan = MustPlan({"-c", "a.cc", "-o", "-foo", "-include", "pre.h", "-D", "X=1",
                                 "-MT", "-weird", "-MF", "x.d", "-MD", "-isystem", "inc.cc",
                                 "--param", "max-inline-insns-single=10", "-Xlinker", "b.o"});
  EXPECT_EQ(plan.object, "-foo");
  EXPECT_EQ(plan.source, "a.cc");
  EXPECT_EQ(plan.depfile, "x.d");
  EXPECT_THAT(plan.DependencyScanArgs("s"),
              ElementsAre("a.cc", "-include", "pre.h", "-D", "X=1", "-isystem", "inc.cc", "--param",
                          "max-inline-insns-single=10", "-Xlinker", "b.o", "-M", "-MT", kScanTarget,
                          "-MF", "s"));
}

TEST(PlanRemoteCompileTest, ScanArgsDropOutputsAndDependencyOptions) {
  CcCompilePlan plan = MustPlan({"-MD", "-MP", "-MQ", "q", "-MTt", "-MF", "f.d", "-c", "-x", "c",
                                 "src", "-o", "o.o", "-MMD"});
  EXPECT_THAT(plan.DependencyScanArgs("s"),
              ElementsAre("-x", "c", "src", "-M", "-MT", kScanTarget, "-MF", "s"));
}

TEST(PlanRemoteCompileTest, AcceptsKnownOptionForms) {
  EXPECT_EQ(Reason({"-c",
                    "a.cc",
                    "-O0",
                    "-Os",
                    "-Ofast",
                    "-g3",
                    "-ggdb",
                    "-gdwarf-4",
                    "-gno-record-gcc-switches",
                    "-fno-lto",
                    "-fno-plugin",
                    "-fstack-protector-strong",
                    "-fdebug-prefix-map=/a=/b",
                    "-ffile-prefix-map=/a=.",
                    "-fmacro-prefix-map=/x=y",
                    "-fprofile-arcs",
                    "-fprofile-generate",
                    "-fopenmp",
                    "-fsanitize=address",
                    "-fdiagnostics-color=always",
                    "-fno-input-charset",
                    "-finput-charset=UTF-8",
                    "-Werror",
                    "-Wno-error=deprecated",
                    "-Wp,-D_FORTIFY_SOURCE=2",
                    "-Wa,--noexecstack",
                    "-Wl,--as-needed",
                    "-mavx2",
                    "-march=x86-64-v3",
                    "-mtune=generic",
                    "-m64",
                    "-std=c++20",
                    "-pthread",
                    "-w",
                    "-pedantic-errors",
                    "-ansi",
                    "--param=l1-cache-size=32",
                    "-pipe",
                    "-nostdinc++",
                    "-U",
                    "X",
                    "-UY",
                    "-iquote",
                    "q",
                    "-idirafter",
                    "d",
                    "-imacros",
                    "m.h",
                    "-I",
                    "sep",
                    "--sysroot=/sr",
                    "--sysroot",
                    "/sr2",
                    "-isysroot",
                    "/sr3",
                    "-MD"}),
            "");
  EXPECT_EQ(Reason({"-c", "a.cc", "-target", "aarch64-linux-gnu", "--target=x86_64-linux-gnu",
                    "-stdlib=libstdc++", "-fcolor-diagnostics"},
                   CompilerFamily::kClang),
            "");
}

TEST(PlanRemoteCompileTest, RefusesWithReasons) {
  EXPECT_EQ(Reason({"a.o", "b.o", "-o", "x"}), "not a compile (no -c): a link");
  EXPECT_EQ(Reason({"a.cc", "-o", "x", "-shared"}), "not a compile (no -c): a link");
  EXPECT_EQ(Reason({"-E", "a.cc"}), "-E: preprocessing only");
  EXPECT_EQ(Reason({"-E", "-c", "a.cc"}), "-E: preprocessing only");
  EXPECT_EQ(Reason({"-S", "-c", "a.cc"}), "-S: assembly output only");
  EXPECT_EQ(Reason({"-M", "-c", "a.cc"}), "-M: dependencies only, no object");
  EXPECT_EQ(Reason({"-c", "a.cc", "b.cc"}), "2 source files");
  EXPECT_EQ(Reason({"-c"}), "no source file");
  EXPECT_EQ(Reason({"-c", "-x", "c", "-"}), "reads standard input");
  EXPECT_EQ(Reason({"-c", "a.cc", "-flto"}), "-flto: LTO objects are not reproducible");
  EXPECT_EQ(Reason({"-c", "a.cc", "-flto=thin"}), "-flto=thin: LTO objects are not reproducible");
  EXPECT_EQ(Reason({"-c", "a.cc", "-march=native"}),
            "-march=native: depends on the build host's CPU");
  EXPECT_EQ(Reason({"-c", "a.cc", "-mtune=native"}),
            "-mtune=native: depends on the build host's CPU");
  EXPECT_EQ(Reason({"-c", "a.cc", "@x.rsp"}), "response file @x.rsp");
  EXPECT_EQ(Reason({"@x.rsp"}), "response file @x.rsp");
  EXPECT_EQ(Reason({"-c", "a.cc", "--frobnicate"}), "unknown option '--frobnicate'");
  EXPECT_EQ(Reason({"-c", "a.cc", "-shared"}), "unknown option '-shared'");
  EXPECT_EQ(Reason({"-c", "a.cc", "-save-temps=obj"}), "-save-temps");
  EXPECT_EQ(Reason({"-c", "a.cc", "-gsplit-dwarf"}), "-gsplit-dwarf: writes a .dwo");
  EXPECT_EQ(Reason({"-c", "a.cc", "-fprofile-use=x.prof"}),
            "-fprofile-use=x.prof: reads profile data");
  EXPECT_EQ(Reason({"-c", "a.cc", "-B", "/opt/conda/compiler_compat"}),
            "-B: compiler programs from another directory");
  EXPECT_EQ(Reason({"-c", "a.cc", "-B/x/"}), "-B: compiler programs from another directory");
  EXPECT_EQ(Reason({"-c", "a.cc", "-fplugin=foo.so"}), "-fplugin=foo.so: loads a compiler plugin");
  EXPECT_EQ(Reason({"-c", "a.cc", "-specs=x.specs"}), "-specs=: reads a specs file");
  EXPECT_EQ(Reason({"-c", "-x", "cuda", "a.cu"}), "-x cuda");
  EXPECT_EQ(Reason({"-c", "-x", "c++-header", "a.h"}),
            "-x c++-header: writes a precompiled header");
  EXPECT_EQ(Reason({"-c", "a.cc", "-fdump-tree-all"}), "-fdump-...: writes dump files");
  EXPECT_EQ(Reason({"-c", "a.cc", "-fstack-usage"}), "-fstack-usage: writes a .su file");
  EXPECT_EQ(Reason({"-c", "a.cc", "--coverage"}), "--coverage: writes .gcno");
  EXPECT_EQ(Reason({"-c", "a.cc", "-ftest-coverage"}), "-ftest-coverage: writes .gcno");
  EXPECT_EQ(Reason({"-c", "a.cc", "-o", "-"}), "-o -: writes the object to standard output");
  EXPECT_EQ(Reason({"-c", "a.s"}), "assembler source 'a.s'");
  EXPECT_EQ(Reason({"-c", "a.h"}), "header 'a.h' as input: writes a precompiled header");
  EXPECT_EQ(Reason({"-c", "a.o"}), "'a.o' is not a C or C++ source (a linker input?)");
  EXPECT_EQ(Reason({"-c", "a.cc", "-Xclang", "-load"}, CompilerFamily::kClang),
            "-Xclang -load: internal options not checked");
  EXPECT_EQ(Reason({"-c", "a.cc", "-target", "x"}), "unknown option '-target'");
  EXPECT_EQ(Reason({"-c", "a.cc", "-Wp,-MD,a.d"}),
            "-Wp,-MD,a.d: preprocessor option '-MD' not checked");
  EXPECT_EQ(Reason({"-c", "a.cc", "-Wa,-adhln=a.lst"}),
            "-Wa,-adhln=a.lst: assembler option '-adhln=a.lst' not checked");
  EXPECT_EQ(Reason({"-c", "a.cc", "-Wmissing-include-dirs"}),
            "-Wmissing-include-dirs: warns about -I directories the sandbox may not hold");
  EXPECT_EQ(Reason({"-c", "a.cc", "-finput-charset=latin1"}),
            "-finput-charset=latin1: converting charsets loads iconv modules");
  EXPECT_EQ(Reason({"-c", "a.cc", "-fmodules"}, CompilerFamily::kClang),
            "-fmodules: C++ modules need a module cache");
  EXPECT_EQ(Reason({"-c", "a.cc", "-ftime-trace"}, CompilerFamily::kClang),
            "-ftime-trace: writes a time trace");
  EXPECT_EQ(Reason({"-c", "a.cc", "-fno-integrated-as"}, CompilerFamily::kClang),
            "-fno-integrated-as: runs the system assembler");
  EXPECT_EQ(Reason({"-c", "a.cc", "--gcc-toolchain=/opt/gcc"}, CompilerFamily::kClang),
            "--gcc-toolchain: selects another GCC installation");
  EXPECT_EQ(Reason({"-c", "a.cc", "-v"}), "-v: prints the driver's commands");
  EXPECT_EQ(Reason({"-c", "a.cc", "-MG", "-MD"}), "-MG: treats missing headers as generated");
  EXPECT_EQ(Reason({"-c", "a.cc", "-o"}), "-o without a value");
  EXPECT_EQ(Reason({"-c", "a.cc", "-o", "a.o", "-o", "b.o"}), "2 -o options");
  EXPECT_EQ(Reason({"-c", "a.cc", "-include-pch", "x.pch"}, CompilerFamily::kClang),
            "-include-pch: precompiled headers");
}

TEST(PlanRemoteCompileTest, LanguageFromDashX) {
  // -x applies to the sources after it; "none" goes back to suffixes.
  EXPECT_EQ(Reason({"-c", "-x", "c++", "a.inl"}), "");
  EXPECT_EQ(Reason({"-c", "-x", "c++", "-x", "none", "a.inl"}),
            "'a.inl' is not a C or C++ source (a linker input?)");
  for (const char* source : {"a.c", "a.cc", "a.cpp", "a.cxx", "a.c++", "a.C", "a.cp", "a.i", "a.ii",
                             "/abs/dir.d/x.CPP"}) {
    EXPECT_EQ(Reason({"-c", source}), "") << source;
  }
}

}  // namespace
}  // namespace farm::cc
