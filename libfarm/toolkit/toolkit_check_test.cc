#include "libfarm/toolkit/toolkit_check.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

namespace farm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kInstalled[] = "/usr/local/cuda";

std::string HostArch() {
  struct utsname u {};
  ::uname(&u);
  return u.machine;
}

class ToolkitCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("farm_toolkit_check_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A toolkit root whose required files link to the installed toolkit's, less `omit`.
  std::string FakeToolkit(const std::string& name, const std::set<std::string>& omit = {}) {
    const fs::path root = dir_ / name;
    for (const ToolkitFile& f : RequiredToolkitFiles()) {
      if (omit.count(f.path)) continue;
      fs::create_directories((root / f.path).parent_path());
      fs::create_symlink(fs::path(kInstalled) / f.path, root / f.path);
    }
    return root.string();
  }

  // /bin/true with its ELF machine set to `machine`: an executable for another CPU.
  std::string ForeignExecutable(const std::string& path, uint16_t machine) {
    fs::remove(path);
    fs::copy_file("/bin/true", path);
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(18);
    const char bytes[2] = {static_cast<char>(machine & 0xff), static_cast<char>(machine >> 8)};
    f.write(bytes, 2);
    return path;
  }

  fs::path dir_;
};

TEST_F(ToolkitCheckTest, TheInstalledToolkitIsCompleteAndSaysItsRelease) {
  EXPECT_TRUE(CheckToolkitFiles(kInstalled).ok());
  auto check = CheckToolkit(kInstalled);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(check->ran_nvcc);
  EXPECT_EQ(check->cpu_arch, HostArch());
  EXPECT_EQ(check->version, "13.0");
  EXPECT_THAT(check->release, ::testing::StartsWith("V13.0."));
  const std::string release = check->release.substr(1);
  EXPECT_TRUE(CheckToolkit(kInstalled, {.expect_release = release}).ok());
  auto other = CheckToolkit(kInstalled, {.expect_release = "13.0.1"});
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(other.status().message(), HasSubstr("says " + check->release + ", expected V13.0.1"));
}

TEST_F(ToolkitCheckTest, EachMissingToolIsNamedByItsPath) {
  for (const char* tool : {"nvvm/bin/cicc", "bin/ptxas", "bin/fatbinary", "bin/cudafe++",
                           "include/cuda_runtime.h", "include/crt/host_config.h"}) {
    SCOPED_TRACE(tool);
    const std::string root = FakeToolkit(fs::path(tool).filename().string(), {tool});
    absl::Status s = CheckToolkitFiles(root);
    EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(s.message(), HasSubstr("missing " + root + "/" + tool));
    EXPECT_THAT(s.message(), HasSubstr("Fix: "));
    EXPECT_FALSE(ProbeUsableToolkit(root).ok());
  }
  EXPECT_THAT(CheckToolkitFiles((dir_ / "nowhere").string()).message(),
              HasSubstr("not a directory"));
}

TEST_F(ToolkitCheckTest, AToolWithoutItsExecuteBitIsNamed) {
  const std::string root = FakeToolkit("noexec", {"bin/fatbinary"});
  std::ofstream(root + "/bin/fatbinary") << "x";
  ::chmod((root + "/bin/fatbinary").c_str(), 0644);
  absl::Status s = CheckToolkitFiles(root);
  EXPECT_THAT(s.message(), HasSubstr("not executable: " + root + "/bin/fatbinary"));
  EXPECT_THAT(s.message(), HasSubstr("Fix: chmod +x " + root + "/bin/fatbinary"));
}

// nvcc for a CPU no binfmt_misc handler takes: the files are checked and nvcc is not run,
// unless the toolkit must run here (a worker's), which is an error naming why and the fix.
TEST_F(ToolkitCheckTest, AToolkitThisHostCannotRunIsCheckedAsFilesOrRefused) {
  const std::string root = FakeToolkit("foreign", {"bin/nvcc"});
  ForeignExecutable(root + "/bin/nvcc", 0x1234);
  auto files_only = CheckToolkit(root);
  ASSERT_TRUE(files_only.ok()) << files_only.status();
  EXPECT_FALSE(files_only->ran_nvcc);
  EXPECT_EQ(files_only->cpu_arch, "ELF machine 4660");
  EXPECT_THAT(files_only->not_run, HasSubstr("host cannot run it: no binfmt_misc handler"));

  auto refused = CheckToolkit(root, {.must_run = true});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr(root + "/bin/nvcc is an ELF machine 4660 executable and this " +
                        HostArch() + " host cannot run it"));
  EXPECT_THAT(refused.status().message(), HasSubstr("Fix: use a toolkit built for " + HostArch()));
  auto probed = ProbeUsableToolkit(root);
  ASSERT_FALSE(probed.ok());
  EXPECT_EQ(probed.status().message(), refused.status().message());
}

// Some hosts put a wrapper script at bin/nvcc that execs the real one: it runs here.
TEST_F(ToolkitCheckTest, AWrapperScriptNvccIsRun) {
  const std::string root = FakeToolkit("wrapper", {"bin/nvcc"});
  std::ofstream(root + "/bin/nvcc") << "#!/bin/sh\nexec " << kInstalled << "/bin/nvcc \"$@\"\n";
  ::chmod((root + "/bin/nvcc").c_str(), 0755);
  auto check = CheckToolkit(root);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(check->ran_nvcc);
  EXPECT_EQ(check->cpu_arch, "script");
}

TEST_F(ToolkitCheckTest, BinfmtEntriesMatchByMaskedMagic) {
  const fs::path binfmt = dir_ / "binfmt_misc";
  fs::create_directories(binfmt);
  std::ofstream(binfmt / "register");
  std::ofstream(binfmt / "status") << "enabled\n";
  // Debian's qemu-aarch64 entry, as /proc/sys/fs/binfmt_misc/qemu-aarch64 shows it.
  std::ofstream(binfmt / "qemu-aarch64")
      << "enabled\ninterpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P\nflags: POF\noffset 0\n"
         "magic 7f454c460201010000000000000000000200b700\n"
         "mask ffffffffffffff00fffffffffffffffffeffffff\n";
  std::ofstream(binfmt / "python3.11") << "enabled\ninterpreter /usr/bin/python3.11\nflags: \n"
                                          "extension .pyc\n";
  const std::string arm = ForeignExecutable((dir_ / "arm").string(), 183);
  auto handler = FindBinfmtHandler(arm, binfmt.string());
  ASSERT_TRUE(handler.has_value());
  EXPECT_EQ(handler->name, "qemu-aarch64");
  EXPECT_EQ(handler->interpreter, "/usr/libexec/qemu-binfmt/aarch64-binfmt-P");
  EXPECT_EQ(*ExecutableCpuArch(arm), "aarch64");
  EXPECT_FALSE(FindBinfmtHandler("/bin/true", binfmt.string()).has_value());
  std::ofstream(binfmt / "qemu-aarch64", std::ios::trunc)
      << "disabled\ninterpreter /x\nflags: F\noffset 0\n"
         "magic 7f454c460201010000000000000000000200b700\n"
         "mask ffffffffffffff00fffffffffffffffffeffffff\n";
  EXPECT_FALSE(FindBinfmtHandler(arm, binfmt.string()).has_value());
}

}  // namespace
}  // namespace farm
