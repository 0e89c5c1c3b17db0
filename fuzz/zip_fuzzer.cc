// libFuzzer target: zip central directory, member reads, RECORD and WHEEL parsing.
#include <cstddef>
#include <cstdint>

#include "libfarm/wheel/record_file.h"
#include "libfarm/wheel/wheel_filename.h"
#include "libfarm/wheel/wheel_metadata.h"
#include "libfarm/zip/zip_archive.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const farm::ByteSpan bytes(data, size);
  const absl::string_view text = farm::AsAbslChars(bytes);
  (void)farm::ParseRecord(text);
  (void)farm::ParseWheelMetadata(text);
  (void)farm::ParseWheelFilename(text);
  (void)farm::ParsePlatformTag(text);
  auto zip = farm::ZipArchive::Open(bytes);
  if (!zip.ok()) return 0;
  for (const farm::ZipEntry& e : zip->entries()) {
    (void)farm::CheckMemberPath(e.name);
    (void)zip->Read(e, 1 << 20);
  }
  return 0;
}
