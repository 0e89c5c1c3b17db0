#include "libfarm/cuda/arch_set_label.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace farm {
namespace {

std::vector<std::string> Segments(const ArchList& archs) {
  std::vector<std::string> out;
  for (const ArchRequest& r : archs.requests) {
    out.push_back(absl::StrCat("sm", r.target.sm, r.target.Suffix()));
    if (r.ptx) out.push_back(absl::StrCat("compute", r.target.sm, r.target.Suffix()));
  }
  return out;
}

bool IsDigit(char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); }

// "sm90a" -> its target: digits without a leading zero, then at most an "a" or "f".
absl::StatusOr<CudaTarget> SegmentTarget(absl::string_view segment, absl::string_view body) {
  absl::string_view digits = body;
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) digits.remove_suffix(1);
  if (digits.empty() || digits[0] == '0' || !std::all_of(digits.begin(), digits.end(), IsDigit)) {
    return absl::InvalidArgumentError(absl::StrCat("\"", segment, "\" is not an SM"));
  }
  auto item = ParseArchItem(body);
  if (!item.ok() || item->ptx) {
    return absl::InvalidArgumentError(absl::StrCat("\"", segment, "\" is not a known SM"));
  }
  return item->target;
}

std::vector<absl::string_view> LocalSegments(absl::string_view local) {
  return absl::StrSplit(local, absl::ByAnyChar(".-_"));
}

}  // namespace

std::string ArchSetLabel(const ArchList& archs) { return absl::StrJoin(Segments(archs), "."); }

std::string ArchSetName(const ArchList& archs) { return absl::StrJoin(Segments(archs), "-"); }

std::string FarmLocalLabel(const ToolkitVersion& cuda, const ArchList& archs) {
  std::string label = absl::StrCat("cu", cuda.major, cuda.minor);
  if (!archs.requests.empty()) absl::StrAppend(&label, ".", ArchSetLabel(archs));
  return label;
}

std::string WithFarmLocalLabel(absl::string_view version, const ToolkitVersion& cuda,
                               const ArchList& archs) {
  const absl::string_view public_part = version.substr(0, version.find('+'));
  return absl::StrCat(public_part, "+", FarmLocalLabel(cuda, archs));
}

absl::StatusOr<ArchList> ParseArchSetName(absl::string_view name) {
  ArchList list;
  std::vector<CudaTarget> ptx;
  for (absl::string_view segment : absl::StrSplit(name, '-')) {
    absl::string_view body = segment;
    const bool is_ptx = absl::ConsumePrefix(&body, "compute");
    if (!is_ptx && !absl::ConsumePrefix(&body, "sm")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"", segment, "\" in arch set \"", name,
          "\" is neither smXY nor computeXY. Fix: name the set as the farm does, e.g. sm75-sm90 "
          "or sm80-compute80"));
    }
    auto target = SegmentTarget(segment, body);
    if (!target.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("arch set \"", name,
                                                     "\": ", target.status().message(),
                                                     ". Fix: use SMs the farm knows, e.g. sm75"));
    }
    if (is_ptx) {
      ptx.push_back(*target);
      continue;
    }
    if (std::any_of(list.requests.begin(), list.requests.end(),
                    [&](const ArchRequest& r) { return r.target == *target; })) {
      return absl::InvalidArgumentError(
          absl::StrCat("arch set \"", name, "\" names ", segment, " twice"));
    }
    list.requests.push_back({.target = *target});
  }
  for (const CudaTarget& t : ptx) {
    auto sass = std::find_if(list.requests.begin(), list.requests.end(),
                             [&](const ArchRequest& r) { return r.target == t; });
    if (sass == list.requests.end() || sass->ptx) {
      return absl::InvalidArgumentError(absl::StrCat(
          "arch set \"", name, "\": compute", t.sm, t.Suffix(), " needs sm", t.sm, t.Suffix(),
          " beside it, once (the farm builds PTX only with its SASS, as 8.0+PTX)"));
    }
    sass->ptx = true;
  }
  std::sort(list.requests.begin(), list.requests.end());
  return list;
}

std::optional<std::string> ArchSetNameOfVersion(absl::string_view version) {
  const size_t plus = version.find('+');
  if (plus == absl::string_view::npos) return std::nullopt;
  const std::string local = absl::AsciiStrToLower(version.substr(plus + 1));
  std::vector<absl::string_view> segments = LocalSegments(local);
  if (segments.size() < 2) return std::nullopt;
  absl::string_view cuda = segments[0];
  if (!absl::ConsumePrefix(&cuda, "cu") || cuda.size() < 2 ||
      !std::all_of(cuda.begin(), cuda.end(), IsDigit)) {
    return std::nullopt;
  }
  const std::string name = absl::StrJoin(segments.begin() + 1, segments.end(), "-");
  auto archs = ParseArchSetName(name);
  if (!archs.ok() || ArchSetName(*archs) != name) return std::nullopt;
  return name;
}

}  // namespace farm
