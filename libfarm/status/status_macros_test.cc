#include "libfarm/status/status_macros.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace farm {
namespace {

// Records each step it runs, so a test sees where an early return stopped.
class Steps {
 public:
  absl::Status Run(const std::string& name, absl::Status result) {
    ran_.push_back(name);
    return result;
  }
  absl::StatusOr<int> Value(const std::string& name, absl::StatusOr<int> result) {
    ran_.push_back(name);
    return result;
  }
  const std::vector<std::string>& ran() const { return ran_; }

 private:
  std::vector<std::string> ran_;
};

absl::Status TwoSteps(Steps& steps, absl::Status first, absl::Status second) {
  FARM_RETURN_IF_ERROR(steps.Run("first", first));
  FARM_RETURN_IF_ERROR(steps.Run("second", second));
  return absl::OkStatus();
}

TEST(StatusMacrosTest, ReturnIfErrorStopsAtTheFirstErrorAndReturnsItUnchanged) {
  Steps steps;
  absl::Status error = absl::NotFoundError("no blob. Fix: upload it");
  error.SetPayload("farm/test", absl::Cord("payload"));
  EXPECT_EQ(TwoSteps(steps, error, absl::InternalError("never")), error);
  EXPECT_EQ(steps.ran(), std::vector<std::string>{"first"});
}

TEST(StatusMacrosTest, ReturnIfErrorGoesOnWhileOk) {
  Steps steps;
  EXPECT_TRUE(TwoSteps(steps, absl::OkStatus(), absl::OkStatus()).ok());
  EXPECT_EQ(steps.ran(), (std::vector<std::string>{"first", "second"}));
  Steps again;
  EXPECT_EQ(TwoSteps(again, absl::OkStatus(), absl::AbortedError("late")).code(),
            absl::StatusCode::kAborted);
  EXPECT_EQ(again.ran(), (std::vector<std::string>{"first", "second"}));
}

TEST(StatusMacrosTest, ReturnIfErrorIsOneStatementInAnIfWithoutBraces) {
  auto f = [](bool check, absl::Status s) -> absl::Status {
    if (check)
      FARM_RETURN_IF_ERROR(s);
    else
      return absl::CancelledError("not checked");
    return absl::OkStatus();
  };
  EXPECT_EQ(f(true, absl::UnknownError("x")).code(), absl::StatusCode::kUnknown);
  EXPECT_TRUE(f(true, absl::OkStatus()).ok());
  EXPECT_EQ(f(false, absl::OkStatus()).code(), absl::StatusCode::kCancelled);
}

absl::StatusOr<int> Sum(Steps& steps, absl::StatusOr<int> a, absl::StatusOr<int> b) {
  FARM_ASSIGN_OR_RETURN(int x, steps.Value("a", a));
  int y = 0;
  FARM_ASSIGN_OR_RETURN(y, steps.Value("b", b));
  return x + y;
}

TEST(StatusMacrosTest, AssignOrReturnDeclaresOrAssignsTheValue) {
  Steps steps;
  absl::StatusOr<int> sum = Sum(steps, 2, 3);
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(*sum, 5);
  EXPECT_EQ(steps.ran(), (std::vector<std::string>{"a", "b"}));
}

TEST(StatusMacrosTest, AssignOrReturnReturnsTheErrorAndSkipsTheRest) {
  Steps steps;
  EXPECT_EQ(Sum(steps, absl::InvalidArgumentError("bad a"), 3).status(),
            absl::InvalidArgumentError("bad a"));
  EXPECT_EQ(steps.ran(), std::vector<std::string>{"a"});
  Steps second;
  EXPECT_EQ(Sum(second, 2, absl::DataLossError("bad b")).status(), absl::DataLossError("bad b"));
  EXPECT_EQ(second.ran(), (std::vector<std::string>{"a", "b"}));
}

absl::StatusOr<std::unique_ptr<std::string>> MakeName(bool ok) {
  if (!ok) return absl::UnavailableError("away");
  return std::make_unique<std::string>("w1");
}

absl::Status MoveOnly(bool ok, std::string* out) {
  FARM_ASSIGN_OR_RETURN(std::unique_ptr<std::string> name, MakeName(ok));
  *out = *name;
  return absl::OkStatus();
}

TEST(StatusMacrosTest, AssignOrReturnMovesAMoveOnlyValueIntoAnAbslStatusFunction) {
  std::string out;
  EXPECT_TRUE(MoveOnly(true, &out).ok());
  EXPECT_EQ(out, "w1");
  EXPECT_EQ(MoveOnly(false, &out).code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace farm
