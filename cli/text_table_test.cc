#include "cli/text_table.h"

#include <gtest/gtest.h>

namespace farm::cli {
namespace {

TEST(TextTableTest, PadsColumnsToWidestCell) {
  TextTable t({"NAME", "STATE"});
  t.AddRow({"local-1", "online"});
  t.AddRow({"w", "lost"});
  EXPECT_EQ(t.Render(),
            "NAME     STATE\n"
            "local-1  online\n"
            "w        lost\n");
}

}  // namespace
}  // namespace farm::cli
