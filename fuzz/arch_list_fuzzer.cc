// libFuzzer target: the arch-list parser shared with `farmctl submit`.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "libfarm/cuda/arch_list.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto list = farm::ParseArchList(text);
  if (list.ok()) {
    // Normalisation is stable: printing and re-parsing gives the same list.
    auto again = farm::ParseArchList(list->ToString());
    if (!again.ok() || again->ToString() != list->ToString()) std::abort();
    for (const farm::ArchRequest& r : list->requests) {
      (void)farm::CheckToolkitSupports(r.target, {13, 0});
    }
  }
  (void)farm::ParseToolkitVersion(text);
  return 0;
}
