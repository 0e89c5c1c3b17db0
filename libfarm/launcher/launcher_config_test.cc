#include "libfarm/launcher/launcher_config.h"

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::HasSubstr;

struct Settings {
  bool disabled = false;
  bool keep = true;
  std::string dir = "default";
};

std::vector<ConfigVariable<Settings>> Table() {
  return {BoolVariable("X_DISABLE", &Settings::disabled, "set it to 1 to never ask, or unset it"),
          BoolVariable("X_KEEP", &Settings::keep, "set it to 0 to keep nothing, or unset it"),
          TextVariable("X_DIR", &Settings::dir)};
}

EnvironmentLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) {
    auto it = vars.find(name);
    return it == vars.end() ? std::string() : it->second;
  };
}

TEST(ParseStrictBoolTest, TakesTheUsualWordsInAnyCaseAndNothingElse) {
  for (const char* yes : {"1", "true", "TRUE", "Yes", "on", "ON"}) {
    EXPECT_EQ(ParseStrictBool(yes), true) << yes;
  }
  for (const char* no : {"0", "false", "False", "no", "OFF"}) {
    EXPECT_EQ(ParseStrictBool(no), false) << no;
  }
  for (const char* neither : {"", "2", "y", "enable", " 1", "truee"}) {
    EXPECT_EQ(ParseStrictBool(neither), std::nullopt) << neither;
  }
}

TEST(LoadConfigVariablesTest, ReadsWhatIsSetAndKeepsTheDefaultsOfTheRest) {
  Settings s;
  ASSERT_TRUE(LoadConfigVariables(Table(), Env({{"X_DISABLE", "true"}, {"X_KEEP", ""}}), s).ok());
  EXPECT_TRUE(s.disabled);
  EXPECT_TRUE(s.keep);  // empty is unset
  EXPECT_EQ(s.dir, "default");
  ASSERT_TRUE(LoadConfigVariables(Table(), Env({{"X_KEEP", "Off"}, {"X_DIR", "/d"}}), s).ok());
  EXPECT_FALSE(s.keep);
  EXPECT_EQ(s.dir, "/d");
}

// FARM_CC_DISABLE=true once read as "not 1": ignored, without a word.
TEST(LoadConfigVariablesTest, RefusesAValueItCannotTakeNamingVariableValueAndFix) {
  Settings s;
  const absl::Status refused = LoadConfigVariables(Table(), Env({{"X_DISABLE", "maybe"}}), s);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.message(),
            "X_DISABLE='maybe' is not a boolean (1, true, yes, on or 0, false, no, off). Fix: "
            "set it to 1 to never ask, or unset it");
  EXPECT_THAT(LoadConfigVariables(Table(), Env({{"X_KEEP", "2"}}), s).message(),
              HasSubstr("X_KEEP='2'"));
}

}  // namespace
}  // namespace farm
