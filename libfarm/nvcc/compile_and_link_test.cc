#include "libfarm/nvcc/compile_and_link.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The plan for a call's words, or why not; a call nvcc-style parsing refuses fails the test.
absl::StatusOr<CompileAndLink> PlanOf(const std::vector<std::string>& args,
                                      const std::string& object_dir = "/t") {
  auto command = ParseNvccCommandLine(args);
  EXPECT_TRUE(command.ok()) << command.status();
  if (!command.ok()) return command.status();
  EXPECT_TRUE(CompilesAndLinks(*command));
  return PlanCompileAndLink(*command, object_dir);
}

bool Links(const std::vector<std::string>& args) {
  auto command = ParseNvccCommandLine(args);
  return command.ok() && CompilesAndLinks(*command);
}

TEST(CompileAndLinkTest, SharedLibraryCompilesTheSourceAndLinksItsObject) {
  auto plan = PlanOf({"-shared", "-Xcompiler", "-fPIC", "k.cu", "-o", "libk.so", "-gencode",
                      "arch=compute_90,code=sm_90"},
                     "/tmp/x");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->compiles.size(), 1u);
  EXPECT_THAT(plan->compiles[0].args,
              ElementsAre("-shared", "-Xcompiler", "-fPIC", "k.cu", "-gencode",
                          "arch=compute_90,code=sm_90", "-c", "-o", "/tmp/x/0/k.o"));
  EXPECT_EQ(plan->compiles[0].mode, NvccMode::kCompile);
  EXPECT_EQ(plan->compiles[0].output, "/tmp/x/0/k.o");
  EXPECT_THAT(plan->link_args, ElementsAre("-shared", "-Xcompiler", "-fPIC", "/tmp/x/0/k.o", "-o",
                                           "libk.so", "-gencode", "arch=compute_90,code=sm_90"));
}

// Each .cu is compiled alone; .cpp and .o inputs, link options and the phase stay the link's.
TEST(CompileAndLinkTest, MixedInputsKeepTheirPlaceInTheLink) {
  auto plan =
      PlanOf({"-rdc=true", "a/k.cu", "main.cpp", "--output-file=prog", "b/k.cu", "pre.o",
              "-lcublas", "-L/opt/lib", "-Xlinker", "-rpath=/opt/lib", "--link", "-arch=sm_90"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->compiles.size(), 2u);
  EXPECT_THAT(plan->compiles[0].inputs, ElementsAre("a/k.cu"));
  EXPECT_THAT(plan->compiles[1].inputs, ElementsAre("b/k.cu"));
  EXPECT_TRUE(plan->compiles[1].relocatable_device_code);
  EXPECT_THAT(plan->compiles[1].args,
              ElementsAre("-rdc=true", "b/k.cu", "-lcublas", "-L/opt/lib", "-Xlinker",
                          "-rpath=/opt/lib", "-arch=sm_90", "-c", "-o", "/t/1/k.o"));
  EXPECT_THAT(plan->link_args,
              ElementsAre("-rdc=true", "/t/0/k.o", "main.cpp", "--output-file=prog", "/t/1/k.o",
                          "pre.o", "-lcublas", "-L/opt/lib", "-Xlinker", "-rpath=/opt/lib",
                          "--link", "-arch=sm_90"));
}

TEST(CompileAndLinkTest, LibraryArchiveIsALinkToo) {
  auto plan = PlanOf({"-lib", "k.cu", "-o", "libk.a"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->compiles[0].args, ElementsAre("k.cu", "-c", "-o", "/t/0/k.o"));
  EXPECT_THAT(plan->link_args, ElementsAre("-lib", "/t/0/k.o", "-o", "libk.a"));
  EXPECT_FALSE(Links({"-c", "k.cu"}));
  EXPECT_FALSE(Links({"-dlink", "k.o"}));
}

TEST(CompileAndLinkTest, RefusalsNameTheirReason) {
  struct Case {
    std::vector<std::string> args;
    std::string reason;
  };
  const Case cases[] = {
      {{"a.o", "b.o", "-o", "prog"}, "linking with no .cu input"},
      {{"-x", "cu", "k.cu", "-o", "prog"}, "-x cu when compiling and linking in one call"},
      {{"-MD", "k.cu", "-o", "prog"}, "-MD/-MMD when compiling and linking in one call"},
      {{"-G", "k.cu", "-o", "prog"}, "-G device debug info"},
      {{"--keep", "k.cu", "-o", "prog"}, "--keep expects"},
  };
  for (const Case& c : cases) {
    auto plan = PlanOf(c.args);
    ASSERT_FALSE(plan.ok()) << c.reason;
    EXPECT_TRUE(IsNotDecomposable(plan.status())) << plan.status();
    EXPECT_THAT(plan.status().message(), HasSubstr(c.reason));
  }
}

}  // namespace
}  // namespace farm
