#include "coordinator/wheels/build_planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libfarm/recipes/python_environment.h"

namespace farm::coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

farm::v1::Worker Worker(const std::string& name, const std::string& cpu, const std::string& cuda,
                        std::vector<std::string> sms,
                        std::vector<std::string> pythons = {"3.10", "3.11"},
                        const std::string& glibc = "2.35") {
  farm::v1::Worker w;
  w.set_name(name);
  auto* caps = w.mutable_capabilities();
  caps->set_os("linux");
  caps->set_cpu_arch(cpu);
  caps->set_glibc(glibc);
  auto* tk = caps->add_cuda();
  tk->set_version(cuda);
  for (auto& sm : sms) tk->add_sms(sm);
  for (auto& v : pythons) {
    auto* p = caps->add_python();
    p->set_version(v);
    p->set_path("/usr/bin/python" + v);
  }
  return w;
}

const std::vector<std::string> kAllSms = {"sm_75", "sm_80", "sm_90", "sm_100", "sm_120", "sm_121"};

RecipeDirectory Recipes() {
  Recipe r;
  r.name = "torchlike";
  r.package = "torch";
  r.file = "recipes/torchlike.toml";
  r.versions.push_back({"2.9.1", RecipeSource{.kind = RecipeSource::Kind::kGit,
                                              .git_url = "https://example.invalid/t.git",
                                              .tag_pattern = "v{version}"}});
  r.platform.cpu_archs = {"aarch64"};
  r.platform.glibc_max = DottedVersion{{2, 35}};
  r.platform.cuda = CudaRange{{12, 6}, {13, 0}};
  r.size.base_mib = 100;
  r.size.per_arch_mib = 50;
  r.python = "3.10";
  r.python_requirements = {"cmake>=3.27", "numpy<2.0"};
  RecipeDirectory dir;
  dir.recipes.push_back(r);
  return dir;
}

TEST(BuildPlannerTest, PlansToolkitHostsShardsAndSize) {
  const RecipeDirectory recipes = Recipes();
  auto planned = PlanWheelBuild(
      "torchlike-2.9.1", "7.5;9.0;12.1", recipes,
      {Worker("grace-1", "aarch64", "13.0", kAllSms), Worker("x86", "x86_64", "13.0", kAllSms),
       Worker("old", "aarch64", "12.6", {"sm_75", "sm_90"})});
  ASSERT_TRUE(planned.ok()) << planned.status();
  const farm::v1::BuildPlan& p = planned->plan;
  EXPECT_EQ(p.cuda_version(), "13.0");
  EXPECT_EQ(p.cpu_arch(), "aarch64");
  EXPECT_THAT(p.build_hosts(), ElementsAre("grace-1"));
  ASSERT_EQ(p.shards_size(), 3);
  EXPECT_EQ(p.shards(2).name(), "sm_121");
  // Device compiles run anywhere with the toolkit: the x86 worker helps the ARM build.
  EXPECT_THAT(p.shards(2).workers(), ElementsAre("grace-1", "x86"));
  EXPECT_DOUBLE_EQ(p.estimated_wheel_mib(), 250);
  EXPECT_EQ(p.source(), "git https://example.invalid/t.git at v2.9.1");
  EXPECT_EQ(planned->host_requirements.max_glibc(), "2.35");
  // The host must have the recipe's interpreter, also when the build is leased.
  EXPECT_EQ(planned->host_requirements.python_version(), "3.10");
  EXPECT_EQ(p.python_version(), "3.10");
  EXPECT_THAT(p.python_requirements(), ElementsAre("cmake>=3.27", "numpy<2.0"));
  EXPECT_EQ(p.requirements_hash(), PythonRequirementsHash({"cmake>=3.27", "numpy<2.0"}));
}

// A farm that keeps device compiles on its ARM workers (--device-cpu-archs aarch64): the
// plan's shards list only those, and a shard none of them can compile is refused saying so.
TEST(BuildPlannerTest, TheFarmsPlacementRuleNarrowsTheShards) {
  const RecipeDirectory recipes = Recipes();
  const std::vector<farm::v1::Worker> fleet = {Worker("grace-1", "aarch64", "13.0", kAllSms),
                                               Worker("x86", "x86_64", "13.0", kAllSms)};
  const PlanOptions arm_only{.placement = {.portable_cpu_archs = {"aarch64"}}};
  auto planned = PlanWheelBuild("torchlike-2.9.1", "9.0;12.1", recipes, fleet, arm_only);
  ASSERT_TRUE(planned.ok()) << planned.status();
  ASSERT_EQ(planned->plan.shards_size(), 2);
  EXPECT_THAT(planned->plan.shards(1).workers(), ElementsAre("grace-1"));
  const PlanOptions x86_only{.placement = {.portable_cpu_archs = {"x86_64"}}};
  auto refused = PlanWheelBuild("torchlike-2.9.1", "9.0", recipes,
                                {Worker("grace-1", "aarch64", "13.0", kAllSms)}, x86_only);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("grace-1: the farm runs actions that name no CPU arch only on x86_64 "
                        "workers (--device-cpu-archs), has aarch64"));
}

TEST(BuildPlannerTest, OnlyHostsWithTheRecipesPythonBuildIt) {
  const RecipeDirectory recipes = Recipes();
  auto planned = PlanWheelBuild("torchlike-2.9.1", "9.0", recipes,
                                {Worker("g1", "aarch64", "13.0", kAllSms, {"3.11"}),
                                 Worker("g2", "aarch64", "13.0", kAllSms, {"3.9", "3.10"})});
  ASSERT_TRUE(planned.ok()) << planned.status();
  EXPECT_THAT(planned->plan.build_hosts(), ElementsAre("g2"));
  // Shards compile device code only: any worker with the toolkit helps.
  EXPECT_THAT(planned->plan.shards(0).workers(), ElementsAre("g1", "g2"));
}

TEST(BuildPlannerTest, AMissingInterpreterIsRefusedNamingEachHostAndTheFix) {
  const RecipeDirectory recipes = Recipes();
  auto planned = PlanWheelBuild(
      "torchlike-2.9.1", "9.0", recipes,
      {Worker("w1", "aarch64", "13.0", kAllSms, {"3.11"}),
       Worker("w2", "aarch64", "13.0", kAllSms, {"3.11", "3.12"}),
       Worker("bare", "aarch64", "13.0", kAllSms, {}), Worker("x86", "x86_64", "13.0", kAllSms)});
  ASSERT_FALSE(planned.ok());
  EXPECT_EQ(planned.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(planned.status().message(),
            "no build host has python3.10 (w1: 3.11; w2: 3.11, 3.12; bare: no Python). Fix: "
            "install python3.10 on a build host (a worker finds it in /usr/local/bin, /usr/bin, "
            "on PATH or under ~/.pyenv/versions when it starts, so restart the worker after "
            "installing)");
}

// The torchlike recipe with NCCL from a wheel and cuDNN from the build host.
RecipeDirectory RecipesWithPrerequisites() {
  RecipeDirectory dir = Recipes();
  Recipe& r = dir.recipes[0];
  r.prerequisites.push_back(Prerequisite{
      .name = "NCCL",
      .version = ">=2.27",
      .wheel = "nvidia-nccl-cu{cuda_major}>=2.27",
      .linker_names = {"{site_packages}/nvidia/nccl/lib/libnccl.so.2"},
      .env = {{"NCCL_LIB_DIR", "{site_packages}/nvidia/nccl/lib"}, {"USE_SYSTEM_NCCL", "1"}},
      .line = 40});
  r.prerequisites.push_back(Prerequisite{
      .name = "cuDNN", .version = "==9.*", .host_library = "libcudnn.so.9", .line = 50});
  return dir;
}

farm::v1::Worker WithLibraries(farm::v1::Worker w, std::vector<std::string> libraries) {
  for (auto& lib : libraries) w.mutable_capabilities()->add_libraries(lib);
  return w;
}

TEST(BuildPlannerTest, PrerequisitesPickTheHostsAndShowWhereEachComesFrom) {
  const RecipeDirectory recipes = RecipesWithPrerequisites();
  auto planned = PlanWheelBuild(
      "torchlike-2.9.1", "7.5;9.0;12.1", recipes,
      {WithLibraries(Worker("g1", "aarch64", "13.0", kAllSms), {"libc.so.6"}),
       WithLibraries(Worker("g2", "aarch64", "13.0", kAllSms), {"libc.so.6", "libcudnn.so.9"})});
  ASSERT_TRUE(planned.ok()) << planned.status();
  const farm::v1::BuildPlan& p = planned->plan;
  EXPECT_THAT(p.build_hosts(), ElementsAre("g2"));
  // The build action requires the library too, so a lease never lands on a host without it.
  EXPECT_THAT(planned->host_requirements.libraries(), ElementsAre("libcudnn.so.9"));
  // Device compiles need no cuDNN: every worker with the toolkit helps.
  EXPECT_THAT(p.shards(0).workers(), ElementsAre("g1", "g2"));
  ASSERT_EQ(p.prerequisites_size(), 2);
  EXPECT_EQ(p.prerequisites(0).name(), "NCCL");
  EXPECT_EQ(p.prerequisites(0).version(), ">=2.27");
  EXPECT_EQ(p.prerequisites(0).wheel(), "nvidia-nccl-cu13>=2.27");  // CUDA 13.0 was chosen
  EXPECT_THAT(p.prerequisites(0).variables(), ElementsAre("NCCL_LIB_DIR", "USE_SYSTEM_NCCL"));
  EXPECT_EQ(p.prerequisites(1).host_library(), "libcudnn.so.9");
  EXPECT_THAT(p.prerequisites(1).hosts(), ElementsAre("g2"));
  // The environment's hash covers the prerequisite wheels and their linker names.
  auto contents = EnvironmentContentsFor(recipes.recipes[0], {13, 0});
  ASSERT_TRUE(contents.ok());
  EXPECT_EQ(p.requirements_hash(), EnvironmentContentsHash(*contents));
  EXPECT_NE(p.requirements_hash(), PythonRequirementsHash({"cmake>=3.27", "numpy<2.0"}));
}

TEST(BuildPlannerTest, AMissingHostLibraryIsRefusedNamingItTheHostsAndTheFix) {
  const RecipeDirectory recipes = RecipesWithPrerequisites();
  auto planned = PlanWheelBuild(
      "torchlike-2.9.1", "9.0", recipes,
      {WithLibraries(Worker("w1", "aarch64", "13.0", kAllSms), {"libc.so.6", "libcudnn.so.8"}),
       Worker("w2", "aarch64", "13.0", kAllSms, {"3.11"}),
       WithLibraries(Worker("x86", "x86_64", "13.0", kAllSms), {"libcudnn.so.9"})});
  ASSERT_FALSE(planned.ok());
  EXPECT_EQ(planned.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(planned.status().message(),
            "no build host has the prerequisite cuDNN, host_library = \"libcudnn.so.9\" "
            "(recipes/torchlike.toml:50): w1 lacks libcudnn.so.9; w2 has no python3.10 and lacks "
            "libcudnn.so.9. Fix: install cuDNN on a build host so its dynamic "
            "loader lists libcudnn.so.9 (`ldconfig -p`; restart the worker after installing), or "
            "take it from a wheel: wheel = \"nvidia-cudnn-cu13\" instead of host_library in its "
            "table");
}

TEST(BuildPlannerTest, HostLibrariesSpreadOverHostsAreNamedPerHost) {
  RecipeDirectory recipes = RecipesWithPrerequisites();
  recipes.recipes[0].prerequisites.push_back(
      Prerequisite{.name = "Foo", .host_library = "libfoo.so.1", .line = 60});
  auto planned =
      PlanWheelBuild("torchlike-2.9.1", "9.0", recipes,
                     {WithLibraries(Worker("w1", "aarch64", "13.0", kAllSms), {"libcudnn.so.9"}),
                      WithLibraries(Worker("w2", "aarch64", "13.0", kAllSms), {"libfoo.so.1"})});
  ASSERT_FALSE(planned.ok());
  EXPECT_THAT(planned.status().message(),
              HasSubstr("no build host has every host_library prerequisite (cuDNN, "
                        "host_library = \"libcudnn.so.9\" (recipes/torchlike.toml:50); Foo, "
                        "host_library = \"libfoo.so.1\" (recipes/torchlike.toml:60)): w1 lacks "
                        "libfoo.so.1; w2 lacks libcudnn.so.9. Fix: "));
  EXPECT_THAT(planned.status().message(), HasSubstr("wheel = \"<pip requirement>\""));
}

TEST(BuildPlannerTest, RefusesWhatCannotBeBuiltSayingWhy) {
  const RecipeDirectory recipes = Recipes();
  const std::vector<farm::v1::Worker> fleet = {Worker("grace-1", "aarch64", "13.0", kAllSms)};
  struct Case {
    std::string ref, archs;
    absl::StatusCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"nosuch-1.0", "9.0", absl::StatusCode::kNotFound, "the coordinator has: torchlike"},
      {"torchlike-3.0", "9.0", absl::StatusCode::kNotFound, "it builds 2.9.1"},
      {"torchlike-2.9.1", "", absl::StatusCode::kInvalidArgument, "pass --archs"},
      {"torchlike-2.9.1", "9.1", absl::StatusCode::kInvalidArgument, "9.1"},
      {"torchlike-2.9.1", "7.0", absl::StatusCode::kFailedPrecondition, "sm_70"},
  };
  for (const Case& c : cases) {
    auto planned = PlanWheelBuild(c.ref, c.archs, recipes, fleet);
    ASSERT_FALSE(planned.ok()) << c.ref << " " << c.archs;
    EXPECT_EQ(planned.status().code(), c.code) << planned.status();
    EXPECT_THAT(planned.status().message(), HasSubstr(c.message));
  }
}

TEST(BuildPlannerTest, NoHostMeetingThePolicyNamesEachWorkersMiss) {
  const RecipeDirectory recipes = Recipes();
  auto planned =
      PlanWheelBuild("torchlike-2.9.1", "9.0", recipes, {Worker("x86", "x86_64", "13.0", kAllSms)});
  ASSERT_FALSE(planned.ok());
  EXPECT_EQ(planned.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(planned.status().message(), HasSubstr("no online worker can host the build"));
  EXPECT_THAT(planned.status().message(), HasSubstr("x86: "));
  EXPECT_THAT(PlanWheelBuild("torchlike-2.9.1", "9.0", recipes, {}).status().message(),
              HasSubstr("no worker is online"));
}

TEST(BuildPlannerTest, ANewerGlibcHostIsRefusedNamingTheCeilingUntilTheSubmitRaisesIt) {
  const RecipeDirectory recipes = Recipes();
  // Debian 12's arm64 root: glibc 2.36, above the recipe's 2.35.
  const std::vector<farm::v1::Worker> fleet = {
      Worker("arm", "aarch64", "13.0", kAllSms, {"3.10"}, "2.36"),
      Worker("x86", "x86_64", "13.0", kAllSms, {"3.10"}, "2.36")};
  auto refused = PlanWheelBuild("torchlike-2.9.1", "7.5;9.0;12.1", recipes, fleet);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("glibc <= 2.35"));
  EXPECT_THAT(refused.status().message(), HasSubstr("arm: needs glibc <= 2.35, has 2.36"));
  EXPECT_THAT(refused.status().message(), HasSubstr("--glibc-max"));

  auto raised =
      PlanWheelBuild("torchlike-2.9.1", "7.5;9.0;12.1", recipes, fleet, {.glibc_max = "2.36"});
  ASSERT_TRUE(raised.ok()) << raised.status();
  EXPECT_EQ(raised->plan.glibc_max(), "2.36");
  EXPECT_EQ(raised->plan.recipe_glibc_max(), "2.35");
  EXPECT_EQ(raised->plan.cpu_arch(), "aarch64");
  EXPECT_THAT(raised->plan.build_hosts(), ElementsAre("arm"));
  // Device shards need the toolkit, not the build host's CPU.
  EXPECT_THAT(raised->plan.shards(2).workers(), ElementsAre("arm", "x86"));

  auto bad = PlanWheelBuild("torchlike-2.9.1", "9.0", recipes, fleet, {.glibc_max = "2.x"});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("--glibc-max \"2.x\" is not a glibc version"));
}

TEST(BuildPlannerTest, TheSubmitChoosesOneOfTheRecipesCpuArchs) {
  RecipeDirectory recipes = Recipes();
  recipes.recipes[0].platform.cpu_archs = {"x86_64", "aarch64"};
  const std::vector<farm::v1::Worker> fleet = {Worker("arm", "aarch64", "13.0", kAllSms),
                                               Worker("x86", "x86_64", "13.0", kAllSms)};
  auto first = PlanWheelBuild("torchlike-2.9.1", "9.0", recipes, fleet);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->plan.cpu_arch(), "x86_64");
  auto arm = PlanWheelBuild("torchlike-2.9.1", "9.0", recipes, fleet, {.cpu_arch = "aarch64"});
  ASSERT_TRUE(arm.ok()) << arm.status();
  EXPECT_EQ(arm->plan.cpu_arch(), "aarch64");
  EXPECT_THAT(arm->plan.build_hosts(), ElementsAre("arm"));
  EXPECT_EQ(arm->host_requirements.cpu_arch(), "aarch64");

  // The recipe says python3.10; a submit may build the wheel for another Python.
  auto py311 = PlanWheelBuild("torchlike-2.9.1", "9.0", recipes,
                              {Worker("arm", "aarch64", "13.0", kAllSms, {"3.11"})},
                              {.cpu_arch = "aarch64", .python = "3.11"});
  ASSERT_TRUE(py311.ok()) << py311.status();
  EXPECT_EQ(py311->plan.python_version(), "3.11");
  EXPECT_EQ(py311->python, "3.11");
  EXPECT_EQ(py311->host_requirements.python_version(), "3.11");
  EXPECT_THAT(PlanWheelBuild("torchlike-2.9.1", "9.0", recipes, fleet, {.python = "py3"})
                  .status()
                  .message(),
              HasSubstr("--python \"py3\" is not a Python version"));

  auto other = PlanWheelBuild("torchlike-2.9.1", "9.0", recipes, fleet, {.cpu_arch = "riscv64"});
  EXPECT_EQ(other.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(other.status().message(),
              HasSubstr("builds wheels for x86_64, aarch64, not riscv64. Fix: pass --cpu-arch "
                        "x86_64 or --cpu-arch aarch64"));
}

}  // namespace
}  // namespace farm::coordinator

namespace farm::coordinator {
namespace {

// A package that builds sm_80/90/100/120 only (flash-attn): the plan compiles those, one shard
// each, sized and toolkit-checked for them, and says how each requested arch runs.
TEST(BuildPlannerTest, ArchRulesPlanWhatThePackageBuildsAndSayHowEachArchRuns) {
  RecipeDirectory recipes = Recipes();
  Recipe& r = recipes.recipes[0];
  r.archs.buildable = {{80}, {90}, {100}, {120}};
  r.archs.min = CudaTarget{80};
  r.archs.min_reason = "Ampere or newer";
  r.archs.ptx = false;
  const std::vector<farm::v1::Worker> online = {Worker("grace-1", "aarch64", "13.0", kAllSms)};
  auto planned = PlanWheelBuild("torchlike-2.9.1", "8.6;12.1", recipes, online);
  ASSERT_TRUE(planned.ok()) << planned.status();
  const farm::v1::BuildPlan& p = planned->plan;
  EXPECT_EQ(p.archs(), "8.0;12.0");
  EXPECT_EQ(p.requested_archs(), "8.6;12.1");
  EXPECT_THAT(p.arch_routes(),
              ElementsAre("8.6: runs via sm_80 SASS", "12.1: runs via sm_120 SASS"));
  ASSERT_EQ(p.shards_size(), 2);
  EXPECT_EQ(p.shards(1).name(), "sm_120");
  EXPECT_DOUBLE_EQ(p.estimated_wheel_mib(), 200);
  auto refused = PlanWheelBuild("torchlike-2.9.1", "7.5;9.0", recipes, online);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("recipe 'torchlike' (torch) cannot serve 7.5: it needs sm_80 or newer"));
  // Without rules nothing changes: the plan is the request and names no routes.
  auto plain = PlanWheelBuild("torchlike-2.9.1", "9.0", Recipes(), online);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->plan.archs(), "9.0");
  EXPECT_TRUE(plain->plan.requested_archs().empty());
  EXPECT_TRUE(plain->plan.arch_routes().empty());
}

}  // namespace
}  // namespace farm::coordinator
