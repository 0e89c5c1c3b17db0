#include "libfarm/recipes/placeholders.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(PlaceholdersTest, FindsNamesButNotShellVariablesOrEscapes) {
  EXPECT_EQ(FindPlaceholders("{archs} ${LD_LIBRARY_PATH:-} {{x}} {a,b} {cuda_home}/bin"),
            (std::vector<std::string>{"archs", "cuda_home"}));
}

TEST(PlaceholdersTest, UnknownPlaceholderIsNamedWithTheValidOnes) {
  absl::Status s = CheckPlaceholders("MAX_JOBS={job}", BuildPlaceholders());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("unknown placeholder {job}"), std::string::npos) << s;
  EXPECT_NE(s.message().find("{jobs}"), std::string::npos) << s;
  EXPECT_TRUE(CheckPlaceholders("v{version}", SourcePlaceholders()).ok());
  EXPECT_FALSE(CheckPlaceholders("v{archs}", SourcePlaceholders()).ok());
}

TEST(PlaceholdersTest, ExpandsAndUnescapes) {
  auto out = ExpandPlaceholders("{{{archs}}} ${HOME} {a,b}", {{"archs", "7.5;9.0"}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "{7.5;9.0} ${HOME} {a,b}");
  EXPECT_FALSE(ExpandPlaceholders("{jobs}", {}).ok());
}

TEST(PlaceholdersTest, HostVariablesExpandLikeAShell) {
  auto env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "PATH") return std::string("/usr/bin:/bin");
    if (name == "EMPTY") return std::string();
    return std::nullopt;
  };
  EXPECT_EQ(ExpandHostVariables("/cuda/bin:$PATH", env), "/cuda/bin:/usr/bin:/bin");
  EXPECT_EQ(ExpandHostVariables("/cuda/lib64:${LD_LIBRARY_PATH:-}", env), "/cuda/lib64:");
  EXPECT_EQ(ExpandHostVariables("${UNSET:-dflt} ${EMPTY:-e} ${PATH}", env), "dflt e /usr/bin:/bin");
  EXPECT_EQ(ExpandHostVariables("cost $$5 $ end$", env), "cost $5 $ end$");
}

}  // namespace
}  // namespace farm
