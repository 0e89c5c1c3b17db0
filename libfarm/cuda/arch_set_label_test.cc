#include "libfarm/cuda/arch_set_label.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::HasSubstr;

ArchList Archs(absl::string_view text) {
  auto list = ParseArchList(text);
  EXPECT_TRUE(list.ok()) << list.status();
  return list.ok() ? *list : ArchList{};
}

TEST(ArchSetLabelTest, OneSortedSegmentPerTargetWithPtxAsItsOwnSegment) {
  // Whatever order and spelling the user typed, one label per set.
  EXPECT_EQ(ArchSetLabel(Archs("9.0;7.5")), "sm75.sm90");
  EXPECT_EQ(ArchSetLabel(Archs("sm_121 75 9.0")), "sm75.sm90.sm121");
  EXPECT_EQ(ArchSetLabel(Archs("8.0+PTX;9.0")), "sm80.compute80.sm90");
  EXPECT_EQ(ArchSetLabel(Archs("9.0a;9.0;10.0f")), "sm90.sm90a.sm100f");
  EXPECT_EQ(ArchSetName(Archs("7.5;9.0")), "sm75-sm90");
  EXPECT_EQ(ArchSetName(Archs("12.1+PTX")), "sm121-compute121");
}

TEST(ArchSetLabelTest, TheFarmLabelReplacesWhateverLabelTheBuildSet) {
  EXPECT_EQ(FarmLocalLabel({13, 0}, Archs("7.5;9.0")), "cu130.sm75.sm90");
  EXPECT_EQ(FarmLocalLabel({12, 8}, ArchList{}), "cu128");
  EXPECT_EQ(WithFarmLocalLabel("2.9.1", {13, 0}, Archs("7.5")), "2.9.1+cu130.sm75");
  EXPECT_EQ(WithFarmLocalLabel("2.9.1a0+gitd38164a", {13, 0}, Archs("9.0;7.5")),
            "2.9.1a0+cu130.sm75.sm90");
  EXPECT_EQ(WithFarmLocalLabel("1.0+cu130.sm80", {13, 0}, Archs("8.0+PTX")),
            "1.0+cu130.sm80.compute80");
}

TEST(ArchSetLabelTest, AnIndexNameParsesBackToItsSet) {
  for (const char* text : {"7.5", "7.5;9.0", "8.0+PTX;9.0a", "10.0f;12.1+PTX"}) {
    const ArchList archs = Archs(text);
    auto parsed = ParseArchSetName(ArchSetName(archs));
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status();
    EXPECT_EQ(parsed->ToString(), archs.ToString()) << text;
  }
  // Another order is the same set (the index redirects it to the canonical name).
  auto swapped = ParseArchSetName("sm90-sm75");
  ASSERT_TRUE(swapped.ok()) << swapped.status();
  EXPECT_EQ(ArchSetName(*swapped), "sm75-sm90");
}

TEST(ArchSetLabelTest, HostileOrUnknownIndexNamesAreRefusedNamingTheSegment) {
  for (const char* name : {"", "-", "sm75-", "..", "%2e%2e", "sm75/..", "sm_75", "SM75", "sm075",
                           "sm7.5", "sm75x", "sm999", "sm72a", "sm75+ptx", "simple", "files",
                           "compute90", "sm90-compute90-compute90", "sm75-sm75", "cu130-sm75",
                           "sm90-compute75", "sm\n75"}) {
    auto parsed = ParseArchSetName(name);
    EXPECT_FALSE(parsed.ok()) << "\"" << name << "\" parsed as " << parsed->ToString();
  }
  EXPECT_THAT(ParseArchSetName("sm75-gpu9").status().message(), HasSubstr("\"gpu9\""));
  EXPECT_THAT(ParseArchSetName("sm75-gpu9").status().message(), HasSubstr("Fix:"));
  EXPECT_THAT(ParseArchSetName("compute90").status().message(), HasSubstr("needs sm90"));
}

TEST(ArchSetLabelTest, AVersionsArchSetIsReadFromItsFarmLabelOnly) {
  EXPECT_EQ(ArchSetNameOfVersion("2.9.1+cu130.sm75.sm90"), "sm75-sm90");
  EXPECT_EQ(ArchSetNameOfVersion("0.1.0+cu130.sm80.compute80"), "sm80-compute80");
  // PEP 440 reads "-", "_" and upper case in a local label as "." and lower case.
  EXPECT_EQ(ArchSetNameOfVersion("2.9.1+CU130-SM75_SM90"), "sm75-sm90");
  // No label, only the toolkit's (wheels from before arch sets), or someone else's label.
  EXPECT_EQ(ArchSetNameOfVersion("2.9.1"), std::nullopt);
  EXPECT_EQ(ArchSetNameOfVersion("2.9.1+cu130"), std::nullopt);
  EXPECT_EQ(ArchSetNameOfVersion("2.9.1+gitabc.sm75"), std::nullopt);
  EXPECT_EQ(ArchSetNameOfVersion("2.9.1+cpu"), std::nullopt);
  EXPECT_EQ(ArchSetNameOfVersion("2.9.1+cu.sm75"), std::nullopt);
  // Not canonical: pip sees another version, and it is no arch-set index's file.
  EXPECT_EQ(ArchSetNameOfVersion("2.9.1+cu130.sm90.sm75"), std::nullopt);
  EXPECT_EQ(ArchSetNameOfVersion("2.9.1+cu130.sm75.bogus"), std::nullopt);
}

}  // namespace
}  // namespace farm
