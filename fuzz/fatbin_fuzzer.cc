// libFuzzer target: fat-binary containers and entry payload decompression.
#include <cstddef>
#include <cstdint>

#include "libfarm/fatbin/entry_payload.h"
#include "libfarm/fatbin/fatbin_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto containers = farm::ReadFatbinContainers(farm::ByteSpan(data, size));
  if (!containers.ok()) return 0;
  for (const farm::FatbinContainer& c : *containers) {
    for (const farm::FatbinEntry& e : c.entries) {
      (void)e.ArchName();
      // device_code.cc's limit, so size lies are tried against the real ceiling.
      (void)farm::DecompressEntryPayload(e, 64 << 20);
    }
  }
  return 0;
}
