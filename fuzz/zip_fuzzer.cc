// libFuzzer target: zip central directory and layout checks, member reads (whole and
// streamed), RECORD and WHEEL parsing.
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
    // The verifier's own limit: a member lying about its size must cost what it inflates to,
    // so a lie here trips libFuzzer's malloc limit (-rss_limit_mb) instead of passing unseen.
    (void)zip->Read(e, farm::kMaxInflatedSize);
    // The streaming read, as retag uses it: same checks, one piece held at a time.
    uint64_t streamed = 0;
    (void)zip->ReadTo(e, [&](farm::ByteSpan piece) {
      streamed += piece.size();
      return absl::OkStatus();
    });
  }
  return 0;
}
