#include "farm_nvcc/farm_nvcc_config.h"

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::StartsWith;

EnvironmentLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) {
    auto it = vars.find(name);
    return it == vars.end() ? std::string() : it->second;
  };
}

TEST(FarmNvccConfigTest, NothingSetIsEveryDefault) {
  auto config = LoadFarmNvccConfig(Env({}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->disabled);
  EXPECT_FALSE(config->strict);
  EXPECT_TRUE(config->host_compile_ahead);
  EXPECT_TRUE(config->host_compile_on_farm);
  EXPECT_EQ(config->long_unit_seconds, kLongUnitSeconds);
  EXPECT_TRUE(config->local_jobs.has_value());
  EXPECT_THAT(config->build_id, StartsWith("nvcc-"));
}

TEST(FarmNvccConfigTest, ReadsEveryVariable) {
  auto config = LoadFarmNvccConfig(Env({{"FARM_NVCC_DISABLE", "on"},
                                        {"FARM_NVCC_STRICT", "TRUE"},
                                        {"FARM_NVCC_HOST_COMPILE_AHEAD", "0"},
                                        {"FARM_NVCC_HOST_COMPILE_ON_FARM", "no"},
                                        {"FARM_NVCC_LONG_UNIT_SECONDS", "30"},
                                        {"FARM_NVCC_COST_HINTS", "*flash_bwd*=900"},
                                        {"FARM_NVCC_LOG", "debug"},
                                        {"FARM_TOKEN_FILE", "/t"},
                                        {"FARM_BUILD_ID", "b2"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->disabled);
  EXPECT_TRUE(config->strict);
  EXPECT_FALSE(config->host_compile_ahead);
  EXPECT_FALSE(config->host_compile_on_farm);
  EXPECT_EQ(config->long_unit_seconds, 30);
  EXPECT_EQ(config->cost_hints.SecondsFor("flash_attn/flash_bwd_hdim64.cu"), 900);
  EXPECT_EQ(config->log_level, "debug");
  EXPECT_EQ(config->target.token_file, "/t");
  EXPECT_EQ(config->build_id, "b2");
}

// FARM_NVCC_STRICT=true was "not 1": a strict build quietly ran plain nvcc.
TEST(FarmNvccConfigTest, AValueItCannotTakeIsRefusedNamingTheVariableValueAndFix) {
  EXPECT_EQ(LoadFarmNvccConfig(Env({{"FARM_NVCC_STRICT", "strict"}})).status().message(),
            "FARM_NVCC_STRICT='strict' is not a boolean (1, true, yes, on or 0, false, no, off). "
            "Fix: set it to 1 to fail a call that would run plain nvcc, or unset it");
  EXPECT_THAT(
      std::string(
          LoadFarmNvccConfig(Env({{"FARM_NVCC_LONG_UNIT_SECONDS", "soon"}})).status().message()),
      StartsWith("FARM_NVCC_LONG_UNIT_SECONDS='soon' is not a number of seconds"));
  EXPECT_THAT(
      std::string(
          LoadFarmNvccConfig(Env({{"FARM_NVCC_COST_HINTS", "*.cu=soon"}})).status().message()),
      StartsWith("FARM_NVCC_COST_HINTS='*.cu=soon' cost hint '*.cu=soon' is not GLOB=SECONDS"));
  EXPECT_EQ(LoadFarmNvccConfig(Env({{"FARM_LOCAL_JOBS_HEAVY", "0"}})).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace farm
