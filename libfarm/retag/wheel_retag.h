// Retags a built wheel for publishing: local version "+cuXY.smAB..." from the toolkit used
// and the arch set built (libfarm/cuda/arch_set_label.h),
// platform tag manylinux_2_NN_<cpu> from the glibc its libraries really need, dist-info
// renamed to match, METADATA/WHEEL updated and RECORD rewritten with fresh hashes.
//
// Decisions:
// - An existing local version label is replaced, not extended: "2.9.1a0+gitd38164a" built
//   with CUDA 13.0 for sm_75 and sm_90 becomes "2.9.1a0+cu130.sm75.sm90". The published name
//   must be what users pin (`torch==2.9.1+cu130.sm75.sm90`, PyTorch's "+cu130" followed by the
//   SMs, so two arch sets of one version are two files); a build-system label such as
//   "+git..." is noise there. The file name, the .dist-info folder and METADATA's Version:
//   all carry the new version.
// - NN is the highest GLIBC_2.x any ELF member needs (auditwheel's rule, read from
//   .gnu.version_r); above the recipe's ceiling the wheel is refused, naming the library.
//   A wheel whose ELFs need no versioned glibc symbol gets manylinux_2_17 (manylinux2014,
//   the oldest policy that covers aarch64). Every ELF member counts, the libraries the
//   repair step carried in `<package>.libs/` too.
// - A manylinux tag the wheel already has (the build host's auditwheel repair,
//   worker/wheel_repair.h, sets the policy's) raises NN to it: auditwheel's policy also weighs
//   libstdc++'s and libgcc's symbol versions, and `auditwheel show` must agree with the tag.
//   It never lowers NN: below the GLIBC floor the tag would be false.
// - Every ELF member must be for `cpu_arch` (e_machine): an x86_64 library in an aarch64
//   wheel is refused rather than mislabelled.
// - RECORD.jws / RECORD.p7s signatures are dropped: they signed the old RECORD.
// - A build's wheel is hostile input: it is opened under ZipArchive's limits (no overlapping
//   members, 16 GiB inflated in all) and read once, a member at a time. Members other than
//   METADATA and WHEEL are copied as they are stored, not deflated again; their RECORD hashes
//   come from streaming them. Only an ELF member is held in memory (kMaxInflatedSize each),
//   so retag's memory is its largest library, not the wheel's total.
// - ZIP64 is written when a member or the archive outgrows 4 GiB.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/elf/version_needs.h"

namespace farm {

struct RetagOptions {
  ToolkitVersion cuda;          // -> local version "+cu130"
  std::string cpu_arch;         // "aarch64", "x86_64"
  DottedVersion glibc_ceiling;  // the recipe's platform.glibc_max, e.g. 2.35
  std::string output_dir;       // where the new wheel goes; must differ from the input's file
  ArchList archs;               // the planned archs -> ".sm75.sm90"; none: "+cu130" alone
};

struct RetagResult {
  std::string path;          // output_dir/filename
  std::string filename;      // "torch-2.9.1+cu130.sm75.sm90-cp310-cp310-manylinux_2_35_aarch64.whl"
  std::string version;       // "2.9.1+cu130.sm75.sm90"
  std::string platform_tag;  // "manylinux_2_35_aarch64"
  DottedVersion glibc_floor;  // what the libraries need (2.17 when nothing)
  // The member that needs the floor, or the wheel's own tag that set it ("" when none).
  std::string floor_member;
};

// The glibc of the most compatible manylinux tag among `platform_tags` for `cpu_arch`
// ("manylinux_2_34_x86_64", or a legacy alias: manylinux2014 is 2.17); nullopt when none is.
std::optional<DottedVersion> ManylinuxTagFloor(const std::vector<std::string>& platform_tags,
                                               const std::string& cpu_arch);

// "+cu130" for CUDA 13.0.
std::string CudaLocalVersion(const ToolkitVersion& cuda);

// Replaces the local label of `version` with the toolkit's ("2.9.1+abc" -> "2.9.1+cu130").
std::string WithCudaLocalVersion(const std::string& version, const ToolkitVersion& cuda);

absl::StatusOr<RetagResult> RetagWheel(const std::string& wheel_path, const RetagOptions& options);

}  // namespace farm
