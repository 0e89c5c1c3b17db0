#include "libfarm/coverage/wheel_verifier.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/coverage/binary_inspector.h"
#include "libfarm/elf/elf_file.h"
#include "libfarm/elf/mapped_file.h"
#include "libfarm/wheel/record_file.h"
#include "libfarm/wheel/wheel_filename.h"
#include "libfarm/wheel/wheel_metadata.h"
#include "libfarm/zip/zip_archive.h"

namespace farm {
namespace {

// Member path relative to the wheel, from an inspected "wheel!member[!archive member]" path.
std::string MemberPath(const std::string& wheel, const std::string& inspected) {
  return inspected.substr(std::min(inspected.size(), wheel.size() + 1));
}

std::string DescribeSymbols(const VersionNeed& need) {
  if (need.symbols.empty()) return "";
  std::vector<std::string> shown(need.symbols.begin(),
                                 need.symbols.begin() + std::min<size_t>(need.symbols.size(), 5));
  return absl::StrCat(" (", absl::StrJoin(shown, ", "),
                      need.symbols.size() > shown.size() ? ", ..." : "", ")");
}

class Verifier {
 public:
  Verifier(const std::string& path, const VerifyPolicy& policy) : path_(path), policy_(policy) {
    report_.wheel = path;
  }

  absl::StatusOr<VerifyReport> Run();

 private:
  void Fail(std::string check, std::string path, std::string message) {
    report_.failures.push_back(
        VerifyFinding{std::move(check), std::move(path), std::move(message)});
  }
  void Note(std::string check, std::string path, std::string message) {
    report_.notes.push_back(VerifyFinding{std::move(check), std::move(path), std::move(message)});
  }
  void CheckMembers(const ZipArchive& zip);
  void CheckDistInfo(const ZipArchive& zip);
  void CheckRecord(const ZipArchive& zip, const std::string& dist_info);
  void CheckTags(const WheelMetadata& metadata);
  void CheckGlibc();
  void CheckArchs();

  std::string path_;
  const VerifyPolicy& policy_;
  VerifyReport report_;
  std::optional<WheelFilename> filename_;
  std::map<std::string, std::string> hashes_;  // member -> "sha256=..."
  std::map<std::string, uint64_t> sizes_;
  std::set<std::string> unreadable_;
};

absl::StatusOr<VerifyReport> Verifier::Run() {
  auto mapped = MappedFile::Open(path_, MappedFile::Access::kSequential);
  if (!mapped.ok()) return mapped.status();
  auto filename = ParseWheelFilename(path_);
  if (filename.ok()) {
    filename_ = *filename;
  } else {
    Fail("tags", "", std::string(filename.status().message()));
  }
  auto zip = ZipArchive::Open(mapped->bytes());
  if (!zip.ok()) {
    Fail("parse", "", absl::StrCat("not a readable wheel: ", zip.status().message()));
    return report_;
  }
  CheckMembers(*zip);
  CheckDistInfo(*zip);
  CheckGlibc();
  CheckArchs();
  return std::move(report_);
}

void Verifier::CheckMembers(const ZipArchive& zip) {
  for (const ZipEntry& entry : zip.entries()) {
    if (absl::Status s = CheckMemberPath(entry.name); !s.ok()) {
      Fail("path", entry.name,
           absl::StrCat(s.message(), "; rebuild the wheel with paths relative to its root"));
    }
    if (entry.IsSymlink()) {
      Fail("path", entry.name, "member is a symlink; installers write it as a plain file");
    }
    if (entry.IsDirectory()) continue;
    auto member = zip.Read(entry, kMaxInflatedSize);
    if (!member.ok()) {
      unreadable_.insert(entry.name);
      Fail("parse", entry.name, absl::StrCat("cannot read member: ", member.status().message()));
      continue;
    }
    hashes_[entry.name] = RecordSha256(member->bytes());
    sizes_[entry.name] = member->bytes().size();
    if (LooksLikeBinary(member->bytes())) {
      InspectBinary(member->bytes(), absl::StrCat(path_, "!", entry.name), report_.inspection);
    }
  }
  for (const InspectedFile& file : report_.inspection.files) {
    if (!file.error.empty()) {
      Fail("parse", MemberPath(path_, file.path),
           absl::StrCat("cannot read this binary, so its device code and glibc needs are "
                        "unknown: ",
                        file.error));
    }
  }
}

void Verifier::CheckDistInfo(const ZipArchive& zip) {
  std::set<std::string> dist_infos;
  for (const ZipEntry& entry : zip.entries()) {
    const size_t slash = entry.name.find('/');
    if (slash == std::string::npos) continue;
    const std::string top = entry.name.substr(0, slash);
    if (absl::EndsWith(top, ".dist-info")) dist_infos.insert(top);
  }
  std::string dist_info;
  if (filename_) {
    const std::string expected = absl::StrCat(NormalizeDistributionName(filename_->distribution),
                                              "-", filename_->version, ".dist-info");
    for (const std::string& candidate : dist_infos) {
      const std::string stem = candidate.substr(0, candidate.size() - 10);
      const size_t dash = stem.find('-');
      if (dash == std::string::npos) continue;
      if (absl::StrCat(NormalizeDistributionName(stem.substr(0, dash)), stem.substr(dash),
                       ".dist-info") == expected) {
        dist_info = candidate;
      }
    }
    if (dist_info.empty()) {
      Fail("metadata", "",
           absl::StrCat("no ", expected, "/ folder matching the file name (found: ",
                        dist_infos.empty() ? "none" : absl::StrJoin(dist_infos, ", "), ")"));
      return;
    }
  } else if (dist_infos.size() == 1) {
    dist_info = *dist_infos.begin();
  } else {
    Fail("metadata", "", "cannot tell which .dist-info folder belongs to the wheel");
    return;
  }
  CheckRecord(zip, dist_info);
  const std::string wheel_member = dist_info + "/WHEEL";
  const ZipEntry* wheel_entry = zip.Find(wheel_member);
  if (wheel_entry == nullptr) {
    Fail("metadata", wheel_member, "missing WHEEL file");
    return;
  }
  auto wheel_bytes = zip.Read(*wheel_entry, 1 << 20);
  if (!wheel_bytes.ok()) return;  // already reported as unreadable
  auto metadata = ParseWheelMetadata(AsAbslChars(wheel_bytes->bytes()));
  if (!metadata.ok()) {
    Fail("metadata", wheel_member, std::string(metadata.status().message()));
    return;
  }
  CheckTags(*metadata);
}

void Verifier::CheckRecord(const ZipArchive& zip, const std::string& dist_info) {
  const std::string record_member = dist_info + "/RECORD";
  const ZipEntry* record_entry = zip.Find(record_member);
  if (record_entry == nullptr) {
    Fail("record", record_member, "missing RECORD: nothing vouches for the wheel's contents");
    return;
  }
  auto record_bytes = zip.Read(*record_entry, uint64_t{256} << 20);
  if (!record_bytes.ok()) return;
  auto rows = ParseRecord(AsAbslChars(record_bytes->bytes()));
  if (!rows.ok()) {
    Fail("record", record_member, std::string(rows.status().message()));
    return;
  }
  std::set<std::string> listed;
  const std::set<std::string> unsigned_members = {record_member, dist_info + "/RECORD.jws",
                                                  dist_info + "/RECORD.p7s"};
  for (const RecordRow& row : *rows) {
    if (!listed.insert(row.path).second) {
      Fail("record", row.path, "listed twice in RECORD");
      continue;
    }
    if (unsigned_members.count(row.path) != 0) continue;
    auto hash = hashes_.find(row.path);
    if (hash == hashes_.end()) {
      if (unreadable_.count(row.path) == 0) {
        Fail("record", row.path, "listed in RECORD but not in the wheel");
      }
      continue;
    }
    if (!absl::StartsWith(row.hash, "sha256=")) {
      Fail("record", row.path,
           absl::StrCat("RECORD hash \"", row.hash,
                        "\" is not sha256; regenerate RECORD with sha256 hashes"));
    } else if (row.hash != hash->second) {
      Fail("record", row.path,
           absl::StrCat("hash mismatch: RECORD says ", row.hash, ", file has ", hash->second,
                        "; the file changed after RECORD was written (rebuild or re-sign the "
                        "wheel)"));
    }
    if (!row.size) {
      Fail("record", row.path, "RECORD gives no size");
    } else if (*row.size != sizes_[row.path]) {
      Fail("record", row.path,
           absl::StrCat("size mismatch: RECORD says ", *row.size, " bytes, file has ",
                        sizes_[row.path]));
    }
  }
  for (const auto& [member, hash] : hashes_) {
    if (listed.count(member) == 0 && unsigned_members.count(member) == 0) {
      Fail("record", member, "in the wheel but not listed in RECORD");
    }
  }
}

void Verifier::CheckTags(const WheelMetadata& metadata) {
  if (!filename_) return;
  const std::vector<std::string> expanded = filename_->ExpandedTags();
  const std::set<std::string> from_name(expanded.begin(), expanded.end());
  const std::set<std::string> from_wheel(metadata.tags.begin(), metadata.tags.end());
  if (from_name != from_wheel) {
    Fail("tags", "",
         absl::StrCat("file name tags {", absl::StrJoin(from_name, ", "),
                      "} differ from the WHEEL file's Tag lines {", absl::StrJoin(from_wheel, ", "),
                      "}; rename the wheel or fix WHEEL and RECORD"));
  }
  if (!metadata.build.empty() && metadata.build != filename_->build_tag) {
    Fail("tags", "",
         absl::StrCat("WHEEL says Build: ", metadata.build, " but the file name's build tag is \"",
                      filename_->build_tag, "\""));
  }
  const bool has_elf = !report_.inspection.files.empty();
  if (has_elf && metadata.root_is_purelib.value_or(false)) {
    Fail("tags", "",
         "WHEEL says Root-Is-Purelib: true but the wheel holds compiled libraries; set it to "
         "false (platlib)");
  }
}

void Verifier::CheckGlibc() {
  std::vector<PlatformTag> platforms;
  if (filename_) {
    for (const std::string& tag : filename_->platform_tags)
      platforms.push_back(ParsePlatformTag(tag));
  }
  // The manylinux floor the file name promises: the lowest glibc among its tags.
  std::optional<DottedVersion> tag_glibc;
  for (const PlatformTag& p : platforms) {
    if (p.kind != PlatformTag::Kind::kManylinux) continue;
    DottedVersion v{{p.glibc_major, p.glibc_minor}};
    if (!tag_glibc || v < *tag_glibc) tag_glibc = v;
  }
  if (tag_glibc && policy_.max_glibc && *policy_.max_glibc < *tag_glibc) {
    Fail("tags", "",
         absl::StrCat("file name claims manylinux glibc ", tag_glibc->ToString(),
                      " but the policy allows at most ", policy_.max_glibc->ToString()));
  }
  for (const InspectedFile& file : report_.inspection.files) {
    if (!file.error.empty() || file.format != BinaryFormat::kElf) continue;
    const std::string member = MemberPath(path_, file.path);
    for (const PlatformTag& p : platforms) {
      if (p.kind == PlatformTag::Kind::kAny) {
        Fail("tags", member,
             "compiled library in a wheel tagged \"any\"; tag it for its platform, e.g. "
             "manylinux_2_35_x86_64");
      } else if (!p.cpu.empty() && file.elf_type != kElfTypeRelocatable &&
                 ElfMachineName(file.machine) != p.cpu) {
        Fail("tags", member,
             absl::StrCat("built for ", ElfMachineName(file.machine), " but the wheel is tagged ",
                          p.cpu));
      } else if (p.kind == PlatformTag::Kind::kMusllinux && file.glibc) {
        Fail("tags", member,
             absl::StrCat("needs glibc ", file.glibc->ToString(),
                          " but the wheel is tagged musllinux"));
      }
    }
    if (!file.glibc) continue;
    for (const VersionNeed& need : file.needs) {
      auto split = SplitSymbolVersion(need.version);
      if (!split || split->first != "GLIBC" || split->second.parts.size() < 2) continue;
      if (absl::StartsWith(need.library, "ld-linux") || absl::StartsWith(need.library, "ld64.so")) {
        continue;
      }
      const DottedVersion v{{split->second.parts[0], split->second.parts[1]}};
      if (policy_.max_glibc && *policy_.max_glibc < v) {
        Fail("glibc", member,
             absl::StrCat("needs ", need.version, " from ", need.library, DescribeSymbols(need),
                          ", newer than the policy's glibc ", policy_.max_glibc->ToString(),
                          "; build on a system with glibc <= ", policy_.max_glibc->ToString(),
                          " (e.g. a manylinux_2_", policy_.max_glibc->parts[1], " container)"));
      }
      if (tag_glibc && *tag_glibc < v) {
        Fail("tags", member,
             absl::StrCat("needs ", need.version, " from ", need.library, DescribeSymbols(need),
                          " but the file name promises manylinux glibc ", tag_glibc->ToString(),
                          "; retag as manylinux_", v.parts[0], "_", v.parts[1], " or rebuild"));
      }
    }
  }
}

void Verifier::CheckArchs() {
  bool any_device_code = false;
  for (const InspectedFile& file : report_.inspection.files) {
    if (!file.error.empty() || !file.HasDeviceCode()) continue;
    any_device_code = true;
    const std::string member = MemberPath(path_, file.path);
    bool has_loaded = false;
    for (const InspectedContainer& c : file.containers) {
      if (c.Loadable() && c.origin != ContainerOrigin::kDeviceLinkStub) {
        has_loaded = true;
      }
    }
    // Missing arch -> 1-based numbers of the containers lacking it.
    std::map<std::string, std::vector<size_t>> missing_sass, missing_ptx;
    size_t checked = 0;
    for (size_t i = 0; i < file.containers.size(); ++i) {
      const InspectedContainer& c = file.containers[i];
      if (!ContainerIsChecked(c, file.elf_type, has_loaded)) {
        if (c.origin == ContainerOrigin::kDeviceLinkStub) {
          Note("arch", member,
               absl::StrCat("container ", i + 1,
                            " is a device-link stub from the CUDA runtime (no kernels); its "
                            "archs are not checked"));
        }
        continue;
      }
      ++checked;
      for (const ArchRequest& r : policy_.archs.requests) {
        if (!HasSassFor(c, r.target)) missing_sass[r.target.SmName()].push_back(i + 1);
        if (r.ptx && !HasPtxFor(c, r.target)) missing_ptx[r.target.ComputeName()].push_back(i + 1);
      }
    }
    auto report = [&](const std::string& check,
                      const std::map<std::string, std::vector<size_t>>& missing,
                      absl::string_view what) {
      for (const auto& [arch, containers] : missing) {
        const bool device_linked =
            std::all_of(containers.begin(), containers.end(), [&](size_t number) {
              return file.containers[number - 1].origin == ContainerOrigin::kDeviceLink;
            });
        if (check == "ptx" && device_linked) {
          // Asking for the arch again cannot help: nvlink puts SASS alone in its output.
          Fail(check, member,
               absl::StrCat("lacks ", arch, " PTX in its device-linked image (container ",
                            absl::StrJoin(containers, ", "),
                            "): -rdc device linking keeps no PTX, whatever the arch list says "
                            "(what PTX was compiled stays in the link-time inputs, which the "
                            "runtime never loads); drop +PTX for this library and list the SASS "
                            "of each GPU it must run on, or build it without -rdc"));
          continue;
        }
        Fail(check, member,
             absl::StrCat("lacks ", arch, " ", what, " in ", containers.size(), " of ", checked,
                          " fat-binary containers (container ", absl::StrJoin(containers, ", "),
                          "); each container is one translation unit, so some kernels would not "
                          "run there; add ",
                          arch, " to the build's arch list for every CUDA file"));
      }
    };
    report("arch", missing_sass, "SASS");
    report("ptx", missing_ptx, "PTX");
  }
  if (!any_device_code && !policy_.archs.requests.empty()) {
    Fail("arch", "",
         absl::StrCat("no CUDA device code in the wheel, but archs ", policy_.archs.ToString(),
                      " were required; was the wheel built without CUDA?"));
  }
}

}  // namespace

absl::StatusOr<VerifyReport> VerifyWheel(const std::string& wheel_path,
                                         const VerifyPolicy& policy) {
  return Verifier(wheel_path, policy).Run();
}

}  // namespace farm
