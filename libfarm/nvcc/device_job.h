// One virtual arch's device compile (cicc, then ptxas for each real arch) cut out of an
// nvcc --dryrun plan so that it can run on another host: nvcc's own commands, with every
// temporary renamed to a bare file name in the action's scratch directory and the toolkit
// root replaced by $FARM_CUDA_ROOT, which the worker sets to its toolkit of the same version.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libfarm/nvcc/nvcc_dryrun.h"

namespace farm {

// A file of the job: where it is on the build host, and its name in the action's scratch dir.
struct DeviceJobFile {
  std::string local_path;
  std::string name;
};

// A source file's stat on the build host (see farm.v1.SourceStamp): with line info, ptxas
// writes each source's mtime and size into the cubin.
// The most stamps one action may carry (farm.v1.Action.source_stamps; the coordinator
// refuses more).
inline constexpr size_t kMaxSourceStamps = 4096;

struct SourceStamp {
  std::string path;  // absolute
  int64_t mtime_seconds = 0;
  uint64_t size_bytes = 0;
};

struct DeviceJob {
  std::string virtual_arch;  // "compute_90a"
  // The compile shard the job counts towards: its first real arch ("sm_90a"), or the
  // virtual arch when it only produces PTX.
  std::string shard;
  std::vector<std::string> sms;  // real archs ptxas builds ("sm_90a"): the worker must list them
  std::string script;            // for `sh -c`, run in the scratch dir
  std::vector<DeviceJobFile> inputs;   // the preprocessed device source and the module id
  std::vector<DeviceJobFile> outputs;  // PTX, cubins, and the host stub cicc writes
  // With line info: the stat of each file the job's device source was read from.
  std::vector<SourceStamp> source_stamps;
};

// Whether the job asks cicc and ptxas for line info (-lineinfo), so that its cubins carry
// its sources' stamps.
bool HasLineInfo(const DeviceJob& job);

// The stamps of `files` (as line markers spell them; relative ones are taken from `cwd`)
// that exist here, each once, absolute and normalized. Empty when there are more than
// `limit` (a torch extension's unit reads thousands): the caller then stamps the few its
// PTX can name (PtxSourceFiles).
std::vector<SourceStamp> StampsOfFiles(const std::vector<std::string>& files,
                                       const std::string& cwd, size_t limit);

// The files a PTX's `.file` directives name, as cicc spelled them: with line info, exactly
// the files whose stat ptxas writes into the cubins' line tables (the PTX itself holds no
// stamps), a few of the thousands a torch extension's unit reads.
std::vector<std::string> PtxSourceFiles(absl::string_view ptx);

// Plans one job per device group of `dryrun`, which must have been made with
// RunNvccDryrun(..., private_temp_dir = `temp_dir`). Fails (the caller then runs plain nvcc)
// when a step names a file outside `temp_dir` that the job would need.
absl::StatusOr<std::vector<DeviceJob>> PlanDeviceJobs(const NvccDryrun& dryrun,
                                                      const std::string& temp_dir);

}  // namespace farm
