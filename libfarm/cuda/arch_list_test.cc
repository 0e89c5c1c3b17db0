#include "libfarm/cuda/arch_list.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

std::string Normalized(absl::string_view text) {
  auto list = ParseArchList(text);
  EXPECT_TRUE(list.ok()) << text << ": " << list.status();
  return list.ok() ? list->ToString() : "";
}

std::string ErrorOf(absl::string_view text) {
  auto list = ParseArchList(text);
  EXPECT_FALSE(list.ok()) << text;
  return list.ok() ? "" : std::string(list.status().message());
}

TEST(ArchListTest, AcceptsEverySpelling) {
  EXPECT_EQ(Normalized("7.5;9.0;12.1"), "7.5;9.0;12.1");
  EXPECT_EQ(Normalized("\"7.5 9.0\""), "7.5;9.0");
  EXPECT_EQ(Normalized("sm_75"), "7.5");
  EXPECT_EQ(Normalized("75"), "7.5");
  EXPECT_EQ(Normalized("8.0+PTX"), "8.0+PTX");
  EXPECT_EQ(Normalized("8.0+ptx"), "8.0+PTX");
  EXPECT_EQ(Normalized("9.0a"), "9.0a");
  EXPECT_EQ(Normalized("12.0f"), "12.0f");
  EXPECT_EQ(Normalized("12.1a"), "12.1a");
  EXPECT_EQ(Normalized("sm_90a, 100f\t121"), "9.0a;10.0f;12.1");
  EXPECT_EQ(Normalized("'8.6'"), "8.6");
}

TEST(ArchListTest, NormalizesToSortedUniqueTargets) {
  auto list = ParseArchList("12.1;9.0;7.5;sm_75;9.0+PTX;9.0a");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->requests.size(), 4u);
  EXPECT_EQ(list->requests[0].target, (CudaTarget{75, ArchVariant::kGeneric}));
  EXPECT_EQ(list->requests[1].target, (CudaTarget{90, ArchVariant::kGeneric}));
  EXPECT_TRUE(list->requests[1].ptx);
  EXPECT_EQ(list->requests[2].target, (CudaTarget{90, ArchVariant::kArchSpecific}));
  EXPECT_FALSE(list->requests[2].ptx);
  EXPECT_EQ(list->requests[3].target.SmName(), "sm_121");
  EXPECT_EQ(list->requests[3].target.ComputeName(), "compute_121");
  EXPECT_EQ(list->ToString(), "7.5;9.0+PTX;9.0a;12.1");
}

TEST(ArchListTest, RefusesUnknownArchsWithTheValidList) {
  const std::string error = ErrorOf("7.5;8.1");
  EXPECT_NE(error.find("unknown CUDA arch \"8.1\""), std::string::npos) << error;
  EXPECT_NE(error.find("7.5 8.0 8.6 8.7 8.8 8.9 9.0 10.0 10.1 10.3 11.0 12.0 12.1"),
            std::string::npos)
      << error;
  EXPECT_NE(ErrorOf("8.0a").find("8.0 has no \"a\" variant"), std::string::npos);
  EXPECT_NE(ErrorOf("9.0f").find("9.0 has no \"f\" variant"), std::string::npos);
  for (const char* bad : {"", " ; ", "abc", "sm_9.0", "7.55", "+PTX", "sm_", "a", "-75", "7.",
                          "1e2", "877774605.0", "99999999999"}) {
    EXPECT_FALSE(ParseArchList(bad).ok()) << bad;
  }
}

TEST(ArchListTest, KnowsWhichToolkitCompilesWhat) {
  auto v = [](const char* text) { return *ParseToolkitVersion(text); };
  const CudaTarget sm121{121, ArchVariant::kGeneric};
  EXPECT_EQ(MinimumToolkit(sm121), v("12.9"));
  EXPECT_TRUE(CheckToolkitSupports(sm121, v("12.9")).ok());
  const absl::Status too_old = CheckToolkitSupports(sm121, v("12.8"));
  EXPECT_EQ(too_old.message(),
            "sm_121 needs CUDA 12.9 or newer; toolkit 12.8 cannot compile for it");

  const CudaTarget sm70{70, ArchVariant::kGeneric};
  EXPECT_TRUE(CheckToolkitSupports(sm70, v("12.9")).ok());
  EXPECT_EQ(CheckToolkitSupports(sm70, v("13.0")).message(),
            "sm_70 was dropped after CUDA 12.9; toolkit 13.0 cannot compile for it (use CUDA 9.0 "
            "to 12.9)");
  EXPECT_TRUE(CheckToolkitSupports({75, ArchVariant::kGeneric}, v("13.0")).ok());

  const CudaTarget sm101{101, ArchVariant::kGeneric};
  EXPECT_TRUE(CheckToolkitSupports(sm101, v("12.8")).ok());
  EXPECT_EQ(CheckToolkitSupports(sm101, v("13.0")).message(),
            "sm_101 was renamed sm_110 after CUDA 12.9; with toolkit 13.0 ask for 11.0 instead");
  EXPECT_FALSE(CheckToolkitSupports({110, ArchVariant::kGeneric}, v("12.9")).ok());
  EXPECT_FALSE(CheckToolkitSupports({120, ArchVariant::kFamily}, v("12.8")).ok());
  EXPECT_TRUE(CheckToolkitSupports({120, ArchVariant::kArchSpecific}, v("12.8")).ok());
  EXPECT_EQ(MinimumToolkit({90, ArchVariant::kArchSpecific}), v("12.0"));
  EXPECT_EQ(MinimumToolkit({88, ArchVariant::kGeneric}), v("13.0"));
  EXPECT_EQ(MinimumToolkit({91, ArchVariant::kGeneric}), std::nullopt);
}

TEST(ArchListTest, ParsesToolkitVersions) {
  EXPECT_EQ(ParseToolkitVersion("V13.0.88")->ToString(), "13.0");
  EXPECT_EQ(ParseToolkitVersion("12.9")->ToString(), "12.9");
  EXPECT_FALSE(ParseToolkitVersion("13").ok());
  EXPECT_FALSE(ParseToolkitVersion("x.y").ok());
}

}  // namespace
}  // namespace farm
