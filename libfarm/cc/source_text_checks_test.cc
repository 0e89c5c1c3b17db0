#include "libfarm/cc/source_text_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::cc {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;

TEST(MentionsTimeMacrosTest, WholeNamesOnly) {
  EXPECT_TRUE(MentionsTimeMacros("const char* built = __DATE__ \" \" __TIME__;"));
  EXPECT_TRUE(MentionsTimeMacros("__TIMESTAMP__"));
  EXPECT_FALSE(MentionsTimeMacros("#define __TIME_T_TYPE __SYSCALL_SLONG_TYPE\n__DATE_X"));
  EXPECT_FALSE(MentionsTimeMacros("__TIMESTAMP __TIME_ __TIMER_T_TYPE __TIME"));
  EXPECT_TRUE(MentionsTimeMacros("__TIME_T_TYPE __TIMER __TIME__"));
  EXPECT_TRUE(MentionsTimeMacros("__TIME_T_TYPE __TIMESTAMP__"));
}

// Named in a comment or a literal, they expand to nothing (farm-cc's own sources document
// the check): only code counts, across splices, raw strings and digit separators.
TEST(MentionsTimeMacrosTest, CommentsAndLiteralsDoNotCount) {
  EXPECT_FALSE(MentionsTimeMacros("// names __DATE__ in a comment\nint x;"));
  EXPECT_FALSE(MentionsTimeMacros("/* __TIME__\n __TIMESTAMP__ */ int x;"));
  EXPECT_FALSE(MentionsTimeMacros("const char* m = \"__DATE__ or \\\"__TIME__\\\"\";"));
  EXPECT_FALSE(MentionsTimeMacros("auto r = R\"x(a \" __DATE__ )\" )x\";"));
  EXPECT_FALSE(MentionsTimeMacros("char q = '\"'; // __TIME__"));
  EXPECT_TRUE(MentionsTimeMacros("// a comment\nconst char* d = __DATE__;"));
  EXPECT_TRUE(MentionsTimeMacros("/* c */ __TIME__"));
  EXPECT_TRUE(MentionsTimeMacros("int n = 1'000; const char* t = __TIMESTAMP__;"));
  EXPECT_TRUE(MentionsTimeMacros("auto r = R\"(x)\"; auto d = __DATE__;"));
  // A spliced // comment goes on to the next line; the line after it is code.
  EXPECT_FALSE(MentionsTimeMacros("// one \\\n __DATE__ still comment\nint x;"));
  EXPECT_TRUE(MentionsTimeMacros("// one \\\n still comment\n__DATE__"));
}

TEST(IncludedNamesTest, DirectivesAndProbes) {
  std::vector<IncludedName> names = IncludedNames(
      "#include <vector>\n  #  include \"a/b.h\"  // c\n#include_next <limits.h>\n"
      "#import \"o.h\"\n#define X 1\n#include MACRO\n"
      "#if __has_include(<tbb/tbb.h>) && __has_include_next ( \"n.h\" )\n#endif\n"
      "int x; // #include <not_a_directive.h>\n");
  EXPECT_THAT(
      names,
      ElementsAre(Field(&IncludedName::name, "vector"), Field(&IncludedName::name, "a/b.h"),
                  Field(&IncludedName::name, "limits.h"), Field(&IncludedName::name, "o.h"),
                  Field(&IncludedName::name, "tbb/tbb.h"), Field(&IncludedName::name, "n.h")));
  EXPECT_FALSE(names[0].probe);
  EXPECT_TRUE(names[4].probe);
  EXPECT_TRUE(names[5].probe);
}

TEST(IncludedNamesTest, OnlyAHashFirstOnItsLineStartsADirective) {
  EXPECT_THAT(
      IncludedNames("\t #include <first.h>\nx #include <mid_line.h>\n"
                    "#define S(a) #a\n\r#include <after_cr.h>\n #\tinclude<tab.h>\n#"),
      ElementsAre(Field(&IncludedName::name, "first.h"), Field(&IncludedName::name, "tab.h")));
  EXPECT_THAT(IncludedNames("#include <no_newline_at_end.h>"),
              ElementsAre(Field(&IncludedName::name, "no_newline_at_end.h")));
  EXPECT_THAT(IncludedNames(""), ElementsAre());
}

}  // namespace
}  // namespace farm::cc
