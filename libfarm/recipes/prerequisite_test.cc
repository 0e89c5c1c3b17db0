#include "libfarm/recipes/prerequisite.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "libfarm/recipes/recipe_loader.h"
#include "libfarm/recipes/recipe_proto.h"

namespace farm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

constexpr const char* kBase = R"(name = "demo"
package = "demo-pkg"
versions = ["1.0"]

[source]
kind = "upload"

[python]
version = "3.11"
requirements = ["setuptools>=70.1"]

[platform]
cpu_archs = ["aarch64"]
glibc_max = "2.35"
cuda_min = "12.6"
cuda_max = "13.0"

[build]
command = ["python3", "setup.py", "bdist_wheel"]

[build.env]
CUDA_HOME = "{cuda_home}"
)";

absl::StatusOr<Recipe> WithPrerequisites(const std::string& toml) {
  return ParseRecipe(absl::StrCat(kBase, toml), "/recipes/demo.toml");
}

// The line, 1-based, of `needle`'s first occurrence in `toml` once appended to kBase.
int LineOf(const std::string& toml, const std::string& needle) {
  const size_t at = toml.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  const std::string base(kBase);
  return 1 + static_cast<int>(std::count(base.begin(), base.end(), '\n') +
                              std::count(toml.begin(), toml.begin() + at, '\n'));
}

constexpr const char* kGood = R"(
[[prerequisites]]
name = "NCCL"
version = ">=2.27"
wheel = "nvidia-nccl-cu{cuda_major}>=2.27.5,<2.28"
linker_names = ["{site_packages}/nvidia/nccl/lib/libnccl.so.2"]
[prerequisites.env]
NCCL_INCLUDE_DIR = "{site_packages}/nvidia/nccl/include"
NCCL_LIB_DIR = "{site_packages}/nvidia/nccl/lib"
USE_SYSTEM_NCCL = "1"

[[prerequisites]]
name = "cuDNN"
version = "==9.*"
host_library = "libcudnn.so.9"
)";

TEST(PrerequisiteLoaderTest, ReadsWheelAndHostLibraryPrerequisites) {
  auto r = WithPrerequisites(kGood);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->prerequisites.size(), 2u);
  const Prerequisite& nccl = r->prerequisites[0];
  EXPECT_EQ(nccl.name, "NCCL");
  EXPECT_EQ(nccl.version, ">=2.27");
  EXPECT_TRUE(nccl.FromWheel());
  EXPECT_EQ(nccl.wheel, "nvidia-nccl-cu{cuda_major}>=2.27.5,<2.28");
  EXPECT_THAT(nccl.linker_names, ElementsAre("{site_packages}/nvidia/nccl/lib/libnccl.so.2"));
  EXPECT_THAT(nccl.env,
              UnorderedElementsAre(Pair("NCCL_INCLUDE_DIR", "{site_packages}/nvidia/nccl/include"),
                                   Pair("NCCL_LIB_DIR", "{site_packages}/nvidia/nccl/lib"),
                                   Pair("USE_SYSTEM_NCCL", "1")));
  EXPECT_EQ(nccl.line, LineOf(kGood, "[[prerequisites]]"));
  const Prerequisite& cudnn = r->prerequisites[1];
  EXPECT_FALSE(cudnn.FromWheel());
  EXPECT_EQ(cudnn.host_library, "libcudnn.so.9");
  EXPECT_EQ(cudnn.SourceText(), "host_library = \"libcudnn.so.9\"");
  EXPECT_EQ(DescribePrerequisite(nccl, r->file),
            absl::StrCat("[[prerequisites]] \"NCCL\" wheel = \"nvidia-nccl-cu{cuda_major}>=2.27.5,"
                         "<2.28\" (/recipes/demo.toml:",
                         nccl.line, ")"));
  EXPECT_EQ(*PrerequisiteWheelFor(nccl, ToolkitVersion{13, 0}), "nvidia-nccl-cu13>=2.27.5,<2.28");
  EXPECT_EQ(*PrerequisiteWheelFor(nccl, ToolkitVersion{12, 8}), "nvidia-nccl-cu12>=2.27.5,<2.28");

  // A build host gets them whole through the proto a wheel build carries.
  const Recipe back = BuildRecipeFromProto(RecipeToProto(*r));
  ASSERT_EQ(back.prerequisites.size(), 2u);
  EXPECT_EQ(back.prerequisites[0].wheel, nccl.wheel);
  EXPECT_EQ(back.prerequisites[0].linker_names, nccl.linker_names);
  EXPECT_EQ(back.prerequisites[0].env, nccl.env);
  EXPECT_EQ(back.prerequisites[0].line, nccl.line);
  EXPECT_EQ(back.prerequisites[1].host_library, "libcudnn.so.9");
  EXPECT_EQ(back.python_requirements, r->python_requirements);
  EXPECT_EQ(back.file, "/recipes/demo.toml");
}

TEST(PrerequisiteLoaderTest, NoPrerequisitesIsFine) {
  auto r = WithPrerequisites("");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->prerequisites.empty());
}

void ExpectRefused(const std::string& toml, const std::string& needle,
                   const std::vector<std::string>& parts) {
  auto r = WithPrerequisites(toml);
  ASSERT_FALSE(r.ok()) << "accepted:\n" << toml;
  // file:line:column, then the key and the fix.
  EXPECT_THAT(r.status().message(),
              HasSubstr(absl::StrCat("/recipes/demo.toml:", LineOf(toml, needle), ":")))
      << toml;
  for (const std::string& part : parts) EXPECT_THAT(r.status().message(), HasSubstr(part));
}

TEST(PrerequisiteLoaderTest, BadPrerequisitesNameTheLineTheKeyAndTheFix) {
  ExpectRefused(
      "\n[[prerequisites]]\nname = \"NCCL\"\nwheel = \"nvidia-nccl-cu13\"\nsoname = "
      "\"libnccl.so.2\"\n",
      "soname", {"prerequisites.soname", "unknown key \"soname\"", "host_library"});
  ExpectRefused(
      "\n[[prerequisites]]\nname = \"NCCL\"\nwheel = \"nvidia-nccl-cu13\"\n"
      "host_library = \"libnccl.so.2\"\n",
      "host_library", {"prerequisites.NCCL", "both wheel and host_library", "exactly one"});
  ExpectRefused("\n[[prerequisites]]\nname = \"NCCL\"\nversion = \">=2.27\"\n", "[[",
                {"no source given", "wheel = \"nvidia-...\"", "host_library = \"libX.so.N\""});
  ExpectRefused("\n[[prerequisites]]\nwheel = \"nvidia-nccl-cu13\"\n", "[[",
                {"missing required key \"name\""});
  ExpectRefused(
      "\n[[prerequisites]]\nname = \"NCCL\"\nwheel = \"nvidia-nccl-cu13\"\n"
      "version = \"2.27\"\n",
      "version", {"prerequisites.NCCL.version", "write clauses like \">=2.27\""});
  ExpectRefused("\n[[prerequisites]]\nname = \"NCCL\"\nwheel = \"./nccl.whl\"\n", "wheel",
                {"prerequisites.NCCL.wheel", "does not name a project"});
  ExpectRefused("\n[[prerequisites]]\nname = \"NCCL\"\nwheel = \"--index-url=http://x/\"\n",
                "wheel", {"does not name a project"});
  ExpectRefused("\n[[prerequisites]]\nname = \"NCCL\"\nwheel = \"nvidia-nccl-cu{cuda}\"\n", "wheel",
                {"prerequisites.NCCL.wheel", "{cuda}", "{cuda_major}"});
  ExpectRefused("\n[[prerequisites]]\nname = \"cuDNN\"\nhost_library = \"cudnn\"\n", "host_library",
                {"is not a soname", "libcudnn.so.9", "ldconfig -p"});
  ExpectRefused(
      "\n[[prerequisites]]\nname = \"cuDNN\"\nhost_library = \"libcudnn.so.9\"\n"
      "linker_names = [\"/usr/lib/libcudnn.so.9\"]\n",
      "linker_names", {"only a wheel prerequisite gets linker names"});
  ExpectRefused(
      "\n[[prerequisites]]\nname = \"NCCL\"\nwheel = \"nvidia-nccl-cu13\"\n"
      "linker_names = [\"/usr/lib/libnccl.so.2\"]\n",
      "linker_names", {"starting with {site_packages}/"});
  ExpectRefused(
      "\n[[prerequisites]]\nname = \"NCCL\"\nwheel = \"nvidia-nccl-cu13\"\n"
      "linker_names = [\"{site_packages}/../libnccl.so.2\"]\n",
      "linker_names", {"without .."});
  ExpectRefused(
      "\n[[prerequisites]]\nname = \"NCCL\"\nwheel = \"nvidia-nccl-cu13\"\n"
      "linker_names = [\"{site_packages}/nvidia/nccl/lib/libnccl.so\"]\n",
      "linker_names", {"versioned library such as libnccl.so.2"});
  ExpectRefused(
      "\n[[prerequisites]]\nname = \"NCCL\"\nwheel = \"nvidia-nccl-cu13\"\n"
      "[prerequisites.env]\nNCCL_ROOT = \"{sitepackages}/nvidia/nccl\"\n",
      "NCCL_ROOT", {"prerequisites.NCCL.env.NCCL_ROOT", "{sitepackages}", "{site_packages}"});
  ExpectRefused(
      "\n[[prerequisites]]\nname = \"NCCL\"\nwheel = \"nvidia-nccl-cu13\"\n"
      "[prerequisites.env]\nNCCL_ROOT = \"$HOME/nccl\"\n",
      "NCCL_ROOT", {"take no $VAR", "[build.env]"});
  ExpectRefused(
      "\n[[prerequisites]]\nname = \"NCCL\"\nwheel = \"nvidia-nccl-cu13\"\n"
      "[prerequisites.env]\nUSE_SYSTEM_NCCL = 1\n",
      "USE_SYSTEM_NCCL", {"must be a string", "USE_SYSTEM_NCCL = \"1\""});
  ExpectRefused(
      "\n[[prerequisites]]\nname = \"cuDNN\"\nhost_library = \"libcudnn.so.9\"\n"
      "[prerequisites.env]\nCUDNN_LIB_DIR = \"{site_packages}/nvidia/cudnn/lib\"\n",
      "CUDNN_LIB_DIR", {"{site_packages} is only for wheel prerequisites"});
  ExpectRefused(
      "\n[[prerequisites]]\nname = \"NCCL\"\nwheel = \"nvidia-nccl-cu13\"\n"
      "[prerequisites.env]\nPATH = \"{site_packages}/bin\"\n",
      "PATH", {"prerequisites.NCCL.env.PATH", "the build host sets PATH"});
  // A variable set in two places: the second would silently win.
  ExpectRefused(
      "\n[[prerequisites]]\nname = \"CUDA\"\nwheel = \"nvidia-cuda-runtime\"\n"
      "[prerequisites.env]\nCUDA_HOME = \"{site_packages}/nvidia/cuda\"\n",
      "CUDA_HOME = \"{site", {"CUDA_HOME is also set by [build.env]"});
  ExpectRefused(
      "\n[[prerequisites]]\nname = \"A\"\nwheel = \"a\"\n[prerequisites.env]\nX = \"1\"\n"
      "\n[[prerequisites]]\nname = \"B\"\nwheel = \"b\"\n[prerequisites.env]\nX = \"2\"\n",
      "X = \"2\"", {"prerequisites.B.env.X", "also set by prerequisite \"A\""});
  ExpectRefused(
      "\n[[prerequisites]]\nname = \"NCCL\"\nwheel = \"a\"\n"
      "\n[[prerequisites]]\nname = \"nccl\"\nwheel = \"b\"\n",
      "name = \"nccl\"", {"\"nccl\" is declared twice"});
  ExpectRefused("\n[prerequisites]\nname = \"NCCL\"\n", "[prerequisites]",
                {"must be [[prerequisites]] tables"});
}

TEST(PrerequisiteTest, LinkerNames) {
  EXPECT_EQ(*LinkerNameFor("/sp/nvidia/nccl/lib/libnccl.so.2"), "/sp/nvidia/nccl/lib/libnccl.so");
  EXPECT_EQ(*LinkerNameFor("{site_packages}/x/libcudnn.so.9.13.0"),
            "{site_packages}/x/libcudnn.so");
  EXPECT_FALSE(LinkerNameFor("/x/libnccl.so").ok());
  EXPECT_FALSE(LinkerNameFor("/x/nccl.h").ok());
}

TEST(PrerequisiteTest, RequirementProjectNames) {
  EXPECT_EQ(*RequirementProjectName("nvidia-nccl-cu13>=2.27"), "nvidia-nccl-cu13");
  EXPECT_EQ(*RequirementProjectName("Foo.Bar_baz[extra] ; python_version>'3'"), "Foo.Bar_baz");
  EXPECT_EQ(*RequirementProjectName("pkg @ https://example.com/pkg.whl"), "pkg");
  EXPECT_EQ(*RequirementProjectName("numpy"), "numpy");
  for (const char* bad : {"", "-e .", "./x.whl", "/abs/pkg", "x.whl", "pkg-", "dir/pkg"}) {
    EXPECT_FALSE(RequirementProjectName(bad).ok()) << bad;
  }
}

TEST(PrerequisiteTest, KnownWheelsForHostLibraries) {
  EXPECT_EQ(WheelProviding("libcudnn.so.9", {13, 0}), "nvidia-cudnn-cu13");
  EXPECT_EQ(WheelProviding("libcudnn_graph.so.9", {12, 8}), "nvidia-cudnn-cu12");
  EXPECT_EQ(WheelProviding("libnccl.so.2", {13, 0}), "nvidia-nccl-cu13");
  EXPECT_EQ(WheelProviding("libcusparseLt.so.0", {13, 0}), "nvidia-cusparselt-cu13");
  EXPECT_EQ(WheelProviding("libncclx.so.1", {13, 0}), "");
  EXPECT_EQ(WheelProviding("libfoo.so.1", {13, 0}), "");
}

TEST(PrerequisiteTest, PlaceholderValues) {
  EXPECT_THAT(PrerequisitePlaceholderValues(
                  {"/env/lib/python3.11/site-packages", {13, 0}, "/usr/local/cuda-13.0"}),
              UnorderedElementsAre(Pair("site_packages", "/env/lib/python3.11/site-packages"),
                                   Pair("cuda_home", "/usr/local/cuda-13.0"), Pair("cuda", "13.0"),
                                   Pair("cuda_major", "13")));
}

}  // namespace
}  // namespace farm
