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

}  // namespace
}  // namespace farm
