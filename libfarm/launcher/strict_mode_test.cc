#include "libfarm/launcher/strict_mode.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

StrictRefusal Refusal(const std::string& reason) {
  return {"farm-cc",
          "a.cc",
          "compile on this host",
          reason,
          "change the call so the farm can run it",
          "unset FARM_CC_STRICT"};
}

TEST(StrictModeTest, NamesTheLauncherSourceReasonAndBothWaysOut) {
  EXPECT_EQ(StrictModeMessage(Refusal("-flto: LTO sections differ per run")),
            "farm-cc: strict mode: a.cc would compile on this host: -flto: LTO sections differ "
            "per run. Fix: change the call so the farm can run it, or unset FARM_CC_STRICT");
}

// A reason with its own fix (no worker for the toolchain: start one) keeps it as the fix.
TEST(StrictModeTest, AReasonThatNamesItsFixKeepsIt) {
  EXPECT_EQ(StrictModeMessage(Refusal("no online aarch64 worker. Fix: start one")),
            "farm-cc: strict mode: a.cc would compile on this host: no online aarch64 worker. "
            "Fix: start one; or unset FARM_CC_STRICT");
}

}  // namespace
}  // namespace farm
