#include "libfarm/file_tree/footprint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace farm {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

farm::v1::InputFile File(const std::string& path, int64_t size) {
  farm::v1::InputFile f;
  f.set_path(path);
  f.mutable_digest()->set_hash(std::string(64, 'a'));
  f.mutable_digest()->set_size_bytes(size);
  return f;
}

// The third probe's tree: one 256 KiB blob named 650 times. Its weight is what laying it out
// could write, not what was uploaded.
TEST(FootprintTest, EveryOccurrenceOfABlobCounts) {
  farm::v1::FileTree tree;
  for (int i = 0; i < 650; ++i) *tree.add_files() = File("out/f" + std::to_string(i), 256 << 10);
  farm::v1::InputFile link;
  link.set_path("lib64");
  link.set_symlink_target("usr/lib64");
  *tree.add_files() = link;
  const Footprint f = FootprintOf(tree);
  EXPECT_EQ(f.entries, 651);
  EXPECT_EQ(f.bytes, uint64_t{650} * (256 << 10));
}

TEST(FootprintTest, HugeClaimedSizesSaturateInsteadOfWrapping) {
  farm::v1::FileTree tree;
  for (int i = 0; i < 4; ++i) *tree.add_files() = File("f" + std::to_string(i), INT64_MAX);
  EXPECT_EQ(FootprintOf(tree).bytes, UINT64_MAX);
  EXPECT_EQ((FootprintOf(tree) + FootprintOf(tree)).bytes, UINT64_MAX);
  EXPECT_FALSE(CheckFootprint("the trees", FootprintOf(tree), uint64_t{1} << 40, "x").ok());
}

TEST(FootprintTest, PlainInputsCount) {
  farm::v1::Action action;
  *action.add_inputs() = File("a.cu", 100);
  *action.add_inputs() = File("b.cu", 100);
  EXPECT_EQ(FootprintOf(action).bytes, 200u);
  EXPECT_EQ(FootprintOf(action).entries, 2);
}

TEST(FootprintTest, ARefusalNamesTheSizesTheLimitAndItsSetting) {
  const Footprint f{.entries = 650, .bytes = uint64_t{162} << 20};
  EXPECT_TRUE(CheckFootprint("the trees", f, uint64_t{1} << 30, "setting").ok());
  const absl::Status s = CheckFootprint("the action's trees", f, uint64_t{64} << 20,
                                        "farm-coordinator --max-action-input");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("162.0 MiB"), HasSubstr("650 entries"), HasSubstr("64.0 MiB"),
                    HasSubstr("farm-coordinator --max-action-input"), HasSubstr("Fix:")));
}

}  // namespace
}  // namespace farm
