#include "coordinator/index/simple_format.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace farm::coordinator {
namespace {

constexpr char kJsonV1[] = "application/vnd.pypi.simple.v1+json";
constexpr char kHtmlV1[] = "application/vnd.pypi.simple.v1+html";

struct Candidate {
  NegotiatedFormat answer;
  double q = -1;         // best q the client gave this answer; -1: not accepted
  int specificity = -1;  // exact type beats "text/*" beats "*/*" for the same answer
};

void Offer(Candidate& c, double q, int specificity) {
  // A more specific range decides the q for a type (RFC 9110 12.5.1).
  if (specificity > c.specificity || (specificity == c.specificity && q > c.q)) {
    c.q = q;
    c.specificity = specificity;
  }
}

}  // namespace

NegotiatedFormat NegotiateSimpleFormat(absl::string_view accept_header) {
  if (absl::StripAsciiWhitespace(accept_header).empty()) {
    return {SimpleFormat::kHtml, "text/html; charset=utf-8"};
  }
  Candidate json{{SimpleFormat::kJson, kJsonV1}};
  Candidate html_v1{{SimpleFormat::kHtml, kHtmlV1}};
  Candidate text_html{{SimpleFormat::kHtml, "text/html; charset=utf-8"}};
  for (absl::string_view range : absl::StrSplit(accept_header, ',')) {
    std::vector<absl::string_view> params = absl::StrSplit(range, ';');
    const std::string type = absl::AsciiStrToLower(absl::StripAsciiWhitespace(params[0]));
    double q = 1.0;
    for (size_t i = 1; i < params.size(); ++i) {
      absl::string_view p = absl::StripAsciiWhitespace(params[i]);
      if (absl::ConsumePrefix(&p, "q=") || absl::ConsumePrefix(&p, "Q=")) {
        if (!absl::SimpleAtod(p, &q)) q = 0;
      }
    }
    if (type == kJsonV1 || type == "application/vnd.pypi.simple.latest+json") {
      Offer(json, q, 3);
    } else if (type == kHtmlV1 || type == "application/vnd.pypi.simple.latest+html") {
      Offer(html_v1, q, 3);
    } else if (type == "text/html") {
      Offer(text_html, q, 3);
    } else if (type == "text/*") {
      Offer(text_html, q, 2);
    } else if (type == "application/*") {
      Offer(json, q, 2);
      Offer(html_v1, q, 2);
    } else if (type == "*/*") {
      Offer(text_html, q, 1);
      // */* alone (curl, browsers) means HTML; JSON must be asked for by name.
    }
  }
  const Candidate* best = nullptr;
  for (const Candidate* c : {&json, &html_v1, &text_html}) {
    if (c->q <= 0) continue;
    if (best == nullptr || c->q > best->q) best = c;
  }
  if (best == nullptr) return {SimpleFormat::kNotAcceptable, ""};
  return best->answer;
}

}  // namespace farm::coordinator
