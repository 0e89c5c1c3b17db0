// The device code inside a host object or library, keyed so two builds can be compared byte
// for byte: what the farm's tests assert about "the same device code as plain nvcc".
#pragma once

#include <map>
#include <string>
#include <vector>

namespace farm::testing {

// Payloads by "section/container kind arch" (e.g. ".nv_fatbin/0 cubin sm_90"). Records a test
// failure and returns what it could read when the file is not an ELF with device code.
std::map<std::string, std::string> DevicePayloads(const std::string& object);

std::vector<std::string> Keys(const std::map<std::string, std::string>& payloads);

// Expects the same keys and, for each, the same bytes.
void ExpectSamePayloads(const std::string& plain, const std::string& farm);

}  // namespace farm::testing
