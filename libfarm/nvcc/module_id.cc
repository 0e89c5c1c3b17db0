#include "libfarm/nvcc/module_id.h"

#include <algorithm>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "libfarm/digest/sha256.h"
#include "libfarm/files/file_contents.h"

namespace farm {
namespace {

constexpr char kGenerateFlag[] = "--gen_module_id_file";

// Where the tail starts in "_<8 hex>_<N>_<N characters>_<tail>", or npos.
size_t TailStart(absl::string_view id) {
  static const std::regex kHead(R"(^_[0-9a-f]{8}_(\d+)_)");
  std::cmatch match;
  if (!std::regex_search(id.data(), id.data() + id.size(), match, kHead)) {
    return absl::string_view::npos;
  }
  size_t name_size = 0;
  if (!absl::SimpleAtoi(match[1].str(), &name_size)) return absl::string_view::npos;
  const size_t underscore = static_cast<size_t>(match.length(0)) + name_size;
  if (underscore >= id.size() || id[underscore] != '_') return absl::string_view::npos;
  return underscore + 1;
}

void AddField(Sha256& hash, absl::string_view name, absl::string_view value) {
  hash.Update(absl::StrCat(name, "=", value.size(), ":"));
  hash.Update(value);
}

}  // namespace

bool IsPerProcessModuleId(absl::string_view id, pid_t cudafe_pid) {
  const size_t tail = TailStart(id);
  if (tail == absl::string_view::npos || cudafe_pid <= 0) return false;
  static const std::regex kPerProcess(R"(^[0-9a-f]{8}_(\d+)$)");
  std::cmatch match;
  return std::regex_match(id.data() + tail, id.data() + id.size(), match, kPerProcess) &&
         match[1].str() == absl::StrCat(cudafe_pid);
}

std::string ModuleIdOfInputs(absl::string_view id, absl::string_view inputs_digest_hex) {
  const size_t tail = TailStart(id);
  return absl::StrCat(id.substr(0, tail == absl::string_view::npos ? id.size() : tail), "farm",
                      inputs_digest_hex.substr(0, 16));
}

absl::StatusOr<std::optional<std::string>> MakeModuleIdOfInputs(const NvccDryrun& dryrun,
                                                                LocalSteps& local,
                                                                const std::string& temp_dir) {
  const std::vector<size_t> cudafe = dryrun.StepsOfKind(DryrunStepKind::kCudafe);
  if (cudafe.size() != 1 || dryrun.module_id_file.empty()) return std::nullopt;
  auto id = ReadFileContents(dryrun.module_id_file);
  if (!id.ok()) return id.status();
  if (!IsPerProcessModuleId(*id, local.Pid(cudafe[0]))) return std::nullopt;

  // What the unit is: the front end's arguments (source path, language options), the
  // preprocessor's (macros, include paths, the arch list), and the source it read.
  // The private directory's name is the one per-call part of them.
  Sha256 hash;
  const DryrunStep& cudafe_step = dryrun.steps[cudafe[0]];
  for (size_t i : dryrun.StepsOfKind(DryrunStepKind::kHostPreprocess)) {
    for (const std::string& word : ExpandedArgv(dryrun, dryrun.steps[i])) {
      AddField(hash, "preprocess", absl::StrReplaceAll(word, {{temp_dir, "<temp>"}}));
    }
    const std::string& preprocessed = dryrun.steps[i].output;
    if (std::find(cudafe_step.argv.begin(), cudafe_step.argv.end(), preprocessed) ==
        cudafe_step.argv.end()) {
      continue;
    }
    auto source = ReadFileContents(preprocessed);
    if (!source.ok()) return source.status();
    AddField(hash, "source", *source);
  }
  for (const std::string& word : ExpandedArgv(dryrun, cudafe_step)) {
    AddField(hash, "cudafe++", absl::StrReplaceAll(word, {{temp_dir, "<temp>"}}));
  }
  std::string stable = ModuleIdOfInputs(*id, hash.FinishHex());
  if (absl::Status s = WriteFileAtomically(dryrun.module_id_file, stable); !s.ok()) return s;
  if (absl::Status s = local.RunWithout(cudafe[0], kGenerateFlag); !s.ok()) return s;
  return stable;
}

}  // namespace farm
