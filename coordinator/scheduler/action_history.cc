#include "coordinator/scheduler/action_history.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace farm::coordinator {
namespace {

// Weight of the newest run in the moving average: a TU that changed shows within a few runs.
constexpr double kNewRunWeight = 0.5;
// The peak RAM kept decays towards smaller new runs this fast, and never below the newest.
constexpr double kPeakDecay = 0.75;
// Before anything is learnt: one second of compile per 64 KiB of input (a preprocessed TU of
// a few MB then expects about a minute); only the order among unknown actions depends on it.
constexpr double kDefaultSecondsPerByte = 1.0 / (64 * 1024);

// A scope never holds a newline (a role, a token id, a package name), so the first one splits.
std::string ScopedKey(const std::string& scope, const std::string& history_key) {
  return absl::StrCat(scope, "\n", history_key);
}

}  // namespace

uint64_t InputBytes(const farm::v1::Action& action) {
  uint64_t bytes = 0;
  for (const auto& in : action.inputs()) bytes += static_cast<uint64_t>(in.digest().size_bytes());
  return bytes;
}

absl::Status ActionHistory::Load(const StateStore& store) {
  return store.ForEach(Table::kActionHistory,
                       [&](const std::string& key, const std::string& value) {
                         farm::v1::ActionHistory history;
                         // A record that does not parse only costs an estimate: learnt again.
                         if (history.ParseFromString(value)) Keep(key, history);
                         return absl::OkStatus();
                       });
}

const farm::v1::ActionHistory* ActionHistory::Find(const std::vector<std::string>& scopes,
                                                   const std::string& history_key) const {
  if (history_key.empty()) return nullptr;
  for (const std::string& scope : scopes) {
    if (auto it = by_key_.find(ScopedKey(scope, history_key)); it != by_key_.end()) {
      return &it->second;
    }
  }
  return nullptr;
}

ExpectedCost ActionHistory::Expect(const farm::v1::Action& action,
                                   const std::vector<std::string>& scopes) const {
  ExpectedCost cost;
  if (const farm::v1::ActionHistory* history = Find(scopes, action.history_key())) {
    cost.seconds = history->expected_seconds();
    cost.peak_ram_bytes = history->peak_rss_bytes();
    cost.learnt = true;
  } else if (action.expected_seconds() > 0) {
    // Nothing learnt: the launcher's hint (a recipe's cost hints), checked on submit.
    cost.seconds = action.expected_seconds();
  } else {
    const double rate =
        learnt_input_bytes_ > 0 ? learnt_seconds_ / learnt_input_bytes_ : kDefaultSecondsPerByte;
    cost.seconds = rate * static_cast<double>(InputBytes(action));
  }
  cost.peak_ram_bytes = std::max(cost.peak_ram_bytes, action.requirements().min_ram_bytes());
  return cost;
}

double ActionHistory::LearntSeconds(const std::vector<std::string>& scopes,
                                    const std::string& history_key) const {
  const farm::v1::ActionHistory* history = Find(scopes, history_key);
  return history == nullptr ? 0 : history->expected_seconds();
}

void ActionHistory::Learn(const farm::v1::Action& action, const std::string& scope,
                          const farm::v1::ActionResult& result, StateBatch& batch) {
  if (result.exit_code() != 0 || result.cache_hit() || result.wall_seconds() <= 0) return;
  if (const uint64_t input = InputBytes(action); input > 0) {
    learnt_seconds_ += result.wall_seconds();
    learnt_input_bytes_ += static_cast<double>(input);
  }
  if (action.history_key().empty() || scope.empty()) return;
  const std::string key = ScopedKey(scope, action.history_key());
  farm::v1::ActionHistory history;
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    const farm::v1::ActionHistory& old = it->second;
    history.set_expected_seconds(kNewRunWeight * result.wall_seconds() +
                                 (1 - kNewRunWeight) * old.expected_seconds());
    history.set_peak_rss_bytes(
        std::max(result.peak_rss_bytes(),
                 static_cast<uint64_t>(kPeakDecay * static_cast<double>(old.peak_rss_bytes()))));
    history.set_samples(old.samples() + 1);
  } else {
    history.set_expected_seconds(result.wall_seconds());
    history.set_peak_rss_bytes(result.peak_rss_bytes());
    history.set_samples(1);
  }
  batch.Put(Table::kActionHistory, key, history);
  Keep(key, history);
}

void ActionHistory::Keep(const std::string& key, const farm::v1::ActionHistory& history) {
  if (auto age = age_by_key_.find(key); age != age_by_key_.end()) {
    key_by_age_.erase(age->second);
    age_by_key_.erase(age);
  }
  by_key_[key] = history;
  key_by_age_[next_age_] = key;
  age_by_key_[key] = next_age_++;
  while (by_key_.size() > max_keys_ && !key_by_age_.empty()) {
    auto oldest = key_by_age_.begin();
    by_key_.erase(oldest->second);
    age_by_key_.erase(oldest->second);
    key_by_age_.erase(oldest);
  }
}

}  // namespace farm::coordinator
