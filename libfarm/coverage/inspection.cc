#include "libfarm/coverage/inspection.h"

namespace farm {

bool InspectedFile::HasDeviceCode() const {
  for (const InspectedContainer& c : containers) {
    if (!c.entries.empty()) return true;
  }
  return false;
}

std::map<std::string, uint64_t> FileArchTotals(const InspectedFile& file) {
  std::map<std::string, uint64_t> totals;
  for (const InspectedContainer& c : file.containers) {
    for (const InspectedEntry& e : c.entries) totals[e.arch] += e.size;
  }
  return totals;
}

std::map<std::string, uint64_t> Inspection::ArchTotals() const {
  std::map<std::string, uint64_t> totals;
  for (const InspectedFile& f : files) {
    for (const auto& [arch, bytes] : FileArchTotals(f)) totals[arch] += bytes;
  }
  return totals;
}

bool Inspection::HasErrors() const {
  for (const InspectedFile& f : files) {
    if (!f.error.empty()) return true;
  }
  return false;
}

}  // namespace farm
