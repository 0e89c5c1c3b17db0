#include "tests/support/device_payloads.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "libfarm/elf/elf_file.h"
#include "libfarm/elf/mapped_file.h"
#include "libfarm/fatbin/device_code.h"

namespace farm::testing {

std::map<std::string, std::string> DevicePayloads(const std::string& object) {
  std::map<std::string, std::string> out;
  auto file = MappedFile::Open(object);
  EXPECT_TRUE(file.ok()) << object << ": " << file.status();
  if (!file.ok()) return out;
  auto elf = ElfFile::Parse(file->bytes());
  EXPECT_TRUE(elf.ok()) << object << ": " << elf.status();
  if (!elf.ok()) return out;
  auto containers = ReadElfDeviceCode(*elf);
  EXPECT_TRUE(containers.ok()) << object << ": " << containers.status();
  if (!containers.ok()) return out;
  for (size_t c = 0; c < containers->size(); ++c) {
    const DeviceCodeContainer& dc = (*containers)[c];
    for (const FatbinEntry& e : dc.container.entries) {
      const std::string key = absl::StrCat(ContainerSectionName(dc.section), "/", c, " ",
                                           FatbinEntryKindName(e.kind), " ", e.ArchName());
      out[key] = std::string(reinterpret_cast<const char*>(e.payload.data()), e.payload.size());
    }
  }
  return out;
}

std::vector<std::string> Keys(const std::map<std::string, std::string>& payloads) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : payloads) keys.push_back(k);
  return keys;
}

void ExpectSamePayloads(const std::string& plain, const std::string& farm) {
  auto want = DevicePayloads(plain);
  auto got = DevicePayloads(farm);
  ASSERT_FALSE(want.empty()) << plain << " holds no device code";
  ASSERT_EQ(Keys(got), Keys(want));
  for (const auto& [key, bytes] : want) {
    EXPECT_TRUE(got[key] == bytes)
        << key << " differs (" << got[key].size() << " vs " << bytes.size() << " bytes)";
  }
}

}  // namespace farm::testing
