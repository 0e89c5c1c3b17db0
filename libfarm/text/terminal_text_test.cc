#include "libfarm/text/terminal_text.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(EscapeTerminalTextTest, LeavesPrintableTextNewlinesTabsAndUtf8Alone) {
  const std::string text =
      "k.cu(3): error: identifier \xe2\x80\x98x\xe2\x80\x99 is undefined\n\tat \xc3\xa9t\xc3\xa9 "
      "\xf0\x9f\x94\xa5 C:\\path\\x1b\r\n";
  EXPECT_EQ(EscapeTerminalText(text), text);
}

TEST(EscapeTerminalTextTest, MakesTheProbesEscapesVisible) {
  // Window title, clear screen, OSC 52 clipboard write (BEL and ST terminated).
  EXPECT_EQ(EscapeTerminalText("\x1b]0;owned\x07"), "\\x1b]0;owned\\x07");
  EXPECT_EQ(EscapeTerminalText("\x1b[2J\x1b[H"), "\\x1b[2J\\x1b[H");
  EXPECT_EQ(EscapeTerminalText("\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x1b\\"),
            "\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x1b\\");
}

TEST(EscapeTerminalTextTest, EscapesEveryOtherControlCharacter) {
  EXPECT_EQ(EscapeTerminalText(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(EscapeTerminalText("\x01\x08\x0b\x0c\x1f\x7f"), "\\x01\\x08\\x0b\\x0c\\x1f\\x7f");
  // A lone CR would let a line overwrite what came before it.
  EXPECT_EQ(EscapeTerminalText("safe\rhidden\r"), "safe\\rhidden\\r");
  // C1 CSI (U+009B) is a control to some terminals; bidi overrides reorder what is seen.
  EXPECT_EQ(EscapeTerminalText("\xc2\x9b"
                               "2J"),
            "\\u009b2J");
  EXPECT_EQ(EscapeTerminalText("x\xe2\x80\xaey\xe2\x81\xa6z"), "x\\u202ey\\u2066z");
}

TEST(EscapeTerminalTextTest, EscapesBytesThatAreNotUtf8) {
  EXPECT_EQ(EscapeTerminalText("\x9b"
                               "2J"),
            "\\x9b2J");
  EXPECT_EQ(EscapeTerminalText("\xff\xc3"), "\\xff\\xc3");
  EXPECT_EQ(EscapeTerminalText("\xc0\xaf"), "\\xc0\\xaf");           // overlong "/"
  EXPECT_EQ(EscapeTerminalText("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(EscapeTerminalText("\xe2\x28\xa1"), "\\xe2(\\xa1");
}

TEST(TerminalTextEscaperTest, ChunksSplittingACharacterOrACrlfGiveTheWholeTextsResult) {
  const std::string text = "caf\xc3\xa9\r\n\x1b[31m\xf0\x9f\x94\xa5 done\r";
  for (size_t split = 0; split <= text.size(); ++split) {
    TerminalTextEscaper escaper;
    std::string out = escaper.Feed(text.substr(0, split));
    out += escaper.Feed(text.substr(split));
    out += escaper.Finish();
    EXPECT_EQ(out, EscapeTerminalText(text)) << "split at " << split;
  }
  TerminalTextEscaper byte_at_a_time;
  std::string out;
  for (char c : text) out += byte_at_a_time.Feed(std::string(1, c));
  out += byte_at_a_time.Finish();
  EXPECT_EQ(out, "caf\xc3\xa9\r\n\\x1b[31m\xf0\x9f\x94\xa5 done\\r");
}

TEST(TerminalTextEscaperTest, DoesNotHoldBackInvalidBytes) {
  TerminalTextEscaper escaper;
  EXPECT_EQ(escaper.Feed("a\xff"), "a\\xff");
  EXPECT_EQ(escaper.Feed("\xe2\x80"), "");
  EXPECT_EQ(escaper.Finish(), "\\xe2\\x80");
}

}  // namespace
}  // namespace farm
