#include "libfarm/recipes/build_render.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "libfarm/recipes/build_jobs.h"
#include "libfarm/recipes/recipe_loader.h"

namespace farm {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

TEST(BuildJobsTest, RamCapsBeforeCores) {
  EXPECT_EQ(BuildJobs(32, 128 * kGiB, 5), 25u);  // the seed's m8g.8xlarge
  EXPECT_EQ(BuildJobs(32, 128 * kGiB, 4), 32u);
  EXPECT_EQ(BuildJobs(2, 64 * kGiB, 4), 2u);
  EXPECT_EQ(BuildJobs(16, 3 * kGiB, 4), 1u);  // never zero
  EXPECT_EQ(BuildJobs(0, 0, 0), 1u);
}

TEST(BuildJobsTest, FarmJobsKeepTheFarmBusyWithinTheHostsRam) {
  // 32 cores, 128 GiB, 960 slots, 3 archs: the host's RAM binds (64 jobs of 2 GiB).
  EXPECT_EQ(FarmBuildJobs(32, 128 * kGiB, 25, 960, 3), 64u);
  // A small farm binds: 32 cores + 48 slots / 3 archs.
  EXPECT_EQ(FarmBuildJobs(32, 128 * kGiB, 25, 48, 3), 48u);
  // Never fewer than the local rule, even with no farm at all.
  EXPECT_EQ(FarmBuildJobs(32, 128 * kGiB, 25, 0, 3), 32u);
  EXPECT_EQ(FarmBuildJobs(4, 4 * kGiB, 1, 0, 1), 2u);
  EXPECT_EQ(FarmBuildJobs(2, 1 * kGiB, 1, 100, 0), 1u);
}

TEST(BuildRenderTest, CmakeArchsAreCmakesOwnFormWithPtxOnlyWhereAsked) {
  auto archs = ParseArchList("12.1;7.5;9.0a;8.0+PTX");
  ASSERT_TRUE(archs.ok());
  EXPECT_EQ(CmakeArchs(*archs), "75-real;80-real;80-virtual;90a-real;121-real");
  EXPECT_EQ(archs->ToString(), "7.5;8.0+PTX;9.0a;12.1");
}

// Every entry says what it carries, so no list reads two ways: a bare "80" is SASS and PTX to
// CMake but SASS alone in TORCH_CUDA_ARCH_LIST's form, and a lone "8.0+PTX" rendered bare was
// built SASS-only by a project that tells the forms apart by a "-real" or "-virtual" (the
// demo's CMakeLists), then failed verification for its missing compute_80 PTX.
TEST(BuildRenderTest, CmakeArchsOfOneArchSayWhetherPtxComesWithIt) {
  for (const auto& [request, rendered] : std::vector<std::pair<std::string, std::string>>{
           {"8.0", "80-real"},
           {"8.0+PTX", "80-real;80-virtual"},
           {"9.0a", "90a-real"},
           {"12.1+PTX", "121-real;121-virtual"},
           {"10.0f", "100f-real"},
           {"7.5;8.0", "75-real;80-real"},
           {"7.5+PTX;12.0+PTX", "75-real;75-virtual;120-real;120-virtual"}}) {
    SCOPED_TRACE(request);
    auto archs = ParseArchList(request);
    ASSERT_TRUE(archs.ok()) << archs.status();
    const std::string cmake = CmakeArchs(*archs);
    EXPECT_EQ(cmake, rendered);
    for (absl::string_view entry : absl::StrSplit(cmake, ';')) {
      EXPECT_TRUE(absl::EndsWith(entry, "-real") || absl::EndsWith(entry, "-virtual")) << entry;
    }
  }
}

TEST(BuildRenderTest, FillsPlaceholdersAndHostVariables) {
  auto recipe = ParseRecipe(R"(
name = "r"
package = "r"
versions = ["1.0"]
[source]
kind = "upload"
[python]
version = "3.10"
[platform]
cpu_archs = ["aarch64"]
glibc_max = "2.35"
cuda_min = "12.6"
cuda_max = "13.0"
[build]
prepare = ["echo {version} > v.txt"]
command = ["python{python}", "setup.py", "bdist_wheel", "--arch={{{cuda}}}"]
[build.env]
TORCH_CUDA_ARCH_LIST = "{archs}"
CMAKE_CUDA_ARCHITECTURES = "{cmake_archs}"
MAX_JOBS = "{jobs}"
PATH = "{cuda_home}/bin:$PATH"
)",
                            "/tmp/r.toml");
  ASSERT_TRUE(recipe.ok()) << recipe.status();
  BuildValues values;
  values.archs = *ParseArchList("7.5;9.0;12.1");
  values.cuda = {13, 0};
  values.cuda_home = "/usr/local/cuda-13.0";
  values.jobs = 25;
  values.version = "1.0";
  auto rendered = RenderBuild(*recipe, values, [](const std::string& name) {
    return name == "PATH" ? std::optional<std::string>("/usr/bin") : std::nullopt;
  });
  ASSERT_TRUE(rendered.ok()) << rendered.status();
  EXPECT_EQ(rendered->command,
            (std::vector<std::string>{"python3.10", "setup.py", "bdist_wheel", "--arch={13.0}"}));
  EXPECT_EQ(rendered->prepare,
            (std::vector<std::vector<std::string>>{{"/bin/sh", "-c", "echo 1.0 > v.txt"}}));
  EXPECT_EQ(rendered->env, (std::vector<std::string>{
                               "CMAKE_CUDA_ARCHITECTURES=75-real;90-real;121-real",
                               "MAX_JOBS=25",
                               "PATH=/usr/local/cuda-13.0/bin:/usr/bin",
                               "TORCH_CUDA_ARCH_LIST=7.5;9.0;12.1",
                           }));
}

}  // namespace
}  // namespace farm
