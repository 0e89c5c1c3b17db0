#include "libfarm/cc/dependency_scan.h"

#include <stdlib.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libfarm/files/file_contents.h"
#include "libfarm/process/subprocess.h"

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
    absl::StatusOr<DependencyScan> scan = ScanDependencies(compiler, *plan, dir);
    ASSERT_TRUE(scan.ok()) << scan.status();
    const std::vector<std::string>* files = &scan->files;
    EXPECT_EQ(files->front(), "a.cc") << compiler;
    EXPECT_THAT(*files, Contains("inc/my header.h")) << compiler;
    EXPECT_THAT(*files, Contains(HasSubstr("/stdio.h"))) << compiler;  // system headers too
    EXPECT_THAT(*files, Contains(HasSubstr("c++/12/vector"))) << compiler;
    // The search list: the -I directory first, then the built-in ones the compiler reads.
    ASSERT_FALSE(scan->search_dirs.empty()) << compiler;
    EXPECT_EQ(scan->search_dirs.front(), "inc") << compiler;
    EXPECT_THAT(scan->search_dirs, Contains("/usr/include")) << compiler;
    EXPECT_THAT(scan->search_dirs, Contains(HasSubstr("c++/12"))) << compiler;
    // The scan writes neither the object nor the call's depfile.
    EXPECT_FALSE(fs::exists(dir + "/a.o"));
    EXPECT_FALSE(fs::exists(dir + "/a.d"));
  }
  fs::remove_all(dir);
}

// The search list without a scan: what the scan's -v prints, for each compiler.
TEST(QueryIncludeSearchListTest, GivesTheScansSearchList) {
  std::string dir = MakeProject();
  for (const char* compiler : {"/usr/bin/g++", "/usr/bin/clang++"}) {
    absl::StatusOr<CcCompilePlan> plan =
        PlanRemoteCompile({"-Iinc", "-isystem", "sys", "-std=c++17", "-c", "a.cc", "-o", "a.o"},
                          *CompilerFamilyOf(compiler));
    ASSERT_TRUE(plan.ok()) << plan.status();
    absl::StatusOr<DependencyScan> scan = ScanDependencies(compiler, *plan, dir);
    ASSERT_TRUE(scan.ok()) << scan.status();
    absl::StatusOr<std::vector<std::string>> dirs = QueryIncludeSearchList(compiler, *plan, dir);
    ASSERT_TRUE(dirs.ok()) << dirs.status();
    // The scan's list, then the directories it ignored: "sys" does not exist (yet).
    ASSERT_GT(dirs->size(), scan->search_dirs.size()) << compiler;
    EXPECT_EQ(std::vector<std::string>(dirs->begin(), dirs->begin() + scan->search_dirs.size()),
              scan->search_dirs)
        << compiler;
    EXPECT_EQ(dirs->front(), "inc") << compiler;
    EXPECT_THAT(*dirs, Contains("sys")) << compiler;
    EXPECT_THAT(scan->search_dirs, Not(Contains("sys"))) << compiler;
  }
  // A C source gets C's list: no C++ directory.
  ASSERT_TRUE(WriteFileAtomically(dir + "/c.c", "int x;\n").ok());
  absl::StatusOr<CcCompilePlan> c = PlanRemoteCompile({"-c", "c.c"}, CompilerFamily::kGcc);
  ASSERT_TRUE(c.ok()) << c.status();
  absl::StatusOr<std::vector<std::string>> c_dirs = QueryIncludeSearchList("/usr/bin/gcc", *c, dir);
  ASSERT_TRUE(c_dirs.ok()) << c_dirs.status();
  EXPECT_THAT(*c_dirs, Contains("/usr/include"));
  EXPECT_THAT(*c_dirs, Not(Contains(HasSubstr("c++/12"))));
  // A flag the compiler refuses: no list, and the reason.
  absl::StatusOr<CcCompilePlan> bad =
      PlanRemoteCompile({"-std=c++1999", "-c", "a.cc"}, CompilerFamily::kGcc);
  ASSERT_TRUE(bad.ok()) << bad.status();
  absl::StatusOr<std::vector<std::string>> none = QueryIncludeSearchList("/usr/bin/g++", *bad, dir);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(none.status().message(), HasSubstr("failed with exit code 1"));
  fs::remove_all(dir);
}

// A build host in German (gcc-12-locales: "Suche für »#include <...>« beginnt hier:"): the search
// list is still read, so the scan can be kept.
TEST(ScanDependenciesTest, TheSearchListIsReadUnderATranslatedGcc) {
  ASSERT_TRUE(fs::exists("/usr/share/locale/de/LC_MESSAGES/gcc-12.mo"))
      << "GCC's German messages are missing. Fix: bash scripts/install-test-deps.sh";
  const char* saved_all = getenv("LC_ALL");
  const std::string restore_all = saved_all != nullptr ? saved_all : "";
  setenv("LC_ALL", "de_DE.UTF-8", 1);
  setenv("LANGUAGE", "de", 1);
  std::string dir = MakeProject();
  absl::StatusOr<CcCompilePlan> plan =
      PlanRemoteCompile({"-Iinc", "-c", "a.cc", "-o", "a.o"}, CompilerFamily::kGcc);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<DependencyScan> scan = ScanDependencies("/usr/bin/g++", *plan, dir);
  // Translated indeed: the same driver in that locale speaks German.
  absl::StatusOr<CommandResult> german =
      RunCommand({"/usr/bin/g++", "-v", "-E", "-x", "c++", "/dev/null", "-o", "/dev/null"});
  if (saved_all != nullptr) {
    setenv("LC_ALL", restore_all.c_str(), 1);
  } else {
    unsetenv("LC_ALL");
  }
  unsetenv("LANGUAGE");
  fs::remove_all(dir);
  ASSERT_TRUE(german.ok()) << german.status();
  ASSERT_THAT(german->stderr_text, HasSubstr("beginnt hier"))
      << "no German locale. Fix: bash scripts/install-test-deps.sh";
  ASSERT_TRUE(scan.ok()) << scan.status();
  ASSERT_FALSE(scan->search_dirs.empty());
  EXPECT_EQ(scan->search_dirs.front(), "inc");
  EXPECT_THAT(scan->search_dirs, Contains("/usr/include"));
}

TEST(ScanDependenciesTest, PreprocessedSourceListsItself) {
  std::string dir = MakeProject();
  ASSERT_TRUE(WriteFileAtomically(dir + "/p.ii", "int f() { return 1; }\n").ok());
  absl::StatusOr<CcCompilePlan> plan = PlanRemoteCompile({"-c", "p.ii"}, CompilerFamily::kGcc);
  ASSERT_TRUE(plan.ok());
  absl::StatusOr<DependencyScan> scan = ScanDependencies("/usr/bin/g++", *plan, dir);
  ASSERT_TRUE(scan.ok()) << scan.status();
  EXPECT_THAT(scan->files, ::testing::ElementsAre("p.ii"));
  fs::remove_all(dir);
}

TEST(ScanDependenciesTest, FailingScanCarriesTheDiagnostics) {
  std::string dir = MakeProject();
  ASSERT_TRUE(WriteFileAtomically(dir + "/bad.cc", "#include \"missing.h\"\n").ok());
  absl::StatusOr<CcCompilePlan> plan = PlanRemoteCompile({"-c", "bad.cc"}, CompilerFamily::kGcc);
  ASSERT_TRUE(plan.ok());
  absl::StatusOr<DependencyScan> files = ScanDependencies("/usr/bin/g++", *plan, dir);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(files.status().message(), HasSubstr("missing.h"));
  EXPECT_THAT(files.status().message(), Not(HasSubstr("farm-cc-scan-")));
  fs::remove_all(dir);
}

TEST(ParseNonexistentIncludeDirectoriesTest, ReadsGccsAndClangsLines) {
  EXPECT_THAT(ParseNonexistentIncludeDirectories(
                  "ignoring nonexistent directory \"/usr/local/include/x86_64-linux-gnu\"\n"
                  "ignoring duplicate directory \"/usr/include/c++/12\"\n"
                  "ignoring nonexistent directory \"gen dir\"\n#include <...> search starts here:\n"
                  " /usr/include\nEnd of search list.\n"),
              ::testing::ElementsAre("/usr/local/include/x86_64-linux-gnu", "gen dir"));
}

TEST(ParseIncludeSearchListTest, ReadsBothListsInOrderAndSkipsFrameworks) {
  const std::string gcc_v =
      "ignoring nonexistent directory \"/nope\"\n"
      "#include \"...\" search starts here:\n"
      " quoted\n"
      "#include <...> search starts here:\n"
      " inc\n"
      " /usr/include/c++/12\n"
      " /Library/Frameworks (framework directory)\n"
      " /usr/include\n"
      "End of search list.\n"
      " /after/the/list\n";
  EXPECT_THAT(ParseIncludeSearchList(gcc_v),
              ::testing::ElementsAre("quoted", "inc", "/usr/include/c++/12", "/usr/include"));
  // A translated message is not read at all.
  EXPECT_TRUE(
      ParseIncludeSearchList("#include <...> Suche beginnt hier:\n /usr/include\n").empty());
}

}  // namespace
}  // namespace farm::cc
