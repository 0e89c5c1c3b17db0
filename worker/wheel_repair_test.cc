#include "worker/wheel_repair.h"

#include <fnmatch.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libfarm/process/subprocess.h"

namespace farm::worker {
namespace {

using ::testing::HasSubstr;

// As auditwheel matches --exclude (Python's fnmatch on the soname).
bool Excluded(const std::string& soname) {
  for (const std::string& pattern : RepairExcludes()) {
    if (::fnmatch(pattern.c_str(), soname.c_str(), 0) == 0) return true;
  }
  return false;
}

TEST(WheelRepairTest, TorchCudaAndDriverLibrariesAreLeftOutAndHostLibrariesAreCarried) {
  for (const char* soname : {"libtorch.so",
                             "libtorch_cuda.so",
                             "libtorch_cpu.so",
                             "libtorch_python.so",
                             "libc10.so",
                             "libc10_cuda.so",
                             "libshm.so",
                             "libcudart.so.13",
                             "libcudart.so.12",
                             "libcublas.so.13",
                             "libcublasLt.so.13",
                             "libcufft.so.12",
                             "libcurand.so.10",
                             "libcusparse.so.12",
                             "libcusparseLt.so.0",
                             "libcusolver.so.12",
                             "libnvrtc.so.13",
                             "libnvJitLink.so.13",
                             "libcudnn.so.9",
                             "libcudnn_graph.so.9",
                             "libnccl.so.2",
                             "libnvToolsExt.so.1",
                             "libcupti.so.13",
                             "libcufile.so.0",
                             "libnvshmem_host.so.3",
                             "libcuda.so.1",
                             "libnvidia-ml.so.1"}) {
    EXPECT_TRUE(Excluded(soname)) << soname;
  }
  // torchvision's image libraries, OpenMP, and glibc itself (allowed by the policy anyway,
  // but never mistaken for torch's libc10).
  for (const char* soname : {"libpng16.so.16", "libjpeg.so.62", "libwebp.so.7", "libgomp.so.1",
                             "libc.so.6", "libcrypto.so.3", "libz.so.1"}) {
    EXPECT_FALSE(Excluded(soname)) << soname;
  }
}

TEST(WheelRepairTest, TheDriverLibrariesAreExcludedAndFailAWheelThatShipsThem) {
  for (const std::string& driver : DriverLibraries()) {
    EXPECT_THAT(RepairExcludes(), ::testing::Contains(driver));
  }
  EXPECT_THAT(DriverLibraries(), ::testing::Contains("libcuda.so*"));
}

TEST(WheelRepairTest, TheToolsArePinnedAndTheirEnvironmentIsNotTheRecipes) {
  for (const std::string& requirement : RepairToolRequirements()) {
    EXPECT_THAT(requirement, HasSubstr("==")) << requirement;
  }
  const Recipe tools = RepairToolRecipe();
  EXPECT_EQ(tools.python_requirements, RepairToolRequirements());
  EXPECT_TRUE(tools.prerequisites.empty());
  EXPECT_THAT(tools.file, HasSubstr("repair tools"));
}

TEST(WheelRepairTest, TheArgvPassesTheWheelAndEveryPatternAsOneWordEach) {
  const std::vector<std::string> argv =
      RepairArgv("/envs/k/bin/python", "/b/root/src/dist/a b.whl", "/b.repair/root/wheelhouse");
  ASSERT_GE(argv.size(), 8u);
  EXPECT_EQ(argv[0], "/bin/sh");
  EXPECT_EQ(argv[3], "/envs/k/bin/python");
  EXPECT_EQ(argv[4], "-c");
  EXPECT_EQ(argv[5], std::string(WheelRepairScript()));
  EXPECT_EQ(argv[6], "/b/root/src/dist/a b.whl");
  EXPECT_EQ(argv[7], "/b.repair/root/wheelhouse");
  size_t excludes = 0;
  size_t drivers = 0;
  for (size_t i = 8; i + 1 < argv.size(); i += 2) {
    if (argv[i] == "--exclude") ++excludes;
    if (argv[i] == "--driver") ++drivers;
  }
  EXPECT_EQ(excludes, RepairExcludes().size());
  EXPECT_EQ(drivers, DriverLibraries().size());
  EXPECT_THAT(std::string(WheelRepairScript()), HasSubstr("auditwheel"));
}

TEST(WheelRepairTest, TheWrapperMergesStderrIntoTheFollowedStreamAndRunsNoShellText) {
  std::vector<std::string> argv = RepairArgv("python", "w.whl", "out");
  // The interpreter's slot run with a shell script instead: its words arrive intact.
  argv[3] = "/bin/sh";
  argv[5] = "echo \"to-stdout $0\"; echo to-stderr >&2";
  argv[6] = "$(touch PWNED) 'x'";
  argv.resize(8);
  auto r = RunCommand(argv, absl::Seconds(10));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->stdout_text, "to-stdout $(touch PWNED) 'x'\nto-stderr\n");
  EXPECT_EQ(r->stderr_text, "");
}

TEST(WheelRepairTest, ToolPythonIsTheRecipesWhenNewEnoughElseTheNewestElseAFix) {
  std::map<std::string, farm::v1::PythonInterpreter> pythons;
  for (const char* version : {"3.8", "3.9", "3.12"}) {
    pythons[version].set_version(version);
    pythons[version].set_path(std::string("/usr/bin/python") + version);
  }
  auto chosen = RepairToolPython(pythons, "3.9");
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_EQ(chosen->version(), "3.9");
  chosen = RepairToolPython(pythons, "3.8");  // too old for auditwheel 6: 3.12, not "3.9"
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_EQ(chosen->version(), "3.12");
  pythons.erase("3.9");
  pythons.erase("3.12");
  chosen = RepairToolPython(pythons, "3.8");
  ASSERT_FALSE(chosen.ok());
  EXPECT_THAT(chosen.status().message(), HasSubstr("python3.9 or newer"));
  EXPECT_THAT(chosen.status().message(), HasSubstr("Fix: install python3.11"));
}

TEST(WheelRepairTest, AFailureIsTheScriptsLastReasonElseTheLastLineOfTheOutput) {
  EXPECT_EQ(RepairFailureReason("wheelfarm: carrying libpng16.so.16 from /lib/x (1 bytes)\n"
                                "INFO: something\n"
                                "wheelfarm: ext.so needs libx.so (/b/libx.so), a library with no "
                                "soname. Fix: give it one\n",
                                3),
            "ext.so needs libx.so (/b/libx.so), a library with no soname. Fix: give it one");
  const std::string crashed = RepairFailureReason(
      "wheelfarm: carrying libpng16.so.16 from /lib/x (1 bytes)\n"
      "Traceback (most recent call last):\nValueError: boom\n",
      1);
  EXPECT_THAT(crashed, HasSubstr("the wheel repair step failed (exit 1): ValueError: boom"));
  EXPECT_THAT(crashed, HasSubstr("Fix:"));
}

}  // namespace
}  // namespace farm::worker
