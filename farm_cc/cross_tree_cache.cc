#include "farm_cc/cross_tree_cache.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "libfarm/cc/depfile_layout.h"
#include "libfarm/cc/file_tree_builder.h"
#include "libfarm/digest/digest.h"
#include "libfarm/digest/sha256.h"
#include "libfarm/file_tree/file_tree.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/logging/logger.h"
#include "libfarm/nvcc/compile_cache.h"
#include "libfarm/text/utf8.h"

namespace farm {
namespace {

// Changes when what a key means changes, so old entries are never read as new ones.
constexpr char kKeyVersion[] = "farm-cc cross-tree v1";
constexpr int64_t kMaxDepfileBytes = 64 << 20;

std::vector<std::string> Roles(const HostCompileOutputs& outputs) {
  std::vector<std::string> roles = {kObjectRole};
  if (!outputs.depfile.empty()) roles.push_back(kDependencyFileRole);
  return roles;
}

}  // namespace

absl::StatusOr<CrossTreeCache> CrossTreeCache::ForCompile(const cc::BaseDir& base_dir,
                                                          const farm::v1::Action& action,
                                                          const farm::v1::FileTree& input_tree,
                                                          const farm::v1::FileTree& toolchain_tree,
                                                          cc::CompilerFamily family,
                                                          HostCompileOutputs outputs) {
  if (!base_dir.Holds(action.working_directory())) {
    return absl::FailedPreconditionError("the working directory lies outside FARM_CC_BASEDIR");
  }
  for (const farm::v1::InputFile& f : toolchain_tree.files()) {
    if (base_dir.Holds("/" + f.path())) {
      return absl::FailedPreconditionError(
          absl::StrCat("the toolchain's '/", f.path(), "' lies under FARM_CC_BASEDIR"));
    }
  }
  // The action as it would be in any tree: the base dir's stand-in for the base dir, and
  // nothing that names this build (its id, its history key, its timeout).
  farm::v1::Action keyed;
  for (const std::string& word : action.argv()) {
    auto mapped = base_dir.ToStandInWord(word);
    if (!mapped.ok()) return mapped.status();
    keyed.add_argv(*std::move(mapped));
  }
  for (const auto& [name, value] : action.env()) {
    auto mapped = base_dir.ToStandInWord(value);  // a path or a list of them (CPATH, PATH)
    if (!mapped.ok()) return mapped.status();
    (*keyed.mutable_env())[name] = *std::move(mapped);
  }
  for (const std::string& out : action.output_paths()) {
    keyed.add_output_paths(base_dir.ToStandIn("/" + out).substr(1));
  }
  keyed.set_working_directory(base_dir.ToStandIn(action.working_directory()));
  *keyed.mutable_toolchain() = action.toolchain();
  *keyed.mutable_requirements() = action.requirements();
  auto tree = base_dir.ToStandInTree(input_tree);
  if (!tree.ok()) return tree.status();
  *keyed.mutable_input_tree() = DigestOfBytes(SerializeFileTree(*tree));

  Sha256 hash;
  hash.Update(kKeyVersion);
  hash.Update(DeterministicBytes(keyed));
  return CrossTreeCache(base_dir, family, std::move(outputs), hash.FinishHex());
}

absl::StatusOr<std::optional<FarmHostCompileResult>> CrossTreeCache::Restore(ActionClient* actions,
                                                                             CasClient* cas) const {
  auto log = ComponentLogger("farm-cc");
  auto entry = actions->GetCompileResult(key_);
  if (absl::IsNotFound(entry.status())) return std::nullopt;
  if (!entry.ok()) return entry.status();
  if (absl::Status s = CheckRestorableOutputs(*entry, Roles(outputs_)); !s.ok()) {
    log->warn("{}", s.message());
    return std::nullopt;
  }
  for (const farm::v1::OutputFile& out : entry->outputs()) {
    if (out.path() == kObjectRole) {
      if (absl::Status s = cas->DownloadToFile(out.digest(), outputs_.object); !s.ok()) return s;
      continue;
    }
    auto text = cas->DownloadBytes(out.digest(), kMaxDepfileBytes);
    if (!text.ok()) return text.status();
    auto here = cc::RewriteDepfilePaths(*text, family_, [&](absl::string_view path) {
      return absl::StatusOr<std::string>(base_dir_.FromStandIn(path));
    });
    if (!here.ok()) {
      log->warn("cross-tree cache entry {} not taken: {}", key_, here.status().message());
      return std::nullopt;
    }
    if (absl::Status s = WriteFileAtomically(outputs_.depfile, *here); !s.ok()) return s;
  }
  FarmHostCompileResult result;
  result.cache_hit = true;
  result.stdout_text = base_dir_.TextFromStandIn(entry->stdout_text());
  result.stderr_text = base_dir_.TextFromStandIn(entry->stderr_text());
  return result;
}

absl::Status CrossTreeCache::Record(const FarmHostCompileResult& result,
                                    const farm::v1::Digest& object_digest, ActionClient* actions,
                                    CasClient* cas) const {
  auto log = ComponentLogger("farm-cc");
  if (result.exit_code != 0) return absl::OkStatus();
  auto object = ReadFileContents(outputs_.object);
  if (!object.ok()) return object.status();
  // Diagnostics are replayed byte for byte, and an entry's text is a protobuf string (UTF-8):
  // a compile that printed other bytes (a Latin-1 source line under a caret) keeps none.
  if (!IsValidUtf8(result.stdout_text) || !IsValidUtf8(result.stderr_text)) {
    log->debug("{}: no cross-tree entry: its output is not UTF-8", outputs_.object);
    return absl::OkStatus();
  }
  if (base_dir_.IsNamedIn(*object)) {
    log->debug("{}: no cross-tree entry: the object names {} (debug info, __FILE__)",
               outputs_.object, base_dir_.path());
    return absl::OkStatus();
  }
  farm::v1::CompileResult entry;
  auto* obj = entry.add_outputs();
  obj->set_path(kObjectRole);
  *obj->mutable_digest() = object_digest;
  if (!outputs_.depfile.empty()) {
    auto text = ReadFileContents(outputs_.depfile);
    if (!text.ok()) return text.status();
    auto stand_in = cc::RewriteDepfilePaths(
        *text, family_, [&](absl::string_view path) { return base_dir_.ToStandInWord(path); });
    if (!stand_in.ok()) {
      log->debug("{}: no cross-tree entry: {}", outputs_.object, stand_in.status().message());
      return absl::OkStatus();
    }
    auto uploaded = cas->UploadBytes(*stand_in);
    if (!uploaded.ok()) return uploaded.status();
    auto* dep = entry.add_outputs();
    dep->set_path(kDependencyFileRole);
    *dep->mutable_digest() = *uploaded;
  }
  entry.set_stdout_text(base_dir_.TextToStandIn(result.stdout_text));
  entry.set_stderr_text(base_dir_.TextToStandIn(result.stderr_text));
  return actions->PutCompileResult(key_, entry);
}

}  // namespace farm
