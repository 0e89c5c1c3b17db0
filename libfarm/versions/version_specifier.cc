#include "libfarm/versions/version_specifier.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/versions/dotted_version.h"

namespace farm {
namespace {

// <0, 0, >0; missing components count as 0 (PEP 440 pads releases with zeros).
int Compare(const std::vector<int>& a, const std::vector<int>& b) {
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const int x = i < a.size() ? a[i] : 0;
    const int y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

// The first `n` components of `v`, zero-padded: what "==2.27.*" compares.
bool PrefixEquals(const std::vector<int>& v, const std::vector<int>& prefix) {
  for (size_t i = 0; i < prefix.size(); ++i) {
    if ((i < v.size() ? v[i] : 0) != prefix[i]) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<int>> ReleaseOf(absl::string_view version) {
  version = absl::StripAsciiWhitespace(version);
  absl::ConsumePrefix(&version, "v");
  if (absl::StrContains(version, '!')) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", version, "' has an epoch, which version checks do not compare"));
  }
  size_t end = 0;
  while (end < version.size() && (absl::ascii_isdigit(version[end]) || version[end] == '.')) {
    ++end;
  }
  absl::string_view release = version.substr(0, end);
  while (absl::ConsumeSuffix(&release, ".")) {
  }
  auto parsed = ParseDottedVersion(release);
  if (release.empty() || !parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", version, "' does not start with a release number like 2.27.7"));
  }
  return *parsed;
}

absl::StatusOr<VersionSpecifier> VersionSpecifier::Parse(absl::string_view text) {
  VersionSpecifier out;
  out.text_ = std::string(absl::StripAsciiWhitespace(text));
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", out.text_, "\" is not a version specifier (", why,
                     "): write clauses like \">=2.27\", \">=9.10,<10\", \"==9.*\" or \"~=2.27\""));
  };
  if (out.text_.empty()) return invalid("it is empty");
  for (absl::string_view piece : absl::StrSplit(out.text_, ',')) {
    piece = absl::StripAsciiWhitespace(piece);
    Clause clause;
    for (const char* op : {"==", "!=", ">=", "<=", "~=", ">", "<"}) {
      if (absl::ConsumePrefix(&piece, op)) {
        clause.op = op;
        break;
      }
    }
    if (clause.op.empty()) return invalid(absl::StrCat("'", piece, "' has no operator"));
    piece = absl::StripAsciiWhitespace(piece);
    if (absl::ConsumeSuffix(&piece, ".*")) {
      if (clause.op != "==" && clause.op != "!=") {
        return invalid(absl::StrCat("only == and != take .*, not ", clause.op));
      }
      clause.prefix = true;
    }
    auto release = ParseDottedVersion(piece);
    if (piece.empty() || !release.ok()) {
      return invalid(absl::StrCat("'", piece, "' is not a numeric release like 2.27"));
    }
    clause.release = *release;
    if (clause.op == "~=" && clause.release.size() < 2) {
      return invalid("~= needs at least two components, e.g. ~=2.27");
    }
    out.clauses_.push_back(std::move(clause));
  }
  return out;
}

absl::StatusOr<bool> VersionSpecifier::Matches(absl::string_view version) const {
  auto v = ReleaseOf(version);
  if (!v.ok()) return v.status();
  for (const Clause& c : clauses_) {
    const int cmp = Compare(*v, c.release);
    bool ok = true;
    if (c.op == "==") {
      ok = c.prefix ? PrefixEquals(*v, c.release) : cmp == 0;
    } else if (c.op == "!=") {
      ok = c.prefix ? !PrefixEquals(*v, c.release) : cmp != 0;
    } else if (c.op == ">=") {
      ok = cmp >= 0;
    } else if (c.op == "<=") {
      ok = cmp <= 0;
    } else if (c.op == ">") {
      ok = cmp > 0;
    } else if (c.op == "<") {
      ok = cmp < 0;
    } else {  // ~=X.Y.Z: >= X.Y.Z and == X.Y.*
      const std::vector<int> prefix(c.release.begin(), c.release.end() - 1);
      ok = cmp >= 0 && PrefixEquals(*v, prefix);
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace farm
