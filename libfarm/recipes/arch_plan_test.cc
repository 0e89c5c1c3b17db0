#include "libfarm/recipes/arch_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "libfarm/recipes/recipe_loader.h"

namespace farm {
namespace {

using ::testing::HasSubstr;

// A recipe with the given [archs] table (and nothing else unusual).
Recipe WithArchs(const std::string& name, const std::string& archs) {
  auto r = ParseRecipe(absl::StrCat(R"(name = ")", name, R"("
package = ")",
                                    name, R"("
versions = ["1.0"]
[source]
kind = "git"
url = "https://example.com/x.git"
tag = "v{version}"
[python]
version = "3.10"
[platform]
cpu_archs = ["aarch64"]
glibc_max = "2.35"
cuda_min = "12.8"
cuda_max = "13.0"
[build]
command = "true"
)",
                                    archs),
                       name + ".toml");
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

const char* kFlashAttn = R"([archs]
buildable = ["8.0", "9.0", "10.0", "12.0"]
min = "8.0"
min_reason = "its kernels need Ampere or newer"
ptx = false
)";

std::vector<std::string> Routes(const ArchPlan& plan) {
  std::vector<std::string> out;
  for (const ArchRoute& r : plan.routes) out.push_back(r.Describe());
  return out;
}

TEST(ArchPlanTest, WithoutRulesThePlanIsTheRequest) {
  const Recipe r = WithArchs("plain", "");
  auto plan = PlanArchs(r, *ParseArchList("7.5;9.0a;12.1+PTX"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->planned.ToString(), "7.5;9.0a;12.1+PTX");
}

TEST(ArchPlanTest, EachGpuGetsTheBuildableSassThatRunsOnIt) {
  const Recipe r = WithArchs("fa", kFlashAttn);
  auto plan = PlanArchs(r, *ParseArchList("8.6;9.0;12.1"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->planned.ToString(), "8.0;9.0;12.0");
  EXPECT_EQ(Routes(*plan), (std::vector<std::string>{"8.6: runs via sm_80 SASS", "9.0: sm_90 SASS",
                                                     "12.1: runs via sm_120 SASS"}));
  // 8.0 and 8.6 need one build of sm_80.
  auto shared = PlanArchs(r, *ParseArchList("8.0;8.6"));
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ(shared->planned.ToString(), "8.0");
}

TEST(ArchPlanTest, BelowTheMinimumIsRefusedNamingPackageArchAndSupport) {
  auto plan = PlanArchs(WithArchs("fa", kFlashAttn), *ParseArchList("7.5;9.0"));
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(plan.status().message(), HasSubstr("recipe 'fa' (fa) cannot serve 7.5: it needs "
                                                 "sm_80 or newer (its kernels need Ampere"));
  EXPECT_THAT(plan.status().message(),
              HasSubstr("it builds sm_80, sm_90, sm_100, sm_120, SASS only (no PTX)"));
  EXPECT_THAT(plan.status().message(), HasSubstr("Fix: drop 7.5 from --archs"));
}

TEST(ArchPlanTest, AGpuNoBuildableArchRunsOnIsRefused) {
  // sm_110 (Thor): no sm_11x cubin, and flash-attn emits no PTX.
  auto plan = PlanArchs(WithArchs("fa", kFlashAttn), *ParseArchList("11.0"));
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(),
              HasSubstr("cannot serve 11.0: none of its archs runs on sm_110"));
  auto ptx = PlanArchs(WithArchs("fa", kFlashAttn), *ParseArchList("9.0+PTX"));
  ASSERT_FALSE(ptx.ok());
  EXPECT_THAT(ptx.status().message(), HasSubstr("fa emits no PTX"));
}

TEST(ArchPlanTest, PtxServesANewerMajorWhenThePackageEmitsIt) {
  auto plan = PlanArchs(WithArchs("p", "[archs]\nbuildable = [\"8.0\", \"9.0\"]\n"),
                        *ParseArchList("12.1"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->planned.ToString(), "9.0+PTX");
  EXPECT_EQ(Routes(*plan),
            (std::vector<std::string>{"12.1: runs via sm_90 SASS + compute_90 PTX"}));
}

TEST(ArchPlanTest, ASplitRuleRefusesMixedListsWithTheReasonAndTheFix) {
  const Recipe r = WithArchs("ds", R"([archs]
split_below = "8.0"
split_reason = "one arch below 8.0 turns BF16 off for every arch"
)");
  auto mixed = PlanArchs(r, *ParseArchList("7.5;9.0"));
  ASSERT_EQ(mixed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(mixed.status().message(),
              HasSubstr("cannot build 7.5 together with 9.0: one arch below 8.0 turns BF16 off"));
  EXPECT_THAT(mixed.status().message(), HasSubstr("Fix: submit them apart, --archs \"7.5\""));
  EXPECT_TRUE(PlanArchs(r, *ParseArchList("7.5")).ok());
  EXPECT_TRUE(PlanArchs(r, *ParseArchList("9.0;12.1")).ok());
}

TEST(ArchPlanTest, TheArchsTableIsLoadedStrictly) {
  struct Case {
    std::string table;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"[archs]\nbuildabel = [\"8.0\"]\n", "archs.buildabel: unknown key \"buildabel\""},
           {"[archs]\nmin = \"8.0\"\n", "give archs.min_reason too"},
           {"[archs]\nmin_reason = \"x\"\n", "a reason without archs.min"},
           {"[archs]\nbuildable = [\"8.0+PTX\"]\n", "whether PTX is emitted is archs.ptx"},
           {"[archs]\nbuildable = [\"8.7x\"]\n", "unknown CUDA arch \"8.7x\""},
           {"[archs]\nbuildable = []\n", "give the archs the package can compile"},
           {"[archs]\nptx = \"no\"\n", "archs.ptx: must be true or false"},
           {"[archs]\nsplit_below = \"8.0\"\n", "give archs.split_reason too"},
           {"[archs]\nbuildable = [\"8.0\"]\nmin = \"9.0\"\nmin_reason = \"x\"\n",
            "no buildable arch is at or above it"},
       }) {
    auto r = ParseRecipe(absl::StrCat(R"(name = "x"
package = "x"
versions = ["1.0"]
[source]
kind = "git"
url = "https://example.com/x.git"
tag = "v{version}"
[python]
version = "3.10"
[platform]
cpu_archs = ["aarch64"]
glibc_max = "2.35"
cuda_min = "12.8"
cuda_max = "13.0"
[build]
command = "true"
)",
                                      c.table),
                         "x.toml");
    ASSERT_FALSE(r.ok()) << c.table;
    EXPECT_THAT(r.status().message(), HasSubstr(c.message)) << c.table;
    EXPECT_THAT(r.status().message(), HasSubstr("x.toml:")) << r.status();
  }
}

}  // namespace
}  // namespace farm
