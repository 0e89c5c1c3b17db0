#include "coordinator/wheels/wheel_name_conflict.h"

#include "coordinator/wheels/source_tree.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::HasSubstr;

farm::v1::BuildPlan Plan(const std::string& archs, const std::string& source = "git repo at v1",
                         const std::string& cuda = "13.0", const std::string& cpu = "aarch64") {
  farm::v1::BuildPlan plan;
  plan.set_package("torch");
  plan.set_version("2.9.1");
  plan.set_archs(archs);
  plan.set_cuda_version(cuda);
  plan.set_cpu_arch(cpu);
  plan.set_python_version("3.11");
  plan.set_source(source);
  plan.set_requirements_hash("env1");
  plan.add_publish()->set_kind("builtin");
  return plan;
}

farm::v1::Build Built(const std::string& id, const farm::v1::BuildPlan& plan,
                      farm::v1::BuildState state = farm::v1::BUILD_STATE_SUCCEEDED) {
  farm::v1::Build b;
  b.set_id(id);
  b.set_kind(farm::v1::BUILD_KIND_WHEEL);
  b.set_package(plan.package());
  b.set_version(plan.version());
  b.set_state(state);
  *b.mutable_plan() = plan;
  return b;
}

TEST(WheelNameConflictTest, AnotherArchSetOfAPublishedVersionLandsBesideIt) {
  // "T4G only" and "T4G + A10G/A100 + H100" of one torch: +cu130.sm75 and
  // +cu130.sm75.sm80.sm86.sm90, two names, even from another source.
  const std::vector<farm::v1::Build> builds = {Built("b1", Plan("7.5"))};
  EXPECT_TRUE(CheckWheelNameIsFree(Plan("7.5;8.0;8.6;9.0"), builds).ok());
  EXPECT_TRUE(CheckWheelNameIsFree(Plan("7.5;8.0;8.6;9.0", "git repo at v2"), builds).ok());
  // PTX is part of the set: 7.5+PTX is +cu130.sm75.compute75.
  EXPECT_TRUE(CheckWheelNameIsFree(Plan("7.5+PTX", "git repo at v2"), builds).ok());
  // Still in flight, the same.
  EXPECT_TRUE(
      CheckWheelNameIsFree(Plan("9.0"), {Built("b2", Plan("7.5"), farm::v1::BUILD_STATE_BUILDING)})
          .ok());
}

TEST(WheelNameConflictTest, TheSameNameFromAnotherSourceIsRefusedNamingTheBuildAndTheFix) {
  const std::vector<farm::v1::Build> builds = {Built("b1", Plan("9.0;7.5"))};
  // The same set however typed: the same label, the same file name.
  absl::Status s = CheckWheelNameIsFree(Plan("sm_75 sm_90", "git repo at v2"), builds);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(),
              HasSubstr("torch 2.9.1+cu130.sm75.sm90 for aarch64 is already build b1"));
  EXPECT_THAT(s.message(), HasSubstr("source \"git repo at v2\", not \"git repo at v1\""));
  EXPECT_THAT(s.message(), HasSubstr("to the same place (builtin)"));
  EXPECT_THAT(s.message(), HasSubstr("Fix: give this build a version of its own"));
  EXPECT_THAT(s.message(), HasSubstr("2.9.1.post1"));
  // Another build environment makes other bytes too.
  farm::v1::BuildPlan env = Plan("7.5;9.0");
  env.set_requirements_hash("env2");
  EXPECT_THAT(CheckWheelNameIsFree(env, builds).message(), HasSubstr("build environment env2"));
}

TEST(WheelNameConflictTest, ARebuildAnotherNameOrAnotherPlaceDoNotConflict) {
  const std::vector<farm::v1::Build> builds = {Built("b1", Plan("7.5;9.0"))};
  // The same build again: publishing compares its bytes.
  EXPECT_TRUE(CheckWheelNameIsFree(Plan("9.0;7.5"), builds).ok());
  // Failed and cancelled builds published nothing.
  EXPECT_TRUE(CheckWheelNameIsFree(Plan("7.5;9.0", "git repo at v2"),
                                   {Built("f", Plan("7.5;9.0"), farm::v1::BUILD_STATE_FAILED),
                                    Built("c", Plan("7.5;9.0"), farm::v1::BUILD_STATE_CANCELLED)})
                  .ok());
  // Another toolkit, CPU or Python is another file name.
  EXPECT_TRUE(CheckWheelNameIsFree(Plan("7.5;9.0", "git repo at v2", "13.1"), builds).ok());
  EXPECT_TRUE(
      CheckWheelNameIsFree(Plan("7.5;9.0", "git repo at v2", "13.0", "x86_64"), builds).ok());
  farm::v1::BuildPlan py312 = Plan("7.5;9.0", "git repo at v2");
  py312.set_python_version("3.12");
  EXPECT_TRUE(CheckWheelNameIsFree(py312, builds).ok());
  // Wheels that land in different places do not meet.
  farm::v1::BuildPlan elsewhere = Plan("7.5;9.0", "git repo at v2");
  elsewhere.clear_publish();
  auto* repo = elsewhere.add_publish();
  repo->set_kind("repository");
  repo->set_url("https://pypi.example/legacy/");
  EXPECT_TRUE(CheckWheelNameIsFree(elsewhere, builds).ok());
  farm::v1::BuildPlan there = Plan("7.5;9.0");
  *there.add_publish() = *repo;
  absl::Status s = CheckWheelNameIsFree(elsewhere, {Built("b2", there)});
  EXPECT_THAT(s.message(), HasSubstr("(https://pypi.example/legacy/)"));
}

// demo.sh run from a second checkout: the recipe's tree at another path, with the same files,
// is the same source; other files under the same description ("upload of 12 files") are not.
TEST(WheelNameConflictTest, ATreeIsTheSameSourceWhenItsContentIs) {
  auto tree = [](const std::string& source, const std::string& digest) {
    farm::v1::BuildPlan plan = Plan("9.0", source);
    plan.set_source_digest(digest);
    return plan;
  };
  const std::vector<farm::v1::Build> builds = {
      Built("b1", tree("the recipe's tree /tmp/a/demo", "d1"))};
  EXPECT_TRUE(CheckWheelNameIsFree(tree("the recipe's tree /tmp/b/demo", "d1"), builds).ok());
  absl::Status other = CheckWheelNameIsFree(tree("the recipe's tree /tmp/a/demo", "d2"), builds);
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition);
  // Without a digest on one side (a build from before, a dry run) the description decides.
  EXPECT_TRUE(CheckWheelNameIsFree(tree("the recipe's tree /tmp/a/demo", ""), builds).ok());
}

TEST(SourceTreeDigestTest, FollowsTheFilesNotTheirOrder) {
  auto file = [](const std::string& path, const std::string& hash, bool exe = false) {
    farm::v1::InputFile f;
    f.set_path(path);
    f.mutable_digest()->set_hash(hash);
    f.mutable_digest()->set_size_bytes(1);
    f.set_executable(exe);
    return f;
  };
  const std::string ab = coordinator::SourceTreeDigest({file("src/a", "1"), file("src/b", "2")});
  EXPECT_EQ(ab, coordinator::SourceTreeDigest({file("src/b", "2"), file("src/a", "1")}));
  EXPECT_NE(ab, coordinator::SourceTreeDigest({file("src/a", "1"), file("src/b", "3")}));
  EXPECT_NE(ab, coordinator::SourceTreeDigest({file("src/a", "1"), file("src/c", "2")}));
  EXPECT_NE(ab, coordinator::SourceTreeDigest({file("src/a", "1"), file("src/b", "2", true)}));
}

}  // namespace
}  // namespace farm
