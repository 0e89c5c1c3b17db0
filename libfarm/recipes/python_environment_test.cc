#include "libfarm/recipes/python_environment.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(PythonEnvironmentTest, RequirementsHashIsStableAndSensitiveToEveryRequirement) {
  const std::vector<std::string> reqs = {"setuptools>=70.1", "wheel"};
  const std::string h = PythonRequirementsHash(reqs);
  EXPECT_EQ(h.size(), 16u);
  EXPECT_EQ(h, PythonRequirementsHash({"setuptools>=70.1", "wheel"}));
  EXPECT_NE(h, PythonRequirementsHash({"setuptools>=70.2", "wheel"}));
  EXPECT_NE(h, PythonRequirementsHash({"setuptools>=70.1"}));
  EXPECT_NE(h, PythonRequirementsHash({}));
  // Fields are length-prefixed: a different split of the same characters is another list.
  EXPECT_NE(PythonRequirementsHash({"ab", "c"}), PythonRequirementsHash({"a", "bc"}));
  EXPECT_NE(PythonRequirementsHash({"a\n2:bc"}), PythonRequirementsHash({"a", "bc"}));
}

TEST(PythonEnvironmentTest, EnvironmentKeyNamesTheInterpreterAndTheRequirements) {
  const std::vector<std::string> reqs = {"setuptools>=70.1"};
  const std::string k = PythonEnvironmentKey("/usr/bin/python3.11", "3.11.2", reqs);
  EXPECT_EQ(k.size(), 24u);
  EXPECT_EQ(k, PythonEnvironmentKey("/usr/bin/python3.11", "3.11.2", reqs));
  EXPECT_NE(k, PythonEnvironmentKey("/usr/local/bin/python3.11", "3.11.2", reqs));
  EXPECT_NE(k, PythonEnvironmentKey("/usr/bin/python3.11", "3.11.4", reqs));
  EXPECT_NE(k, PythonEnvironmentKey("/usr/bin/python3.11", "3.11.2", {"setuptools>=70.2"}));
  EXPECT_EQ(k.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(PythonEnvironmentTest, WheelPrerequisitesJoinTheRequirementsForTheChosenToolkit) {
  Recipe r;
  r.python_requirements = {"setuptools>=70.1"};
  r.prerequisites.push_back(
      Prerequisite{.name = "NCCL",
                   .wheel = "nvidia-nccl-cu{cuda_major}>=2.27",
                   .linker_names = {"{site_packages}/nvidia/nccl/lib/libnccl.so.2"}});
  r.prerequisites.push_back(Prerequisite{.name = "cuDNN", .host_library = "libcudnn.so.9"});
  auto c13 = EnvironmentContentsFor(r, ToolkitVersion{13, 0});
  ASSERT_TRUE(c13.ok()) << c13.status();
  EXPECT_EQ(c13->requirements,
            (std::vector<std::string>{"setuptools>=70.1", "nvidia-nccl-cu13>=2.27"}));
  EXPECT_EQ(c13->linker_names,
            (std::vector<std::string>{"{site_packages}/nvidia/nccl/lib/libnccl.so.2"}));
  auto c12 = EnvironmentContentsFor(r, ToolkitVersion{12, 9});
  ASSERT_TRUE(c12.ok());
  EXPECT_EQ(c12->requirements.back(), "nvidia-nccl-cu12>=2.27");
  // Another toolkit major, or other linker names, is another environment.
  EXPECT_NE(EnvironmentContentsHash(*c13), EnvironmentContentsHash(*c12));
  EnvironmentContents unlinked = *c13;
  unlinked.linker_names.clear();
  EXPECT_NE(EnvironmentContentsHash(*c13), EnvironmentContentsHash(unlinked));
  EXPECT_NE(PythonEnvironmentKey("/usr/bin/python3.11", "3.11.2", *c13),
            PythonEnvironmentKey("/usr/bin/python3.11", "3.11.2", unlinked));
  // Without prerequisites the hash (and the cached environment) is what it was before them.
  Recipe plain;
  plain.python_requirements = {"setuptools>=70.1"};
  auto contents = EnvironmentContentsFor(plain, ToolkitVersion{13, 0});
  ASSERT_TRUE(contents.ok());
  EXPECT_EQ(EnvironmentContentsHash(*contents), PythonRequirementsHash({"setuptools>=70.1"}));
  EXPECT_EQ(PythonEnvironmentKey("/p", "3.11.2", *contents),
            PythonEnvironmentKey("/p", "3.11.2", std::vector<std::string>{"setuptools>=70.1"}));
}

}  // namespace
}  // namespace farm
