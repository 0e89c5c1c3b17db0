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

// Whether IncludedNames says `text` may look a header up by a name it cannot read.
bool Unread(absl::string_view text) {
  bool unread = false;
  IncludedNames(text, &unread);
  return unread;
}

TEST(IncludedNamesTest, ANameAMacroMakesIsUnread) {
  EXPECT_FALSE(Unread("#include <vector>\n#include_next \"x.h\"\n#if __has_include(<y>)\n"));
  EXPECT_TRUE(Unread("#define H \"lib.h\"\n#include H\n"));
  EXPECT_TRUE(Unread("#include_next NEXT\n"));
  EXPECT_TRUE(Unread("#include \\\n  \"spliced.h\"\n"));
  EXPECT_TRUE(Unread("#if __has_include(HEADER)\n#endif\n"));
  EXPECT_TRUE(Unread("#embed \"data.bin\"\n"));
  EXPECT_TRUE(Unread("#pragma GCC dependency \"parse.y\"\n"));
}

TEST(IncludedNamesTest, ADirectiveSpelledOddlyIsUnread) {
  EXPECT_TRUE(Unread("#\\\ninclude <a.h>\n"));
  EXPECT_TRUE(Unread("  %:include <a.h>\n"));
  EXPECT_TRUE(Unread("?\?=include <a.h>\n"));
  // Not a directive: a '#' or "%:" inside a line.
  EXPECT_FALSE(Unread("x #include MACRO\nprintf(\"%d%:\", 1);\n"));
}

TEST(IncludedNamesTest, CommentsLookNothingUpAndHideNoDirective) {
  EXPECT_FALSE(Unread("// the form `#include MACRO` and __has_include(NAME)\nint x;\n"));
  EXPECT_FALSE(Unread("/*\n * ?\?= and __has_include(X)\n */\n#include \"a.h\"\n"));
  EXPECT_TRUE(Unread("/*\n#include MACRO */ #include MACRO\n"));
  // A comment that hides a directive's shape: the directive is read without it.
  bool unread = false;
  EXPECT_THAT(
      IncludedNames("# /* c */ include <hidden.h>\n/* c */ #include \"after.h\"\n", &unread),
      ElementsAre(Field(&IncludedName::name, "hidden.h"), Field(&IncludedName::name, "after.h")));
  EXPECT_FALSE(unread);
  // A literal is read as code: rare, and the compiler's scan then decides.
  EXPECT_TRUE(Unread("const char* s = \"__has_include(X)\";\n"));
}

TEST(IncludedNamesTest, AWrapperNamedForItsProbeIsReadThroughItsUses) {
  // fmt's and glibc's wrappers, then their uses.
  const std::string fmt =
      "#ifdef __has_include\n#  define FMT_HAS_INCLUDE(x) __has_include(x)\n#else\n"
      "#  define FMT_HAS_INCLUDE(x) 0\n#endif\n#if FMT_HAS_INCLUDE(<string_view>)\n#endif\n";
  bool unread = false;
  EXPECT_THAT(IncludedNames(fmt, &unread), ElementsAre(Field(&IncludedName::name, "string_view")));
  EXPECT_FALSE(unread);
  EXPECT_TRUE(IncludedNames(fmt)[0].probe);
  EXPECT_FALSE(
      Unread("# define __glibc_has_include __has_include\n"
             "#if __glibc_has_include (<sys/x.h>)\n#endif\n"));
  // A definition spliced over two lines.
  EXPECT_FALSE(Unread("#define MY_HAS_INCLUDE(h) \\\n  __has_include(h)\n"));
  // A wrapper whose name does not say so: its uses cannot be found by name.
  EXPECT_TRUE(Unread("#define HAVE_HEADER(x) __has_include(x)\n"));
  EXPECT_TRUE(Unread("#define PROBE __has_include\n"));
  EXPECT_TRUE(Unread("#if FMT_HAS_INCLUDE(HEADER)\n#endif\n"));
}

}  // namespace
}  // namespace farm::cc
