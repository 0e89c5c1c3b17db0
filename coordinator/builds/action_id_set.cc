#include "coordinator/builds/action_id_set.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace farm::coordinator {
namespace {

constexpr char kPacked = '\0';
constexpr char kAsGiven = '\1';
constexpr size_t kSchedulerIdDigits = 24;

bool IsSchedulerId(absl::string_view id) {
  if (id.size() != kSchedulerIdDigits) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

std::string ActionIdSet::Encode(absl::string_view id) {
  if (IsSchedulerId(id))
    return absl::StrCat(absl::string_view(&kPacked, 1), absl::HexStringToBytes(id));
  return absl::StrCat(absl::string_view(&kAsGiven, 1), id);
}

std::string ActionIdSet::Decode(const std::string& held) {
  const absl::string_view rest = absl::string_view(held).substr(1);
  return held.front() == kPacked ? absl::BytesToHexString(rest) : std::string(rest);
}

bool ActionIdSet::Insert(absl::string_view id) { return held_.insert(Encode(id)).second; }

bool ActionIdSet::Erase(absl::string_view id) { return held_.erase(Encode(id)) > 0; }

bool ActionIdSet::Contains(absl::string_view id) const { return held_.contains(Encode(id)); }

}  // namespace farm::coordinator
