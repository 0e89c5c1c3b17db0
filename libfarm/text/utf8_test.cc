#include "libfarm/text/utf8.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(Utf8Test, ValidTextIsKeptAsItIs) {
  const std::string text =
      "gcc: \xe2\x80\x98x\xe2\x80\x99 \xc3\xa9t\xc3\xa9 \xf0\x9f\x94\xa5 \x1b[0m\n";
  EXPECT_TRUE(IsValidUtf8(text));
  EXPECT_EQ(ValidUtf8OrEscaped(text), text);
  EXPECT_EQ(ValidUtf8OrEscaped(""), "");
  EXPECT_EQ(ValidUtf8OrEscaped(std::string("a\0b", 3)), std::string("a\0b", 3));
}

TEST(Utf8Test, BytesThatAreNotUtf8AreEscapedAndTheRestKept) {
  EXPECT_FALSE(IsValidUtf8(">=3.8\xff"));
  EXPECT_EQ(ValidUtf8OrEscaped(">=3.8\xff"), ">=3.8\\xff");
  // Latin-1 "café.py", a character cut at either end, an overlong '/', a surrogate.
  EXPECT_EQ(ValidUtf8OrEscaped("caf\xe9.py"), "caf\\xe9.py");
  EXPECT_EQ(ValidUtf8OrEscaped("\x98x \xe2\x80"), "\\x98x \\xe2\\x80");
  EXPECT_EQ(ValidUtf8OrEscaped("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(ValidUtf8OrEscaped("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(ValidUtf8OrEscaped("\xff\xc3\xa9"), "\\xff\xc3\xa9");
  EXPECT_EQ(FirstInvalidUtf8("ab\xc3\xa9\xff"), 4u);
  EXPECT_TRUE(IsValidUtf8(ValidUtf8OrEscaped("\xfe\xff\x80")));
}

TEST(Utf8Test, APrefixNeverEndsInsideACharacter) {
  const std::string text = "a\xe2\x80\x98x";
  EXPECT_EQ(Utf8Prefix(text, 100), text);
  EXPECT_EQ(Utf8Prefix(text, 5), text.substr(0, 5));
  EXPECT_EQ(Utf8Prefix(text, 4), "a\xe2\x80\x98");
  EXPECT_EQ(Utf8Prefix(text, 3), "a");
  EXPECT_EQ(Utf8Prefix(text, 2), "a");
  EXPECT_EQ(Utf8Prefix(text, 1), "a");
  EXPECT_EQ(Utf8Prefix("abc", 2), "ab");
}

TEST(Utf8Test, ATailNeverStartsInsideACharacter) {
  // gcc's quotes are three bytes: a 4-byte cut through the first leaves two of them.
  const std::string text = "\xe2\x80\x98x\xe2\x80\x99";
  EXPECT_EQ(Utf8Tail(text, 100), text);
  EXPECT_EQ(Utf8Tail(text, 5), "x\xe2\x80\x99");
  EXPECT_EQ(Utf8Tail(text, 4), "x\xe2\x80\x99");
  EXPECT_EQ(Utf8Tail(text, 2), "");
  EXPECT_EQ(Utf8Tail("abc", 2), "bc");
}

}  // namespace
}  // namespace farm
