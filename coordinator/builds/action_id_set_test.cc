#include "coordinator/builds/action_id_set.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace farm::coordinator {
namespace {

std::set<std::string> All(const ActionIdSet& ids) {
  std::set<std::string> out;
  ids.ForEach([&](const std::string& id) { out.insert(id); });
  return out;
}

TEST(ActionIdSetTest, HoldsSchedulerIdsAndAnyOtherIdsAndGivesThemBackAsGiven) {
  ActionIdSet ids;
  const std::string scheduler_id = "187a2b3c4d5e6f70a1b2c3d4";  // 24 lowercase hex digits
  const std::string upper = "187A2B3C4D5E6F70A1B2C3D4";         // not the scheduler's form
  const std::string other = "build-7/action";
  EXPECT_TRUE(ids.Insert(scheduler_id));
  EXPECT_FALSE(ids.Insert(scheduler_id));
  EXPECT_TRUE(ids.Insert(upper));
  EXPECT_TRUE(ids.Insert(other));
  EXPECT_TRUE(ids.Insert(""));
  EXPECT_EQ(ids.size(), 4u);
  EXPECT_TRUE(ids.Contains(scheduler_id));
  EXPECT_TRUE(ids.Contains(upper));
  EXPECT_FALSE(ids.Contains("187a2b3c4d5e6f70a1b2c3d5"));
  EXPECT_EQ(All(ids), (std::set<std::string>{scheduler_id, upper, other, ""}));

  EXPECT_TRUE(ids.Erase(scheduler_id));
  EXPECT_FALSE(ids.Erase(scheduler_id));
  EXPECT_FALSE(ids.Contains(scheduler_id));
  EXPECT_TRUE(ids.Erase(upper));
  EXPECT_TRUE(ids.Erase(other));
  EXPECT_TRUE(ids.Erase(""));
  EXPECT_TRUE(ids.empty());
}

}  // namespace
}  // namespace farm::coordinator
