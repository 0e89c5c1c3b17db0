#include "libfarm/recipes/toolkit_choice.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

farm::v1::Worker WorkerWith(const std::string& name, std::vector<std::string> versions,
                            std::vector<std::string> sms = {}) {
  farm::v1::Worker w;
  w.set_name(name);
  for (const std::string& v : versions) {
    farm::v1::CudaToolkit* tk = w.mutable_capabilities()->add_cuda();
    tk->set_version(v);
    for (const std::string& sm : sms) tk->add_sms(sm);
  }
  return w;
}

ArchList Archs(const char* text) {
  auto list = ParseArchList(text);
  EXPECT_TRUE(list.ok()) << list.status();
  return *list;
}

const CudaRange kRange{{12, 4}, {13, 0}};

TEST(ToolkitChoiceTest, PicksTheNewestToolkitThatBuildsEveryArch) {
  auto choice = ChooseToolkit(Archs("7.5;9.0;12.1"), kRange,
                              {WorkerWith("a", {"12.6", "13.0"}), WorkerWith("b", {"13.0"})});
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->version, (ToolkitVersion{13, 0}));
  EXPECT_EQ(choice->workers, (std::vector<std::string>{"a", "b"}));
}

TEST(ToolkitChoiceTest, OldArchFallsBackToCuda12) {
  auto choice = ChooseToolkit(Archs("7.0;9.0"), kRange,
                              {WorkerWith("new", {"13.0"}), WorkerWith("old", {"12.8"})});
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->version, (ToolkitVersion{12, 8}));
  EXPECT_EQ(choice->workers, std::vector<std::string>{"old"});
}

TEST(ToolkitChoiceTest, Sm70WithOnlyCuda13ExplainsTheFix) {
  auto choice = ChooseToolkit(Archs("7.0;9.0"), kRange, {WorkerWith("w", {"13.0"})});
  ASSERT_FALSE(choice.ok());
  EXPECT_EQ(choice.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(choice.status().message(),
            "sm_70 is not supported by CUDA 13.0 (lowest: sm_75); the recipe allows CUDA "
            "12.4–13.0: register a worker with CUDA 12.4–12.9 or drop 7.0");
}

TEST(ToolkitChoiceTest, Sm121NeedsCuda129) {
  auto choice = ChooseToolkit(Archs("9.0;12.1"), kRange, {WorkerWith("w", {"12.6"})});
  ASSERT_FALSE(choice.ok());
  EXPECT_EQ(choice.status().message(),
            "sm_121 is not supported by CUDA 12.6 (needs CUDA 12.9 or newer); the recipe allows "
            "CUDA 12.4–13.0: register a worker with CUDA 12.9–13.0 or drop 12.1");
}

TEST(ToolkitChoiceTest, RecipeRangeThatCannotBuildAnArch) {
  auto choice =
      ChooseToolkit(Archs("12.1"), CudaRange{{12, 4}, {12, 8}}, {WorkerWith("w", {"13.0"})});
  ASSERT_FALSE(choice.ok());
  EXPECT_EQ(choice.status().message(),
            "sm_121 needs CUDA 12.9 or newer, but the recipe allows CUDA 12.4–12.8: widen "
            "platform.cuda_min/cuda_max in the recipe or drop 12.1");
  auto feasible = FeasibleToolkits(Archs("7.5;12.1"), kRange);
  ASSERT_TRUE(feasible.ok());
  EXPECT_EQ(feasible->ToString(), "12.9–13.0");
}

TEST(ToolkitChoiceTest, ArchsNoSingleToolkitCovers) {
  auto feasible = FeasibleToolkits(Archs("5.0;11.0"), CudaRange{{12, 0}, {13, 0}});
  ASSERT_FALSE(feasible.ok());
  EXPECT_NE(feasible.status().message().find("together"), std::string::npos) << feasible.status();
}

TEST(ToolkitChoiceTest, ToolkitsOutsideTheRangeAndNoToolkitsAtAll) {
  auto outside = ChooseToolkit(Archs("9.0"), kRange, {WorkerWith("w", {"11.8"})});
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.status().message(),
            "CUDA 11.8 (on w) is outside the recipe's range; the recipe allows CUDA 12.4–13.0: "
            "register a worker with CUDA 12.4–13.0");
  auto none = ChooseToolkit(Archs("9.0"), kRange, {WorkerWith("w", {})});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no registered worker offers a CUDA toolkit"),
            std::string::npos);
}

TEST(ToolkitChoiceTest, WorkersWhoseNvccDoesNotListTheSmAreSkipped) {
  auto choice = ChooseToolkit(Archs("9.0;12.1"), kRange,
                              {WorkerWith("partial", {"13.0"}, {"sm_75", "sm_90"}),
                               WorkerWith("full", {"13.0"}, {"sm_75", "sm_90", "sm_121"})});
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->workers, std::vector<std::string>{"full"});
  auto none =
      ChooseToolkit(Archs("12.1"), kRange, {WorkerWith("partial", {"13.0"}, {"sm_75", "sm_90"})});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("does not list sm_121 on partial"), std::string::npos)
      << none.status();
}

}  // namespace
}  // namespace farm
