#include "libfarm/jobs/local_job_limits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"

namespace farm {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kGiB = 1ULL << 30;

EnvironmentLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::string {
    auto it = vars.find(name);
    return it == vars.end() ? "" : it->second;
  };
}

TEST(LocalJobLimitsTest, DefaultsFollowTheHostsCoresAndRam) {
  auto big = LocalJobLimitsFor(8, 64 * kGiB, 1000, Env({}));
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->light, 16);
  EXPECT_EQ(big->heavy, 8);
  EXPECT_EQ(big->dir, "/tmp/wheelfarm-jobs-1000");
  // Short of RAM: one heavy job per 2 GiB.
  auto lean = LocalJobLimitsFor(16, 7 * kGiB, 1000, Env({}));
  ASSERT_TRUE(lean.ok());
  EXPECT_EQ(lean->light, 32);
  EXPECT_EQ(lean->heavy, 3);
  // Never none.
  auto tiny = LocalJobLimitsFor(0, 512ULL << 20, 1000, Env({}));
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ(tiny->light, 2);
  EXPECT_EQ(tiny->heavy, 1);
}

TEST(LocalJobLimitsTest, TheDirectoryIsUnderXdgRuntimeDirWhenThereIsOne) {
  auto runtime =
      LocalJobLimitsFor(4, 16 * kGiB, 1000, Env({{"XDG_RUNTIME_DIR", "/run/user/1000"}}));
  ASSERT_TRUE(runtime.ok());
  EXPECT_EQ(runtime->dir, "/run/user/1000/wheelfarm-jobs");
  auto relative = LocalJobLimitsFor(4, 16 * kGiB, 7, Env({{"XDG_RUNTIME_DIR", "run"}}));
  ASSERT_TRUE(relative.ok());
  EXPECT_EQ(relative->dir, "/tmp/wheelfarm-jobs-7");
}

TEST(LocalJobLimitsTest, VariablesReplaceTheDefaults) {
  auto set = LocalJobLimitsFor(4, 16 * kGiB, 1000,
                               Env({{"FARM_LOCAL_JOBS_LIGHT", "40"},
                                    {"FARM_LOCAL_JOBS_HEAVY", "3"},
                                    {"FARM_LOCAL_JOBS_DIR", "/scratch/jobs"},
                                    {"XDG_RUNTIME_DIR", "/run/user/1000"}}));
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->light, 40);
  EXPECT_EQ(set->heavy, 3);
  EXPECT_EQ(set->dir, "/scratch/jobs");
  // Empty is unset.
  auto empty = LocalJobLimitsFor(4, 16 * kGiB, 1000,
                                 Env({{"FARM_LOCAL_JOBS_HEAVY", ""}, {"FARM_LOCAL_JOBS_DIR", ""}}));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->heavy, 4);
  EXPECT_EQ(empty->dir, "/tmp/wheelfarm-jobs-1000");
}

TEST(LocalJobLimitsTest, BadValuesAreRefusedNamingTheVariable) {
  for (const char* bad : {"0", "-2", "many", "4x", "4.5", "4097", "99999999999"}) {
    for (const char* variable : {"FARM_LOCAL_JOBS_LIGHT", "FARM_LOCAL_JOBS_HEAVY"}) {
      auto limits = LocalJobLimitsFor(4, 16 * kGiB, 1000, Env({{variable, bad}}));
      ASSERT_FALSE(limits.ok()) << variable << "=" << bad;
      EXPECT_EQ(limits.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(limits.status().message(), HasSubstr(absl::StrCat(variable, "='", bad, "'")));
      EXPECT_THAT(limits.status().message(), HasSubstr("Fix:"));
    }
  }
  auto relative = LocalJobLimitsFor(4, 16 * kGiB, 1000, Env({{"FARM_LOCAL_JOBS_DIR", "jobs"}}));
  ASSERT_FALSE(relative.ok());
  EXPECT_THAT(relative.status().message(), HasSubstr("FARM_LOCAL_JOBS_DIR='jobs'"));
}

TEST(LocalJobLimitsTest, FromEnvironmentReadsThisProcesssVariables) {
  ASSERT_EQ(setenv("FARM_LOCAL_JOBS_HEAVY", "5", 1), 0);
  ASSERT_EQ(setenv("FARM_LOCAL_JOBS_DIR", "/tmp/from-env", 1), 0);
  auto limits = LocalJobLimitsFromEnvironment();
  ASSERT_TRUE(limits.ok()) << limits.status();
  EXPECT_EQ(limits->heavy, 5);
  EXPECT_EQ(limits->dir, "/tmp/from-env");
  EXPECT_GE(limits->light, 2);  // this host's cores, twice
  ASSERT_EQ(setenv("FARM_LOCAL_JOBS_LIGHT", "lots", 1), 0);
  EXPECT_EQ(LocalJobLimitsFromEnvironment().status().code(), absl::StatusCode::kInvalidArgument);
  unsetenv("FARM_LOCAL_JOBS_LIGHT");
  unsetenv("FARM_LOCAL_JOBS_HEAVY");
  unsetenv("FARM_LOCAL_JOBS_DIR");
}

}  // namespace
}  // namespace farm
