#include "libfarm/cuda/arch_list.h"

#include <algorithm>
#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace farm {
namespace {

struct SmSupport {
  int sm;
  ToolkitVersion first;                   // first toolkit compiling for the generic target
  std::optional<ToolkitVersion> last;     // last toolkit that still does; nullopt: current
  std::optional<ToolkitVersion> first_a;  // first toolkit with the `a` variant, if any
  std::optional<ToolkitVersion> first_f;  // first toolkit with the `f` variant, if any
  int renamed_to = 0;                     // the SM's later name, when it was renamed
};

// From NVIDIA's release notes and `nvcc --list-gpu-code` (CUDA 12.8-13.0):
// 12.8 brought sm_100/120 (and their `a` targets), 12.9 sm_103/121 and the `f` family
// targets, 13.0 renamed sm_101 to sm_110, added sm_88 and dropped everything below sm_75.
constexpr ToolkitVersion kCuda12_9{12, 9};
constexpr std::array<SmSupport, 21> kSms{{
    {50, {6, 0}, kCuda12_9, {}, {}, 0},
    {52, {6, 5}, kCuda12_9, {}, {}, 0},
    {53, {7, 0}, kCuda12_9, {}, {}, 0},
    {60, {8, 0}, kCuda12_9, {}, {}, 0},
    {61, {8, 0}, kCuda12_9, {}, {}, 0},
    {62, {8, 0}, kCuda12_9, {}, {}, 0},
    {70, {9, 0}, kCuda12_9, {}, {}, 0},
    {72, {10, 0}, kCuda12_9, {}, {}, 0},
    {75, {10, 0}, {}, {}, {}, 0},
    {80, {11, 0}, {}, {}, {}, 0},
    {86, {11, 1}, {}, {}, {}, 0},
    {87, {11, 4}, {}, {}, {}, 0},
    {88, {13, 0}, {}, {}, {}, 0},
    {89, {11, 8}, {}, {}, {}, 0},
    {90, {11, 8}, {}, ToolkitVersion{12, 0}, {}, 0},
    {100, {12, 8}, {}, ToolkitVersion{12, 8}, kCuda12_9, 0},
    {101, {12, 8}, kCuda12_9, ToolkitVersion{12, 8}, kCuda12_9, 110},
    {103, {12, 9}, {}, kCuda12_9, kCuda12_9, 0},
    {110, {13, 0}, {}, ToolkitVersion{13, 0}, ToolkitVersion{13, 0}, 0},
    {120, {12, 8}, {}, ToolkitVersion{12, 8}, kCuda12_9, 0},
    {121, {12, 9}, {}, kCuda12_9, kCuda12_9, 0},
}};

const SmSupport* FindSm(int sm) {
  for (const SmSupport& s : kSms) {
    if (s.sm == sm) return &s;
  }
  return nullptr;
}

std::string Dotted(int sm) { return absl::StrCat(sm / 10, ".", sm % 10); }

absl::Status UnknownArch(absl::string_view item, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("unknown CUDA arch \"", item, "\"", why,
                                                 ": valid archs are ", ValidArchsDescription()));
}

}  // namespace

std::string CudaTarget::Suffix() const {
  switch (variant) {
    case ArchVariant::kArchSpecific:
      return "a";
    case ArchVariant::kFamily:
      return "f";
    case ArchVariant::kGeneric:
      break;
  }
  return "";
}

std::string CudaTarget::SmName() const { return absl::StrCat("sm_", sm, Suffix()); }
std::string CudaTarget::ComputeName() const { return absl::StrCat("compute_", sm, Suffix()); }
std::string CudaTarget::DottedName() const { return absl::StrCat(Dotted(sm), Suffix()); }

std::string ArchList::ToString() const {
  std::vector<std::string> items;
  for (const ArchRequest& r : requests) {
    items.push_back(absl::StrCat(r.target.DottedName(), r.ptx ? "+PTX" : ""));
  }
  return absl::StrJoin(items, ";");
}

std::string ToolkitVersion::ToString() const { return absl::StrCat(major, ".", minor); }

absl::StatusOr<ToolkitVersion> ParseToolkitVersion(absl::string_view text) {
  absl::string_view rest = absl::StripAsciiWhitespace(text);
  absl::ConsumePrefix(&rest, "V");
  std::vector<absl::string_view> parts = absl::StrSplit(rest, '.');
  ToolkitVersion version;
  if (parts.size() < 2 || !absl::SimpleAtoi(parts[0], &version.major) ||
      !absl::SimpleAtoi(parts[1], &version.minor) || version.major < 0 || version.minor < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad CUDA toolkit version \"", text, "\": expected MAJOR.MINOR, e.g. 13.0"));
  }
  return version;
}

std::vector<int> KnownSms() {
  std::vector<int> sms;
  for (const SmSupport& s : kSms) sms.push_back(s.sm);
  return sms;
}

bool IsKnownTarget(const CudaTarget& target) {
  const SmSupport* s = FindSm(target.sm);
  if (s == nullptr) return false;
  switch (target.variant) {
    case ArchVariant::kGeneric:
      return true;
    case ArchVariant::kArchSpecific:
      return s->first_a.has_value();
    case ArchVariant::kFamily:
      return s->first_f.has_value();
  }
  return false;
}

std::string ValidArchsDescription() {
  std::vector<std::string> all, with_a, with_f;
  for (const SmSupport& s : kSms) {
    all.push_back(Dotted(s.sm));
    if (s.first_a) with_a.push_back(Dotted(s.sm));
    if (s.first_f) with_f.push_back(Dotted(s.sm));
  }
  return absl::StrCat(absl::StrJoin(all, " "), " (suffix a: ", absl::StrJoin(with_a, " "),
                      "; suffix f: ", absl::StrJoin(with_f, " "),
                      "; also written sm_XX or XX, optionally followed by +PTX)");
}

absl::StatusOr<ArchRequest> ParseArchItem(absl::string_view item) {
  absl::string_view rest = absl::StripAsciiWhitespace(item);
  ArchRequest request;
  // "+PTX" in any case.
  if (rest.size() > 4 && absl::EqualsIgnoreCase(rest.substr(rest.size() - 4), "+ptx")) {
    request.ptx = true;
    rest.remove_suffix(4);
  }
  std::string lower = absl::AsciiStrToLower(rest);
  absl::string_view body = lower;
  const bool sm_prefixed = absl::ConsumePrefix(&body, "sm_");
  if (!body.empty() && (body.back() == 'a' || body.back() == 'f')) {
    request.target.variant = body.back() == 'a' ? ArchVariant::kArchSpecific : ArchVariant::kFamily;
    body.remove_suffix(1);
  }
  const size_t dot = body.find('.');
  if (dot != absl::string_view::npos) {
    int major = 0, minor = 0;
    if (sm_prefixed || !absl::SimpleAtoi(body.substr(0, dot), &major) ||
        body.substr(dot + 1).size() != 1 || !absl::SimpleAtoi(body.substr(dot + 1), &minor) ||
        major <= 0 || major > 999 || minor < 0) {
      // The bound keeps major * 10 from overflowing; no real arch comes near it.
      return UnknownArch(item, "");
    }
    request.target.sm = major * 10 + minor;
  } else {
    if (body.empty() || !std::all_of(body.begin(), body.end(), absl::ascii_isdigit) ||
        !absl::SimpleAtoi(body, &request.target.sm)) {
      return UnknownArch(item, "");
    }
  }
  const SmSupport* s = FindSm(request.target.sm);
  if (s == nullptr) return UnknownArch(item, "");
  if (!IsKnownTarget(request.target)) {
    return UnknownArch(item, absl::StrCat(" (", Dotted(s->sm), " has no \"",
                                          request.target.Suffix(), "\" variant)"));
  }
  return request;
}

absl::StatusOr<ArchList> ParseArchList(absl::string_view text) {
  std::string cleaned(text);
  // Shells and config files hand us the list still wrapped in quotes.
  cleaned.erase(
      std::remove_if(cleaned.begin(), cleaned.end(), [](char c) { return c == '"' || c == '\''; }),
      cleaned.end());
  ArchList list;
  for (absl::string_view item :
       absl::StrSplit(cleaned, absl::ByAnyChar("; ,\t\n"), absl::SkipWhitespace())) {
    auto request = ParseArchItem(item);
    if (!request.ok()) return request.status();
    auto same = std::find_if(list.requests.begin(), list.requests.end(),
                             [&](const ArchRequest& r) { return r.target == request->target; });
    if (same != list.requests.end()) {
      same->ptx = same->ptx || request->ptx;
    } else {
      list.requests.push_back(*request);
    }
  }
  if (list.requests.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("empty CUDA arch list: give one or more of ", ValidArchsDescription()));
  }
  std::sort(list.requests.begin(), list.requests.end());
  return list;
}

std::optional<ToolkitVersion> MinimumToolkit(const CudaTarget& target) {
  if (!IsKnownTarget(target)) return std::nullopt;
  const SmSupport* s = FindSm(target.sm);
  switch (target.variant) {
    case ArchVariant::kGeneric:
      return s->first;
    case ArchVariant::kArchSpecific:
      return s->first_a;
    case ArchVariant::kFamily:
      return s->first_f;
  }
  return std::nullopt;
}

absl::Status CheckToolkitSupports(const CudaTarget& target, const ToolkitVersion& version) {
  const auto minimum = MinimumToolkit(target);
  if (!minimum) return UnknownArch(target.SmName(), "");
  const SmSupport* s = FindSm(target.sm);
  if (version < *minimum) {
    return absl::FailedPreconditionError(
        absl::StrCat(target.SmName(), " needs CUDA ", minimum->ToString(), " or newer; toolkit ",
                     version.ToString(), " cannot compile for it"));
  }
  if (s->last && *s->last < version) {
    if (s->renamed_to != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat(target.SmName(), " was renamed sm_", s->renamed_to, target.Suffix(),
                       " after CUDA ", s->last->ToString(), "; with toolkit ", version.ToString(),
                       " ask for ", Dotted(s->renamed_to), target.Suffix(), " instead"));
    }
    return absl::FailedPreconditionError(
        absl::StrCat(target.SmName(), " was dropped after CUDA ", s->last->ToString(), "; toolkit ",
                     version.ToString(), " cannot compile for it (use CUDA ", minimum->ToString(),
                     " to ", s->last->ToString(), ")"));
  }
  return absl::OkStatus();
}

}  // namespace farm
