// PEP 691 content negotiation for the simple API: which of HTML and JSON a client gets,
// from its Accept header and q-values.
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace farm::coordinator {

enum class SimpleFormat { kHtml, kJson, kNotAcceptable };

struct NegotiatedFormat {
  SimpleFormat format = SimpleFormat::kHtml;
  // The concrete type to answer with: the one the client named ("text/html" or
  // "application/vnd.pypi.simple.v1+html"), never "latest".
  std::string content_type;
};

// No Accept header, or "*/*", means HTML (what browsers and old pips expect). Among the
// types the client accepts the highest q wins; on a tie JSON wins, as it is the format
// clients that name both prefer. Nothing acceptable: kNotAcceptable (answer 406).
NegotiatedFormat NegotiateSimpleFormat(absl::string_view accept_header);

}  // namespace farm::coordinator
