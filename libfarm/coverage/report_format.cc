#include "libfarm/coverage/report_format.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "libfarm/elf/elf_file.h"

namespace farm {
namespace {

std::string Basename(const std::string& path) {
  const size_t cut = path.find_last_of("/!");
  return cut == std::string::npos ? path : path.substr(cut + 1);
}

std::string DescribeFile(const InspectedFile& file) {
  switch (file.format) {
    case BinaryFormat::kCubin:
      return "cubin";
    case BinaryFormat::kFatbin:
      return "fat binary";
    case BinaryFormat::kElf:
      break;
  }
  std::string kind = file.elf_type == kElfTypeRelocatable ? "object"
                     : file.elf_type == kElfTypeShared    ? "shared library"
                                                          : "executable";
  return absl::StrCat("ELF ", kind);
}

std::string OtherNeeds(const InspectedFile& file) {
  std::map<std::string, DottedVersion> highest;
  for (const VersionNeed& need : file.needs) {
    auto split = SplitSymbolVersion(need.version);
    if (!split || split->first == "GLIBC") continue;
    auto [it, inserted] = highest.emplace(split->first, split->second);
    if (!inserted && it->second < split->second) it->second = split->second;
  }
  std::vector<std::string> parts;
  for (const auto& [prefix, version] : highest) {
    parts.push_back(absl::StrCat(prefix, "_", version.ToString()));
  }
  return absl::StrJoin(parts, ", ");
}

// "sm_75 1234, sm_90 5678", or "none".
std::string ArchBytes(const std::map<std::string, uint64_t>& totals) {
  std::vector<std::string> parts;
  for (const auto& [arch, bytes] : totals) parts.push_back(absl::StrCat(arch, " ", bytes));
  return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
}

}  // namespace

nlohmann::json InspectionToJson(const Inspection& inspection) {
  nlohmann::json files = nlohmann::json::array();
  for (const InspectedFile& file : inspection.files) {
    nlohmann::json f;
    f["path"] = file.path;
    f["glibc"] = file.glibc ? nlohmann::json(file.glibc->ToString()) : nlohmann::json(nullptr);
    nlohmann::json entries = nlohmann::json::array();
    nlohmann::json containers = nlohmann::json::array();
    for (const InspectedContainer& c : file.containers) {
      nlohmann::json container_entries = nlohmann::json::array();
      for (const InspectedEntry& e : c.entries) {
        nlohmann::json entry = {{"kind", FatbinEntryKindName(e.kind)},
                                {"arch", e.arch},
                                {"compressed", PayloadCompressionName(e.compression)},
                                {"size", e.size}};
        entries.push_back(entry);
        container_entries.push_back(entry);
      }
      containers.push_back({{"section", ContainerSectionName(c.section)},
                            {"origin", ContainerOriginName(c.origin)},
                            {"loadable", c.Loadable()},
                            {"offset", c.offset},
                            {"entries", container_entries}});
    }
    f["entries"] = entries;
    f["containers"] = containers;
    nlohmann::json needs = nlohmann::json::array();
    for (const VersionNeed& n : file.needs) {
      needs.push_back({{"library", n.library}, {"version", n.version}});
    }
    f["needs"] = needs;
    if (!file.error.empty()) f["error"] = file.error;
    files.push_back(f);
  }
  nlohmann::json archs = nlohmann::json::object();
  for (const auto& [arch, bytes] : inspection.ArchTotals()) archs[arch] = bytes;
  nlohmann::json link_time = nlohmann::json::object();
  for (const auto& [arch, bytes] : inspection.LinkTimeArchTotals()) link_time[arch] = bytes;
  return {{"files", files}, {"archs", archs}, {"link_time_archs", link_time}};
}

std::string FormatInspection(const Inspection& inspection) {
  std::string out;
  for (const InspectedFile& file : inspection.files) {
    absl::StrAppend(&out, file.path, "  (", DescribeFile(file));
    if (file.glibc) absl::StrAppend(&out, ", glibc ", file.glibc->ToString());
    if (const std::string other = OtherNeeds(file); !other.empty()) {
      absl::StrAppend(&out, ", needs ", other);
    }
    absl::StrAppend(&out, ")\n");
    if (!file.error.empty()) {
      absl::StrAppend(&out, "  error: ", file.error, "\n\n");
      continue;
    }
    if (!file.HasDeviceCode()) {
      absl::StrAppend(&out, "  no CUDA device code\n\n");
      continue;
    }
    // cuobjdump numbers ELF and PTX files separately, from 1, across the whole file.
    int elf_number = 0, ptx_number = 0, other_number = 0;
    const std::string base = Basename(file.path);
    for (size_t i = 0; i < file.containers.size(); ++i) {
      const InspectedContainer& c = file.containers[i];
      absl::StrAppendFormat(
          &out, "  container %d  %s  %s  %s\n", i + 1, ContainerSectionName(c.section),
          ContainerOriginName(c.origin),
          c.Loadable() ? "(loaded by the CUDA runtime)" : "(link-time input: never loaded)");
      for (const InspectedEntry& e : c.entries) {
        std::string label;
        if (e.kind == FatbinEntryKind::kCubin) {
          label =
              absl::StrFormat("ELF file %4d: %s.%d.%s.cubin", ++elf_number, base, i + 1, e.arch);
        } else if (e.kind == FatbinEntryKind::kPtx) {
          label = absl::StrFormat("PTX file %4d: %s.%d.%s.ptx", ++ptx_number, base, i + 1,
                                  e.target.SmName());
        } else {
          label = absl::StrFormat("%-3s file %4d: %s.%d.%s", FatbinEntryKindName(e.kind),
                                  ++other_number, base, i + 1, e.arch);
        }
        std::string size = absl::StrCat(e.size, " bytes");
        if (e.uncompressed_size != 0)
          absl::StrAppend(&size, " (", e.uncompressed_size, " unpacked)");
        absl::StrAppendFormat(&out, "    %-56s %-12s %-5s %s\n", label, e.arch,
                              PayloadCompressionName(e.compression), size);
      }
    }
    absl::StrAppend(&out, "  bytes per arch: ", ArchBytes(FileArchTotals(file)), "\n");
    if (const auto link_time = FileLinkTimeArchTotals(file); !link_time.empty()) {
      absl::StrAppend(&out, "  link-time inputs per arch (not loaded, not counted above): ",
                      ArchBytes(link_time), "\n");
    }
    absl::StrAppend(&out, "\n");
  }
  const auto totals = inspection.ArchTotals();
  const auto link_time = inspection.LinkTimeArchTotals();
  if (inspection.files.size() > 1 && (!totals.empty() || !link_time.empty())) {
    absl::StrAppend(&out, "Totals per arch over ", inspection.files.size(), " files:\n");
    for (const auto& [arch, bytes] : totals)
      absl::StrAppendFormat(&out, "  %-14s %12d bytes\n", arch, bytes);
    if (!link_time.empty()) {
      absl::StrAppend(&out, "Link-time inputs per arch (not loaded):\n");
      for (const auto& [arch, bytes] : link_time)
        absl::StrAppendFormat(&out, "  %-14s %12d bytes\n", arch, bytes);
    }
  }
  return out;
}

nlohmann::json VerifyReportToJson(const VerifyReport& report, const VerifyPolicy& policy) {
  auto findings = [](const std::vector<VerifyFinding>& list) {
    nlohmann::json out = nlohmann::json::array();
    for (const VerifyFinding& f : list) {
      out.push_back({{"check", f.check}, {"path", f.path}, {"message", f.message}});
    }
    return out;
  };
  nlohmann::json json = InspectionToJson(report.inspection);
  json["wheel"] = report.wheel;
  json["passed"] = report.Passed();
  json["required_archs"] = policy.archs.ToString();
  json["manylinux"] =
      policy.max_glibc ? nlohmann::json(policy.max_glibc->ToString()) : nlohmann::json(nullptr);
  json["failures"] = findings(report.failures);
  json["notes"] = findings(report.notes);
  return json;
}

std::string FormatVerifyReport(const VerifyReport& report, const VerifyPolicy& policy) {
  std::string out;
  auto list = [&out](const std::vector<VerifyFinding>& findings) {
    for (const VerifyFinding& f : findings) {
      absl::StrAppend(&out, "  [", f.check, "] ", f.path.empty() ? "" : f.path + ": ", f.message,
                      "\n");
    }
  };
  if (report.Passed()) {
    absl::StrAppend(&out, "PASS ", report.wheel, ": archs ", policy.archs.ToString());
    if (policy.max_glibc) absl::StrAppend(&out, ", glibc <= ", policy.max_glibc->ToString());
    absl::StrAppend(&out, ", RECORD and tags consistent\n");
  } else {
    absl::StrAppend(&out, "FAIL ", report.wheel, ": ", report.failures.size(), " problem",
                    report.failures.size() == 1 ? "" : "s", "\n");
    list(report.failures);
  }
  if (!report.notes.empty()) {
    absl::StrAppend(&out, "notes:\n");
    list(report.notes);
  }
  return out;
}

}  // namespace farm
