#include "coordinator/wheels/arch_set_conflict.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::HasSubstr;

farm::v1::BuildPlan Plan(const std::vector<std::string>& shards, const std::string& cuda = "13.0",
                         const std::string& cpu = "aarch64") {
  farm::v1::BuildPlan plan;
  plan.set_package("torch");
  plan.set_version("2.9.1");
  plan.set_cuda_version(cuda);
  plan.set_cpu_arch(cpu);
  for (const auto& s : shards) plan.add_shards()->set_name(s);
  plan.add_publish()->set_kind("builtin");
  return plan;
}

farm::v1::Build Built(const std::string& id, const std::vector<std::string>& archs,
                      farm::v1::BuildState state, const std::string& cuda = "13.0.88",
                      const std::string& cpu = "aarch64") {
  farm::v1::Build b;
  b.set_id(id);
  b.set_kind(farm::v1::BUILD_KIND_WHEEL);
  b.set_package("torch");
  b.set_version("2.9.1");
  b.set_state(state);
  for (const auto& a : archs) b.add_archs(a);
  *b.mutable_plan() = Plan(archs, cuda, cpu);
  return b;
}

TEST(ArchSetConflictTest, ASecondArchSetOfABuiltVersionIsRefusedNamingTheBuildAndTheFix) {
  const std::vector<farm::v1::Build> builds = {
      Built("b1", {"sm_75", "sm_90", "sm_121"}, farm::v1::BUILD_STATE_SUCCEEDED)};
  absl::Status s = CheckArchSetIsNew(Plan({"sm_80"}), builds);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("build b1 (sm_121, sm_75, sm_90"));
  EXPECT_THAT(s.message(), HasSubstr("to the same place (builtin)"));
  EXPECT_THAT(s.message(), HasSubstr("Fix: submit the same archs"));
  EXPECT_THAT(s.message(), HasSubstr("2.9.1.post1"));
  // One still in flight holds the name too.
  EXPECT_FALSE(
      CheckArchSetIsNew(Plan({"sm_80"}), {Built("b2", {"sm_90"}, farm::v1::BUILD_STATE_BUILDING)})
          .ok());
}

TEST(ArchSetConflictTest, TheSameArchSetAnotherNameOrAFailedBuildDoNotConflict) {
  const std::vector<std::string> archs = {"sm_75", "sm_90"};
  // The same set again (order aside): a rebuild, which publishing checks byte for byte.
  EXPECT_TRUE(CheckArchSetIsNew(Plan({"sm_90", "sm_75"}),
                                {Built("b1", archs, farm::v1::BUILD_STATE_SUCCEEDED)})
                  .ok());
  // Failed and cancelled builds published nothing.
  EXPECT_TRUE(
      CheckArchSetIsNew(Plan({"sm_80"}), {Built("f", archs, farm::v1::BUILD_STATE_FAILED),
                                          Built("c", archs, farm::v1::BUILD_STATE_CANCELLED)})
          .ok());
  // Another +cuXY label or another platform tag is another file name.
  EXPECT_TRUE(CheckArchSetIsNew(Plan({"sm_80"}, "13.1"),
                                {Built("b1", archs, farm::v1::BUILD_STATE_SUCCEEDED)})
                  .ok());
  EXPECT_TRUE(CheckArchSetIsNew(Plan({"sm_80"}, "13.0", "x86_64"),
                                {Built("b1", archs, farm::v1::BUILD_STATE_SUCCEEDED)})
                  .ok());
  // Wheels that land in different places do not meet.
  farm::v1::BuildPlan elsewhere = Plan({"sm_80"});
  elsewhere.clear_publish();
  auto* repo = elsewhere.add_publish();
  repo->set_kind("repository");
  repo->set_url("https://pypi.example/legacy/");
  EXPECT_TRUE(
      CheckArchSetIsNew(elsewhere, {Built("b1", archs, farm::v1::BUILD_STATE_SUCCEEDED)}).ok());
  EXPECT_FALSE(CheckArchSetIsNew(elsewhere, {[&] {
                                   farm::v1::Build b =
                                       Built("b2", archs, farm::v1::BUILD_STATE_SUCCEEDED);
                                   *b.mutable_plan()->add_publish() = *repo;
                                   return b;
                                 }()})
                   .ok());
}

}  // namespace
}  // namespace farm
