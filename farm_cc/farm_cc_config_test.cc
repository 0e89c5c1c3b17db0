#include "farm_cc/farm_cc_config.h"

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

EnvironmentLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) {
    auto it = vars.find(name);
    return it == vars.end() ? std::string() : it->second;
  };
}

TEST(FarmCcConfigTest, NothingSetIsEveryDefault) {
  auto config = LoadFarmCcConfig(Env({{"HOME", "/home/u"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->disabled);
  EXPECT_FALSE(config->strict);
  EXPECT_TRUE(config->keep_scans);
  EXPECT_TRUE(config->read_includes);
  EXPECT_EQ(config->scan_cache_bytes, uint64_t{1} << 30);
  EXPECT_EQ(config->cache_dir, "/home/u/.cache/wheelfarm/farm-cc");
  EXPECT_EQ(config->local_job_priority, JobPriority::kOpening);
  EXPECT_FALSE(config->base_dir.has_value());
  EXPECT_TRUE(config->local_jobs.has_value());
  EXPECT_EQ(config->log_level, "info");
  EXPECT_THAT(config->build_id, StartsWith("nvcc-"));
}

TEST(FarmCcConfigTest, ReadsEveryVariable) {
  auto config = LoadFarmCcConfig(Env({{"FARM_CC_DISABLE", "true"},
                                      {"FARM_CC_STRICT", "yes"},
                                      {"FARM_CC_KEEP_SCANS", "0"},
                                      {"FARM_CC_SCAN", "compiler"},
                                      {"FARM_CC_SCAN_CACHE_SIZE", "2GiB"},
                                      {"FARM_CC_CACHE_DIR", "/c"},
                                      {"FARM_CC_BASEDIR", "/src/proj"},
                                      {"FARM_CC_LOG", "debug"},
                                      {"FARM_LOCAL_JOB_PRIORITY", "long-unit"},
                                      {"FARM_LOCAL_JOBS_HEAVY", "3"},
                                      {"FARM_COORDINATOR", "farm:7420"},
                                      {"FARM_BUILD_ID", "b1"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->disabled);
  EXPECT_TRUE(config->strict);
  EXPECT_FALSE(config->keep_scans);
  EXPECT_FALSE(config->read_includes);
  EXPECT_EQ(config->scan_cache_bytes, uint64_t{2} << 30);
  EXPECT_EQ(config->cache_dir, "/c");
  ASSERT_TRUE(config->base_dir.has_value());
  EXPECT_EQ(config->log_level, "debug");
  EXPECT_EQ(config->local_job_priority, JobPriority::kLongUnit);
  ASSERT_TRUE(config->local_jobs.has_value());
  EXPECT_EQ(config->local_jobs->heavy, 3);
  EXPECT_EQ(config->target.coordinator, "farm:7420");
  EXPECT_EQ(config->build_id, "b1");
  EXPECT_EQ(LoadFarmCcConfig(Env({{"XDG_CACHE_HOME", "/x"}}))->cache_dir, "/x/wheelfarm/farm-cc");
}

// FARM_CC_DISABLE=true was "not 1": silently ignored, the compile sent to the farm anyway.
TEST(FarmCcConfigTest, ABooleanIsTakenInItsUsualWordsAndRefusedOtherwise) {
  for (const char* on : {"1", "true", "TRUE", "yes", "on"}) {
    EXPECT_TRUE(LoadFarmCcConfig(Env({{"FARM_CC_DISABLE", on}}))->disabled) << on;
  }
  for (const char* off : {"0", "false", "No", "off"}) {
    EXPECT_FALSE(LoadFarmCcConfig(Env({{"FARM_CC_DISABLE", off}}))->disabled) << off;
  }
  auto refused = LoadFarmCcConfig(Env({{"FARM_CC_DISABLE", "please"}}));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "FARM_CC_DISABLE='please' is not a boolean (1, true, yes, on or 0, false, no, off). "
            "Fix: set it to 1 to always compile on this host, or unset it");
  EXPECT_THAT(std::string(LoadFarmCcConfig(Env({{"FARM_CC_STRICT", "2"}})).status().message()),
              StartsWith("FARM_CC_STRICT='2' is not a boolean"));
}

TEST(FarmCcConfigTest, EveryMalformedValueIsRefusedNamingTheVariableAndTheFix) {
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"FARM_CC_KEEP_SCANS", "never"},
                                                        {"FARM_CC_SCAN", "fast"},
                                                        {"FARM_CC_SCAN_CACHE_SIZE", "lots"},
                                                        {"FARM_CC_BASEDIR", "relative/dir"},
                                                        {"FARM_LOCAL_JOB_PRIORITY", "urgent"},
                                                        {"FARM_LOCAL_JOBS_LIGHT", "none"}}) {
    auto refused = LoadFarmCcConfig(Env({{name, value}}));
    ASSERT_FALSE(refused.ok()) << name;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(refused.status().message(), HasSubstr(name)) << refused.status();
    EXPECT_THAT(refused.status().message(), HasSubstr(value)) << refused.status();
    EXPECT_THAT(refused.status().message(), HasSubstr("Fix:")) << refused.status();
  }
}

}  // namespace
}  // namespace farm
