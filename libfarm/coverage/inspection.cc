#include "libfarm/coverage/inspection.h"

namespace farm {

bool InspectedFile::HasDeviceCode() const {
  for (const InspectedContainer& c : containers) {
    if (!c.entries.empty()) return true;
  }
  return false;
}

namespace {

std::map<std::string, uint64_t> Totals(const InspectedFile& file, bool loadable) {
  std::map<std::string, uint64_t> totals;
  for (const InspectedContainer& c : file.containers) {
    if (c.Loadable() != loadable) continue;
    for (const InspectedEntry& e : c.entries) totals[e.arch] += e.size;
  }
  return totals;
}

std::map<std::string, uint64_t> Totals(const std::vector<InspectedFile>& files, bool loadable) {
  std::map<std::string, uint64_t> totals;
  for (const InspectedFile& f : files) {
    for (const auto& [arch, bytes] : Totals(f, loadable)) totals[arch] += bytes;
  }
  return totals;
}

}  // namespace

std::map<std::string, uint64_t> FileArchTotals(const InspectedFile& file) {
  return Totals(file, true);
}

std::map<std::string, uint64_t> FileLinkTimeArchTotals(const InspectedFile& file) {
  return Totals(file, false);
}

std::map<std::string, uint64_t> Inspection::ArchTotals() const { return Totals(files, true); }

std::map<std::string, uint64_t> Inspection::LinkTimeArchTotals() const {
  return Totals(files, false);
}

bool Inspection::HasErrors() const {
  for (const InspectedFile& f : files) {
    if (!f.error.empty()) return true;
  }
  return false;
}

}  // namespace farm
