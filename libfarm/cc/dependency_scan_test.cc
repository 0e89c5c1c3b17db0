#include "libfarm/cc/dependency_scan.h"

#include <stdlib.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libfarm/files/file_contents.h"

namespace farm::cc {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

std::string MakeProject() {
  std::string dir = ::testing::TempDir() + "/farm-cc-scan-XXXXXX";
  EXPECT_NE(mkdtemp(dir.data()), nullptr);
  fs::create_directories(dir + "/inc");
  EXPECT_TRUE(WriteFileAtomically(dir + "/inc/my header.h", "#include <stdio.h>\n").ok());
  EXPECT_TRUE(
      WriteFileAtomically(dir + "/a.cc", "#include \"my header.h\"\n#include <vector>\n").ok());
  return dir;
}

TEST(ScanDependenciesTest, ListsEveryFileTheCompileReads) {
  std::string dir = MakeProject();
  for (const char* compiler : {"/usr/bin/g++", "/usr/bin/clang++"}) {
    absl::StatusOr<CcCompilePlan> plan = PlanRemoteCompile(
        {"-Iinc", "-MD", "-MF", "a.d", "-c", "a.cc", "-o", "a.o"}, *CompilerFamilyOf(compiler));
    ASSERT_TRUE(plan.ok()) << plan.status();
    absl::StatusOr<std::vector<std::string>> files = ScanDependencies(compiler, *plan, dir);
    ASSERT_TRUE(files.ok()) << files.status();
    EXPECT_EQ(files->front(), "a.cc") << compiler;
    EXPECT_THAT(*files, Contains("inc/my header.h")) << compiler;
    EXPECT_THAT(*files, Contains(HasSubstr("/stdio.h"))) << compiler;  // system headers too
    EXPECT_THAT(*files, Contains(HasSubstr("c++/12/vector"))) << compiler;
    // The scan writes neither the object nor the call's depfile.
    EXPECT_FALSE(fs::exists(dir + "/a.o"));
    EXPECT_FALSE(fs::exists(dir + "/a.d"));
  }
  fs::remove_all(dir);
}

TEST(ScanDependenciesTest, PreprocessedSourceListsItself) {
  std::string dir = MakeProject();
  ASSERT_TRUE(WriteFileAtomically(dir + "/p.ii", "int f() { return 1; }\n").ok());
  absl::StatusOr<CcCompilePlan> plan = PlanRemoteCompile({"-c", "p.ii"}, CompilerFamily::kGcc);
  ASSERT_TRUE(plan.ok());
  absl::StatusOr<std::vector<std::string>> files = ScanDependencies("/usr/bin/g++", *plan, dir);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(*files, ::testing::ElementsAre("p.ii"));
  fs::remove_all(dir);
}

TEST(ScanDependenciesTest, FailingScanCarriesTheDiagnostics) {
  std::string dir = MakeProject();
  ASSERT_TRUE(WriteFileAtomically(dir + "/bad.cc", "#include \"missing.h\"\n").ok());
  absl::StatusOr<CcCompilePlan> plan = PlanRemoteCompile({"-c", "bad.cc"}, CompilerFamily::kGcc);
  ASSERT_TRUE(plan.ok());
  absl::StatusOr<std::vector<std::string>> files = ScanDependencies("/usr/bin/g++", *plan, dir);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(files.status().message(), HasSubstr("missing.h"));
  EXPECT_THAT(files.status().message(), Not(HasSubstr("farm-cc-scan-")));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace farm::cc
