// A set of action ids that stays small when large: a build remembers each of its finished
// actions by id for as long as the action's record is kept (up to --max-finished-actions
// farm-wide, 100,000 by default).
#pragma once

#include <string>

#include "absl/container/btree_set.h"
#include "absl/strings/string_view.h"

namespace farm::coordinator {

class ActionIdSet {
 public:
  // True when `id` was not in the set.
  bool Insert(absl::string_view id);
  // True when `id` was in the set.
  bool Erase(absl::string_view id);
  bool Contains(absl::string_view id) const;
  bool empty() const { return held_.empty(); }
  size_t size() const { return held_.size(); }
  // Calls visit(const std::string& id) for every id, in no promised order.
  template <typename Visit>
  void ForEach(Visit visit) const {
    for (const std::string& held : held_) visit(Decode(held));
  }

 private:
  // The scheduler's ids (24 lowercase hex digits) are held as a tag and their 12 bytes, short
  // enough to fit inside a std::string without a heap block of its own; in a B-tree that is
  // about 40 bytes an id, against about 110 in a std::set of the ids as given. Any other id is
  // held as given, behind another tag.
  static std::string Encode(absl::string_view id);
  static std::string Decode(const std::string& held);

  absl::btree_set<std::string> held_;
};

}  // namespace farm::coordinator
