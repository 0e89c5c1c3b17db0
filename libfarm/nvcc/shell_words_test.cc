#include "libfarm/nvcc/shell_words.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::ElementsAre;

TEST(ShellWordsTest, SplitsQuotedWordsAsAShellWould) {
  auto words = SplitShellWords(R"(gcc  "-I/a b" '-DX="1"' -DFATBINFILE="\"/tmp/f.c\"" "" a\ b)"
                               "\n-c");
  ASSERT_TRUE(words.ok()) << words.status();
  EXPECT_THAT(*words, ElementsAre("gcc", "-I/a b", "-DX=\"1\"", "-DFATBINFILE=\"/tmp/f.c\"", "",
                                  "a b", "-c"));
}

TEST(ShellWordsTest, RefusesUnterminatedQuote) { EXPECT_FALSE(SplitShellWords("gcc \"-I/a").ok()); }

TEST(ShellWordsTest, ExpandsVariablesLastAssignmentWins) {
  std::vector<std::pair<std::string, std::string>> vars = {{"CICC_PATH", "/old"},
                                                           {"CICC_PATH", "/cuda/nvvm/bin"}};
  EXPECT_EQ(ExpandShellVariables("$CICC_PATH/cicc", vars), "/cuda/nvvm/bin/cicc");
  EXPECT_EQ(ExpandShellVariables("${CICC_PATH}x$NOPE$", vars), "/cuda/nvvm/binx$");
}

}  // namespace
}  // namespace farm
