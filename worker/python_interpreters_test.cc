#include "worker/python_interpreters.h"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "libfarm/process/subprocess.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

void WriteExecutable(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
}

// A stand-in python3.N that answers the probe with the given lines.
std::string FakePython(const std::string& answer) { return "#!/bin/sh\nprintf '" + answer + "'\n"; }

class PythonInterpretersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("python-interpreters-test-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "-",
                        getpid());  // ctest runs each test in its own process, in parallel
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(PythonInterpretersTest, AVirtualenvFirstOnPathIsNotTheInterpreterChosen) {
  const std::string venv = (dir_ / "venv").string();
  auto made =
      RunCommand({"/usr/bin/python3.11", "-m", "venv", "--without-pip", venv}, absl::Seconds(60));
  ASSERT_TRUE(made.ok() && made->exit_code == 0) << "Fix: apt-get install python3.11-venv";
  // The search skips it outright...
  const auto dirs = PythonSearchDirs(venv + "/bin:/usr/bin", "", "");
  EXPECT_EQ(std::find(dirs.begin(), dirs.end(), venv + "/bin"), dirs.end());
  // ...and the probe refuses a virtualenv's python wherever it is found.
  auto found = FindPythonInterpreters({venv + "/bin", "/usr/bin"});
  std::vector<std::string> paths;
  for (const auto& p : found) {
    if (p.version() == "3.11") paths.push_back(p.path());
  }
  EXPECT_THAT(paths, ElementsAre("/usr/bin/python3.11"));
}

TEST_F(PythonInterpretersTest, SearchOrderPrefersSystemInstallsThenPathThenPyenvNewestFirst) {
  fs::create_directories(dir_ / "pyenv" / "versions" / "3.9.18" / "bin");
  fs::create_directories(dir_ / "pyenv" / "versions" / "3.10.13" / "bin");
  const std::string pyenv = (dir_ / "pyenv").string();
  EXPECT_THAT(PythonSearchDirs("/opt/x/bin:" + pyenv + "/shims:/usr/bin", "/home/u", pyenv),
              ElementsAre("/usr/local/bin", "/usr/bin", "/opt/x/bin",
                          pyenv + "/versions/3.10.13/bin", pyenv + "/versions/3.9.18/bin"));
}

TEST_F(PythonInterpretersTest, OnlyWorkingInterpretersThatCanMakeVirtualenvsAreOffered) {
  const fs::path a = dir_ / "a", b = dir_ / "b";
  WriteExecutable(a / "python3.98", FakePython("3.98\\n3.98.1\\n/opt/py/3.98\\n0\\n1\\n"));
  // Not reached: a's 3.98 comes first.
  WriteExecutable(b / "python3.98", FakePython("3.98\\n3.98.7\\n/opt/other/3.98\\n0\\n1\\n"));
  // No venv/ensurepip (Debian without python3.97-venv).
  WriteExecutable(a / "python3.97", FakePython("3.97\\n3.97.0\\n/opt/py/3.97\\n0\\n0\\n"));
  // Its name says 3.96, it is something else.
  WriteExecutable(a / "python3.96", FakePython("3.11\\n3.11.2\\n/usr/bin/python3.11\\n0\\n1\\n"));
  // A virtualenv's.
  WriteExecutable(a / "python3.95", FakePython("3.95\\n3.95.0\\n/opt/py/3.95\\n1\\n1\\n"));
  // Does not run.
  WriteExecutable(a / "python3.94", "#!/bin/sh\nexit 1\n");
  WriteExecutable(b / "python3.93", FakePython("3.93\\n3.93.0\\n/opt/py/3.93\\n0\\n1\\n"));
  WriteExecutable(b / "python3.93-config", "#!/bin/sh\nexit 0\n");
  auto found = FindPythonInterpreters({a.string(), b.string()});
  std::vector<std::string> got;
  for (const auto& p : found) got.push_back(p.version() + " " + p.release() + " " + p.path());
  EXPECT_THAT(got, ElementsAre("3.93 3.93.0 /opt/py/3.93", "3.98 3.98.1 /opt/py/3.98"));
}

}  // namespace
}  // namespace farm::worker
