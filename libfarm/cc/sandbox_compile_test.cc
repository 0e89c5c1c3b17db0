// The proof the filesystem image design holds: a compile run by bubblewrap in a root made
// only of the toolchain's FileTree and the files the -M scan lists (at their host paths, links
// kept) writes the same object and depfile, byte for byte, as the same compile run locally.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/cc/cc_command_line.h"
#include "libfarm/cc/dependency_scan.h"
#include "libfarm/cc/file_tree_builder.h"
#include "libfarm/cc/host_toolchain.h"
#include "libfarm/cc/include_probes.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/process/subprocess.h"

namespace farm::cc {
namespace {

namespace fs = std::filesystem;

std::string MakeTempDir(const std::string& name) {
  std::string pattern = absl::StrCat(::testing::TempDir(), "/farm-cc-", name, "-XXXXXX");
  char* made = mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr);
  return fs::canonical(pattern).string();
}

void WriteFile(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  ASSERT_TRUE(WriteFileAtomically(path, text).ok()) << path;
}

// Runs `argv` in `cwd`; fails the test unless it exits 0.
CommandResult MustRun(const std::vector<std::string>& argv, const std::string& cwd) {
  std::vector<std::string> command = {"/bin/sh", "-c", "cd -- \"$0\" && exec \"$@\"", cwd};
  command.insert(command.end(), argv.begin(), argv.end());
  absl::StatusOr<CommandResult> result = RunCommand(command, absl::Minutes(5));
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  EXPECT_EQ(result->exit_code, 0) << absl::StrJoin(argv, " ") << "\n" << result->stderr_text;
  return *result;
}

// Copies each file entry from the host and makes each link, under `root`.
void Materialize(const farm::v1::FileTree& tree, const std::string& root) {
  for (const farm::v1::InputFile& entry : tree.files()) {
    fs::path at = fs::path(root) / entry.path();
    fs::create_directories(at.parent_path());
    if (!entry.symlink_target().empty()) {
      fs::create_symlink(entry.symlink_target(), at);
    } else {
      fs::copy_file("/" + entry.path(), at);
      fs::permissions(at, entry.executable() ? fs::perms(0755) : fs::perms(0644));
    }
  }
}

// bwrap with `root`'s top-level entries as the whole filesystem.
std::vector<std::string> BwrapArgv(const farm::v1::FileTree& tree, const std::string& root,
                                   const std::string& cwd) {
  std::vector<std::string> argv = {"bwrap", "--die-with-parent", "--unshare-all"};
  std::set<std::string> tops;
  bool has_tmp = false;
  for (const farm::v1::InputFile& entry : tree.files()) {
    std::string top = entry.path().substr(0, entry.path().find('/'));
    if (!tops.insert(top).second) continue;
    has_tmp = has_tmp || top == "tmp";
    if (top == entry.path() && !entry.symlink_target().empty()) {
      argv.insert(argv.end(), {"--symlink", entry.symlink_target(), "/" + top});
    } else {
      argv.insert(argv.end(), {"--bind", root + "/" + top, "/" + top});
    }
  }
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev"});
  if (!has_tmp) argv.insert(argv.end(), {"--tmpfs", "/tmp"});
  argv.insert(argv.end(), {"--chdir", cwd});
  return argv;
}

struct Outputs {
  std::string object;
  std::string depfile;
};

// Compiles `args` with `compiler` locally, then in a sandbox made of the toolchain and the
// scanned files, and returns both outputs.
void CompileBothWays(const std::string& compiler, const std::vector<std::string>& args,
                     const std::string& cwd, Outputs& local, Outputs& remote,
                     farm::v1::FileTree* tree_out = nullptr) {
  std::optional<CompilerFamily> family = CompilerFamilyOf(compiler);
  ASSERT_TRUE(family.has_value());
  absl::StatusOr<CcCompilePlan> plan = PlanRemoteCompile(args, *family);
  ASSERT_TRUE(plan.ok()) << plan.status();

  std::vector<std::string> argv = {compiler};
  argv.insert(argv.end(), args.begin(), args.end());
  MustRun(argv, cwd);
  std::string object_path = cwd + "/" + plan->object;
  std::string depfile_path = cwd + "/" + plan->depfile;
  local.object = ReadFileContents(object_path).value_or("missing");
  local.depfile = ReadFileContents(depfile_path).value_or("missing");
  fs::remove(object_path);
  fs::remove(depfile_path);

  absl::StatusOr<HostToolchainFiles> toolchain = DiscoverHostToolchain(compiler);
  ASSERT_TRUE(toolchain.ok()) << toolchain.status();
  absl::StatusOr<DependencyScan> deps = ScanDependencies(compiler, *plan, cwd);
  ASSERT_TRUE(deps.ok()) << deps.status();
  FileTreeBuilder builder;
  for (const std::string& path : toolchain->paths) ASSERT_TRUE(builder.Add(path, "/").ok()) << path;
  for (const std::string& path : deps->files) ASSERT_TRUE(builder.Add(path, cwd).ok()) << path;
  ASSERT_TRUE(AddIncludedHeaders(builder, plan->include_dirs, cwd).ok());
  EXPECT_THAT(builder.DirectoriesWithoutEntries(), ::testing::IsEmpty());
  farm::v1::FileTree tree = builder.Tree();
  if (tree_out != nullptr) *tree_out = tree;

  std::string root = MakeTempDir("root");
  Materialize(tree, root);
  // The worker makes the working directory and the output's directory.
  fs::create_directories(root + cwd + "/" + fs::path(plan->object).parent_path().string());
  std::vector<std::string> sandboxed = BwrapArgv(tree, root, cwd);
  sandboxed.insert(sandboxed.end(), argv.begin(), argv.end());
  absl::StatusOr<CommandResult> result = RunCommand(sandboxed, absl::Minutes(5));
  remote.object = ReadFileContents(root + object_path).value_or("missing");
  remote.depfile = ReadFileContents(root + depfile_path).value_or("missing");
  fs::remove_all(root);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->exit_code, 0) << absl::StrJoin(sandboxed, " ") << "\n" << result->stderr_text;
}

// A C++ file that reads system headers, a header through -I, one through a symlink and
// '..', and names __FILE__ and its working directory in debug info.
std::string WriteCxxProject() {
  std::string dir = MakeTempDir("src");
  WriteFile(dir + "/proj/inc/real.hpp",
            "#pragma once\n#include <string>\ninline std::string Name() { return __FILE__; }\n");
  fs::create_symlink("real.hpp", dir + "/proj/inc/link.hpp");
  fs::create_directories(dir + "/proj/gen");
  fs::create_symlink("../inc", dir + "/proj/gen/inc_alias");
  WriteFile(dir + "/proj/src/a.cc",
            "#include <cstdio>\n#include <vector>\n#include <map>\n#include \"link.hpp\"\n"
            "#include \"gen/inc_alias/../inc/real.hpp\"\n"
            "template <typename T> T Sum(const std::vector<T>& v) { T s{}; for (auto x : v) s += x;"
            " return s; }\n"
            "int Run() { std::map<int, std::string> m{{1, Name()}}; std::printf(\"%s %d\\n\","
            " m[1].c_str(), Sum(std::vector<int>{1, 2, 3})); return 0; }\n");
  return dir;
}

void ExpectSameOutputs(const std::string& compiler) {
  std::string dir = WriteCxxProject();
  std::string cwd = dir + "/proj/src";
  fs::create_directories(cwd + "/out");
  Outputs local, remote;
  farm::v1::FileTree tree;
  CompileBothWays(compiler,
                  {"-O2", "-g", "-fPIC", "-MD", "-MF", "out/a.d", "-I../inc", "-I..", "-c", "a.cc",
                   "-o", "out/a.o"},
                  cwd, local, remote, &tree);
  EXPECT_GT(local.object.size(), 1000u);
  EXPECT_TRUE(local.object == remote.object)
      << "objects differ (" << local.object.size() << " vs " << remote.object.size() << " bytes)";
  EXPECT_EQ(local.depfile, remote.depfile);
  EXPECT_THAT(local.depfile, ::testing::HasSubstr("link.hpp"));
  // Only the toolchain and the compile's files: no shell, no coreutils.
  for (const farm::v1::InputFile& entry : tree.files()) {
    EXPECT_NE(entry.path(), "usr/bin/dash");
    EXPECT_NE(entry.path(), "usr/bin/ls");
  }
  fs::remove_all(dir);
}

TEST(SandboxCompileTest, GxxObjectIsByteIdentical) { ExpectSameOutputs("/usr/bin/g++"); }

TEST(SandboxCompileTest, ClangxxObjectIsByteIdentical) { ExpectSameOutputs("/usr/bin/clang++"); }

// GCC's -M leaves out a header that is only probed for; without AddIncludedHeaders the
// sandbox would compile the other branch.
TEST(SandboxCompileTest, GccHasIncludeProbeSeesTheSameHeaders) {
  std::string dir = MakeTempDir("probe");
  WriteFile(dir + "/present.h", "int unused;\n");
  WriteFile(
      dir + "/a.c",
      "#if __has_include(\"present.h\")\nint probe_found = 1;\n#else\nint probe_missing = 1;\n"
      "#endif\n");
  Outputs local, remote;
  CompileBothWays("/usr/bin/gcc", {"-O2", "-c", "a.c", "-MD"}, dir, local, remote);
  EXPECT_TRUE(local.object == remote.object) << "objects differ";
  EXPECT_THAT(local.object, ::testing::HasSubstr("probe_found"));
  EXPECT_THAT(remote.object, ::testing::HasSubstr("probe_found"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace farm::cc
