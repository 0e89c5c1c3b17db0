#include "libfarm/cc/depfile_layout.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/process/subprocess.h"

namespace farm::cc {
namespace {

namespace fs = std::filesystem;

// A copy of one small project under `root`: a source and two headers of its own.
void WriteProject(const fs::path& root) {
  fs::create_directories(root / "include" / "deep");
  fs::create_directories(root / "build");
  ASSERT_TRUE(
      WriteFileAtomically((root / "a.cc").string(),
                          "#include <vector>\n#include \"deep/b.h\"\nint f() { return B; }\n")
          .ok());
  ASSERT_TRUE(WriteFileAtomically((root / "include" / "deep" / "b.h").string(),
                                  "#include \"c.h\"\n#define B C\n")
                  .ok());
  ASSERT_TRUE(
      WriteFileAtomically((root / "include" / "deep" / "c.h").string(), "#define C 1\n").ok());
}

// The dependency file `compiler` writes for the project under `root`.
std::string CompilerDepfile(const std::string& compiler, const fs::path& root) {
  const fs::path build = root / "build";
  auto run = RunCommand({compiler, "-O2", absl::StrCat("-I", (root / "include").string()), "-MD",
                         "-MP", "-MT", "obj/a.cc.o", "-MF", (build / "a.d").string(), "-c",
                         (root / "a.cc").string(), "-o", (build / "a.o").string()});
  EXPECT_TRUE(run.ok() && run->exit_code == 0)
      << compiler << " failed: " << (run.ok() ? run->stderr_text : run.status().ToString());
  auto text = ReadFileContents((build / "a.d").string());
  EXPECT_TRUE(text.ok());
  return text.ok() ? *text : "";
}

DepfilePathMap Rebase(const std::string& from, const std::string& to) {
  return [from, to](absl::string_view path) -> absl::StatusOr<std::string> {
    if (absl::StartsWith(path, from + "/")) return absl::StrCat(to, path.substr(from.size()));
    return std::string(path);
  };
}

class DepfileLayoutTest : public ::testing::TestWithParam<const char*> {};

// For roots of many lengths (the lines break at different places), the file the compiler
// writes in one tree, rewritten, is byte for byte the file it writes in another.
TEST_P(DepfileLayoutTest, RewrittenFileIsTheOneTheCompilerWritesInTheOtherTree) {
  const std::string compiler = GetParam();
  const CompilerFamily family =
      absl::StrContains(compiler, "clang") ? CompilerFamily::kClang : CompilerFamily::kGcc;
  char tmpl[] = "/tmp/depfile-layout-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path top = tmpl;
  std::vector<std::string> roots;
  for (size_t len : {1, 5, 17, 30, 44, 58, 61, 66, 75, 90}) {
    roots.push_back((top / std::string(len, 'r')).string());
    WriteProject(roots.back());
  }
  int rewritten = 0;
  for (size_t i = 0; i + 1 < roots.size(); ++i) {
    const std::string a = roots[i];
    const std::string b = roots[(i * 3 + 1) % roots.size()];
    const std::string from_a = CompilerDepfile(compiler, a);
    const std::string expected = CompilerDepfile(compiler, b);
    ASSERT_NE(from_a, expected) << "the roots should move the line breaks";
    auto got = RewriteDepfilePaths(from_a, family, Rebase(a, b));
    ASSERT_TRUE(got.ok()) << got.status() << "\n" << from_a;
    EXPECT_EQ(*got, expected) << "from " << a << " to " << b;
    ++rewritten;
  }
  EXPECT_EQ(rewritten, 9);
  fs::remove_all(top);
}

INSTANTIATE_TEST_SUITE_P(Compilers, DepfileLayoutTest, ::testing::Values("g++", "clang++"));

TEST(DepfileLayoutRefusalTest, EscapedNamesAndForeignLayoutsAreNotRewritten) {
  const auto same = [](absl::string_view p) { return absl::StatusOr<std::string>(p); };
  auto escaped = RewriteDepfilePaths("a.o: my\\ dir/a.cc\n", CompilerFamily::kGcc, same);
  EXPECT_EQ(escaped.status().code(), absl::StatusCode::kFailedPrecondition);
  // Every name on one line past column 72: not how GCC writes it.
  const std::string long_line = absl::StrCat("a.o: /", std::string(80, 'x'), ".h /y.h\n");
  auto foreign = RewriteDepfilePaths(long_line, CompilerFamily::kGcc, same);
  EXPECT_EQ(foreign.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(foreign.status().message(), "laid out"));
  auto no_rule = RewriteDepfilePaths("just words\n", CompilerFamily::kGcc, same);
  EXPECT_EQ(no_rule.status().code(), absl::StatusCode::kFailedPrecondition);
  auto unknown = RewriteDepfilePaths("a.o: b.h\nb.h: c.h\n", CompilerFamily::kGcc, same);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kFailedPrecondition);
  // A refusal from the map stops the rewrite.
  auto refused = RewriteDepfilePaths("a.o: b.h\n", CompilerFamily::kGcc, [](absl::string_view) {
    return absl::StatusOr<std::string>(absl::FailedPreconditionError("no"));
  });
  EXPECT_FALSE(refused.ok());
}

}  // namespace
}  // namespace farm::cc
