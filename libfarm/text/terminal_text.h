// Text from builds (logs, compiler stderr, failure reasons) shown in a terminal or a page.
// A build can print anything, and a terminal obeys what it prints: ESC sequences retitle
// the window, clear the screen, or (OSC 52) write the user's clipboard. Before such text
// is shown, every control character is made visible instead: "\x1b" for C0 controls and
// DEL, "\u009b" for C1 controls and the bidirectional overrides that reorder what is seen,
// "\xNN" for bytes that are not UTF-8. Newline and tab stay; so does a carriage return
// right before a newline (CRLF line ends). Backslashes are left alone: this is for reading,
// not a reversible encoding.
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace farm {

// The whole of `text`, escaped.
std::string EscapeTerminalText(absl::string_view text);

// The same over a stream of chunks (a followed log): a UTF-8 character or a CRLF split
// between two chunks is escaped as if it had arrived whole.
class TerminalTextEscaper {
 public:
  // The escaped text of `chunk`, less a possibly incomplete end kept for the next call.
  std::string Feed(absl::string_view chunk);
  // What is still kept, escaped: call at the end of the stream.
  std::string Finish();

 private:
  std::string pending_;
};

}  // namespace farm
