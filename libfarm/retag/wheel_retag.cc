#include "libfarm/retag/wheel_retag.h"

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/cuda/arch_set_label.h"
#include "libfarm/digest/sha256.h"
#include "libfarm/elf/elf_file.h"
#include "libfarm/elf/mapped_file.h"
#include "libfarm/wheel/record_file.h"
#include "libfarm/wheel/wheel_filename.h"
#include "libfarm/wheel/wheel_metadata.h"
#include "libfarm/zip/zip_archive.h"
#include "libfarm/zip/zip_writer.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

const DottedVersion kNoGlibcFloor{{2, 17}};

absl::StatusOr<uint16_t> ElfMachineFor(const std::string& cpu_arch) {
  static const std::map<std::string, uint16_t> kMachines = {
      {"x86_64", 62}, {"aarch64", 183}, {"ppc64le", 21}, {"s390x", 22}};
  auto it = kMachines.find(cpu_arch);
  if (it == kMachines.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown CPU arch \"", cpu_arch, "\": use aarch64, x86_64, ppc64le or s390x"));
  }
  return it->second;
}

std::string CsvField(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

// METADATA: the first "Version:" header (headers end at the first blank line).
absl::StatusOr<std::string> RewriteMetadata(absl::string_view text, const std::string& version) {
  std::string out;
  bool replaced = false;
  bool in_headers = true;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!out.empty() || replaced) out.push_back('\n');
    absl::string_view bare = absl::StripSuffix(line, "\r");
    if (bare.empty()) in_headers = false;
    if (in_headers && !replaced && absl::StartsWith(bare, "Version:")) {
      out += absl::StrCat("Version: ", version, line.size() != bare.size() ? "\r" : "");
      replaced = true;
      continue;
    }
    absl::StrAppend(&out, line);
  }
  if (!replaced) return absl::InvalidArgumentError("METADATA has no Version: header");
  return out;
}

// WHEEL: every "Tag: py-abi-plat" gets the new platform; duplicates collapse.
std::string RewriteWheelFile(absl::string_view text, const std::string& platform_tag) {
  std::vector<std::string> lines;
  std::set<std::string> seen;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::string_view bare = absl::StripSuffix(line, "\r");
    if (absl::StartsWith(bare, "Tag:")) {
      std::string tag(absl::StripAsciiWhitespace(bare.substr(4)));
      std::vector<std::string> parts = absl::StrSplit(tag, '-');
      if (parts.size() == 3) tag = absl::StrCat(parts[0], "-", parts[1], "-", platform_tag);
      if (!seen.insert(tag).second) continue;
      lines.push_back(absl::StrCat("Tag: ", tag));
      continue;
    }
    lines.push_back(std::string(line));
  }
  return absl::StrJoin(lines, "\n");
}

// What retag needs of a member: its RECORD hash and size, and, for an ELF file only, its
// bytes (to check the CPU and the glibc it needs).
struct ScannedMember {
  std::string hash;  // "sha256=..."
  uint64_t size = 0;
  std::optional<std::vector<uint8_t>> elf;
};

// Reads `e` once, as it streams: any other member is hashed a piece at a time and never held,
// so retag's memory is one ELF member at most, whatever the wheel's total.
absl::StatusOr<ScannedMember> ScanMember(const ZipArchive& zip, const ZipEntry& e) {
  constexpr size_t kMagicSize = 4;
  ScannedMember out;
  Sha256 sha;
  std::vector<uint8_t> head;  // the first bytes, until they tell whether this is an ELF file
  bool decided = false;
  absl::Status s = zip.ReadTo(e, [&](ByteSpan piece) -> absl::Status {
    sha.Update(AsAbslChars(piece));
    out.size += piece.size();
    if (decided) {
      if (out.elf) out.elf->insert(out.elf->end(), piece.begin(), piece.end());
      return absl::OkStatus();
    }
    head.insert(head.end(), piece.begin(), piece.end());
    if (head.size() < kMagicSize) return absl::OkStatus();
    decided = true;
    if (ElfFile::HasMagic(head)) {
      if (e.uncompressed_size > kMaxInflatedSize) {
        return absl::ResourceExhaustedError(
            absl::StrCat(e.name, " is an ELF file of ", e.uncompressed_size,
                         " bytes, over the limit of ", kMaxInflatedSize));
      }
      out.elf.emplace();
      out.elf->reserve(e.uncompressed_size);  // exact: ReadTo stops past the declared size
      out.elf->insert(out.elf->end(), head.begin(), head.end());
    }
    head = {};
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  out.hash = RecordSha256FromHex(sha.FinishHex());
  return out;
}

}  // namespace

std::optional<DottedVersion> ManylinuxTagFloor(const std::vector<std::string>& platform_tags,
                                               const std::string& cpu_arch) {
  // PEP 600's legacy aliases.
  static const std::map<std::string, DottedVersion> kLegacy = {
      {"manylinux1", DottedVersion{{2, 5}}},
      {"manylinux2010", DottedVersion{{2, 12}}},
      {"manylinux2014", DottedVersion{{2, 17}}}};
  std::optional<DottedVersion> lowest;
  const std::string suffix = absl::StrCat("_", cpu_arch);
  for (const std::string& tag : platform_tags) {
    absl::string_view rest = tag;
    if (!absl::ConsumeSuffix(&rest, suffix)) continue;
    std::optional<DottedVersion> glibc;
    if (auto legacy = kLegacy.find(std::string(rest)); legacy != kLegacy.end()) {
      glibc = legacy->second;
    } else if (absl::ConsumePrefix(&rest, "manylinux_")) {
      std::vector<std::string> parts = absl::StrSplit(rest, '_');
      int major = 0;
      int minor = 0;
      if (parts.size() == 2 && absl::SimpleAtoi(parts[0], &major) &&
          absl::SimpleAtoi(parts[1], &minor)) {
        glibc = DottedVersion{{major, minor}};
      }
    }
    if (glibc && (!lowest || *glibc < *lowest)) lowest = glibc;
  }
  return lowest;
}

std::string CudaLocalVersion(const ToolkitVersion& cuda) {
  return absl::StrCat("+cu", cuda.major, cuda.minor);
}

std::string WithCudaLocalVersion(const std::string& version, const ToolkitVersion& cuda) {
  const std::string public_part = version.substr(0, version.find('+'));
  return absl::StrCat(public_part, CudaLocalVersion(cuda));
}

absl::StatusOr<RetagResult> RetagWheel(const std::string& wheel_path, const RetagOptions& options) {
  auto machine = ElfMachineFor(options.cpu_arch);
  if (!machine.ok()) return machine.status();
  auto name = ParseWheelFilename(wheel_path);
  if (!name.ok()) return name.status();
  auto mapped = MappedFile::Open(wheel_path, MappedFile::Access::kSequential);
  if (!mapped.ok()) return mapped.status();
  auto zip = ZipArchive::Open(mapped->bytes());
  if (!zip.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(wheel_path, " is not a readable wheel: ", zip.status().message()));
  }

  // The dist-info folder: the one top-level "*.dist-info/" holding WHEEL.
  std::string dist_info;
  for (const ZipEntry& e : zip->entries()) {
    std::vector<std::string> parts = absl::StrSplit(e.name, '/');
    if (parts.size() == 2 && parts[1] == "WHEEL" && absl::EndsWith(parts[0], ".dist-info")) {
      if (!dist_info.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(wheel_path, " has two .dist-info folders (",
                                                       dist_info, ", ", parts[0], "): rebuild it"));
      }
      dist_info = parts[0];
    }
  }
  if (dist_info.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(wheel_path, " has no *.dist-info/WHEEL: not a wheel"));
  }
  const std::string stem = dist_info.substr(0, dist_info.size() - std::string(".dist-info").size());
  const size_t dash = stem.rfind('-');
  if (dash == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("odd dist-info folder name ", dist_info));
  }
  const std::string dist_name = stem.substr(0, dash);
  const std::string old_version = stem.substr(dash + 1);
  const std::string new_version = WithFarmLocalLabel(old_version, options.cuda, options.archs);
  const std::string old_data = absl::StrCat(stem, ".data");
  const std::string new_stem = absl::StrCat(dist_name, "-", new_version);
  const std::string new_dist_info = absl::StrCat(new_stem, ".dist-info");

  RetagResult result;
  result.version = new_version;
  result.glibc_floor = kNoGlibcFloor;
  bool any_floor = false;

  // Written under a temporary name: the final one depends on the glibc floor, known only once
  // every member has been read. Each member is read once, as it is copied.
  const std::string tmp = (fs::path(options.output_dir) /
                           absl::StrCat(fs::path(wheel_path).filename().string(), ".retag-partial"))
                              .string();
  auto writer = ZipWriter::Create(tmp);
  if (!writer.ok()) return writer.status();
  std::error_code ec;
  absl::Cleanup remove_tmp = [&tmp] {
    std::error_code ignored;
    fs::remove(tmp, ignored);
  };
  std::string record;
  auto add_record = [&](const std::string& name, const std::string& hash, uint64_t size) {
    absl::StrAppend(&record, CsvField(name), ",", hash, ",", size, "\n");
  };
  // dist-info members, written last as the wheel spec recommends.
  struct MetaMember {
    const ZipEntry* entry;
    std::string name;
    uint32_t mode;
    ScannedMember scanned;
  };
  std::vector<MetaMember> meta;
  std::string metadata_text, wheel_text;
  for (const ZipEntry& e : zip->entries()) {
    if (e.IsDirectory()) continue;
    if (e.IsSymlink() || e.IsEncrypted()) {
      return absl::InvalidArgumentError(absl::StrCat(
          wheel_path, ": member ", e.name, " is a symlink or encrypted; wheels hold plain files"));
    }
    if (absl::Status s = CheckMemberPath(e.name); !s.ok()) return s;
    auto scanned = ScanMember(*zip, e);
    if (!scanned.ok()) return scanned.status();
    if (scanned->elf) {
      auto elf = ElfFile::Parse(*scanned->elf);
      if (elf.ok()) {
        if (elf->machine() != *machine) {
          return absl::FailedPreconditionError(absl::StrCat(
              e.name, " is built for ELF machine ", elf->machine(), ", not ", options.cpu_arch,
              ": the wheel was built on the wrong CPU architecture"));
        }
        auto needs = ReadVersionNeeds(*elf);
        if (!needs.ok()) return needs.status();
        if (std::optional<DottedVersion> floor = GlibcFloor(*needs)) {
          if (!any_floor || result.glibc_floor < *floor) {
            result.glibc_floor = *floor;
            result.floor_member = e.name;
          }
          any_floor = true;
        }
      }
      scanned->elf.reset();  // one member held at a time
    }
    uint32_t mode = 0644;
    if ((e.made_by >> 8) == 3) {
      const uint32_t bits = (e.external_attributes >> 16) & 0777;
      if (bits != 0) mode = bits;
    }
    const std::string top = e.name.substr(0, e.name.find('/'));
    if (top == dist_info) {
      const std::string leaf = e.name.substr(dist_info.size() + 1);
      if (leaf == "RECORD" || leaf == "RECORD.jws" || leaf == "RECORD.p7s") continue;
      if (leaf == "METADATA" || leaf == "WHEEL") {
        auto text = zip->Read(e, kMaxWheelMetadataBytes);
        if (!text.ok()) return text.status();
        (leaf == "METADATA" ? metadata_text : wheel_text) = std::string(AsChars(text->bytes()));
      }
      meta.push_back({&e, absl::StrCat(new_dist_info, "/", leaf), mode, *std::move(scanned)});
      continue;
    }
    const std::string out_name =
        top == old_data ? absl::StrCat(new_stem, ".data", e.name.substr(top.size())) : e.name;
    if (absl::Status s = writer->AddRaw(out_name, *zip, e, mode); !s.ok()) return s;
    add_record(out_name, scanned->hash, scanned->size);
  }
  if (metadata_text.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(wheel_path, " has no ", dist_info, "/METADATA"));
  }

  // The repair step's tag (worker/wheel_repair.h): auditwheel's policy also weighs the
  // libstdc++ and libgcc symbol versions and has no policy for some glibc releases, so its tag
  // can be above the GLIBC floor; kept then, so that `auditwheel show` agrees with the tag.
  // Never below the floor: a tag is the build host's word, the GLIBC versions are the wheel's.
  if (std::optional<DottedVersion> tagged =
          ManylinuxTagFloor(name->platform_tags, options.cpu_arch);
      tagged && result.glibc_floor < *tagged) {
    result.glibc_floor = *tagged;
    result.floor_member = absl::StrCat(
        "the wheel's manylinux_", absl::StrJoin(tagged->parts, "_"), "_", options.cpu_arch,
        " tag (from the build host's auditwheel repair: the symbol versions of its libraries, "
        "libstdc++'s and libgcc's included)");
  }
  if (options.glibc_ceiling < result.glibc_floor) {
    return absl::FailedPreconditionError(absl::StrCat(
        result.floor_member, " needs glibc ", result.glibc_floor.ToString(),
        ", above the recipe's ceiling ", options.glibc_ceiling.ToString(),
        ": it would not load on the oldest system the wheel targets. Fix: build on a host with "
        "glibc <= ",
        options.glibc_ceiling.ToString(), " (e.g. Ubuntu 22.04 for 2.35)"));
  }
  const int floor_major = result.glibc_floor.parts.empty() ? 2 : result.glibc_floor.parts[0];
  const int floor_minor = result.glibc_floor.parts.size() < 2 ? 17 : result.glibc_floor.parts[1];
  result.platform_tag =
      absl::StrCat("manylinux_", floor_major, "_", floor_minor, "_", options.cpu_arch);

  auto new_metadata = RewriteMetadata(metadata_text, new_version);
  if (!new_metadata.ok()) return new_metadata.status();
  const std::string new_wheel = RewriteWheelFile(wheel_text, result.platform_tag);
  for (const MetaMember& m : meta) {
    const bool is_metadata = absl::EndsWith(m.name, "/METADATA");
    if (is_metadata || absl::EndsWith(m.name, "/WHEEL")) {
      const ByteSpan text = AsBytes(is_metadata ? *new_metadata : new_wheel);
      if (absl::Status s = writer->Add(m.name, text, m.mode); !s.ok()) return s;
      add_record(m.name, RecordSha256(text), text.size());
    } else {
      if (absl::Status s = writer->AddRaw(m.name, *zip, *m.entry, m.mode); !s.ok()) return s;
      add_record(m.name, m.scanned.hash, m.scanned.size);
    }
  }
  const std::string record_name = absl::StrCat(new_dist_info, "/RECORD");
  absl::StrAppend(&record, CsvField(record_name), ",,\n");
  if (absl::Status s = writer->Add(record_name, AsBytes(record), 0644); !s.ok()) return s;
  if (absl::Status s = writer->Finish(); !s.ok()) return s;

  result.filename =
      absl::StrCat(name->distribution, "-", new_version,
                   name->build_tag.empty() ? "" : absl::StrCat("-", name->build_tag), "-",
                   absl::StrJoin(name->python_tags, "."), "-", absl::StrJoin(name->abi_tags, "."),
                   "-", result.platform_tag, ".whl");
  result.path = (fs::path(options.output_dir) / result.filename).string();
  if (fs::equivalent(result.path, wheel_path, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "retagging ", wheel_path, " would overwrite it: give a different output directory"));
  }
  fs::rename(tmp, result.path, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot rename ", tmp, ": ", ec.message()));
  std::move(remove_tmp).Cancel();
  return result;
}

}  // namespace farm
