#include "farm_cc/farm_host_compile.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "farm_cc/cross_tree_cache.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/actions/action_logs.h"
#include "libfarm/cc/file_tree_builder.h"
#include "libfarm/digest/digest.h"
#include "libfarm/file_tree/file_tree.h"
#include "libfarm/files/file_lock.h"
#include "libfarm/launcher/fallback_reason.h"
#include "libfarm/logging/logger.h"
#include "libfarm/status/status_macros.h"
#include "libfarm/time/proto_time.h"
#include "libfarm/units/byte_size.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

// Long C++ compiles exist (template-heavy units take many minutes); an hour ends a hung one.
constexpr uint32_t kHostActionTimeoutSeconds = 3600;
constexpr size_t kMaxHistoryKeyBytes = 256;

// What makes the compile run here, with the code it is counted by.
absl::Status Local(farm::v1::FallbackReason code, const std::string& why) {
  return WithFallbackReason(absl::FailedPreconditionError(why), code);
}

// An absolute path the way the call means it, and whether the host reaches it without a link
// (the worker makes the directories of the working directory and the outputs as real ones).
absl::StatusOr<std::string> RealOutputPath(const std::string& path, const std::string& cwd) {
  const fs::path absolute = (fs::path(cwd) / path).lexically_normal();
  std::error_code ec;
  const fs::path parent = fs::canonical(absolute.parent_path(), ec);
  if (ec) {
    return Local(farm::v1::FALLBACK_REASON_INPUTS,
                 absl::StrCat("the directory of '", path, "' does not exist"));
  }
  if (parent != absolute.parent_path()) {
    return Local(farm::v1::FALLBACK_REASON_INPUTS,
                 absl::StrCat("'", path, "' lies in a directory reached through a link"));
  }
  return absolute.string();
}

}  // namespace

absl::Status NoWorkerForToolchain(const farm::v1::ActionStatus& status,
                                  const std::string& cpu_arch) {
  if (!status.unplaceable()) return absl::OkStatus();
  // The scheduler's per-worker refusals, cut short: the reason is reported with the call (the
  // coordinator takes at most 1 KiB), counted by its code.
  std::string detail = status.placement_refusals().empty()
                           ? "no worker is online"
                           : absl::StrJoin(status.placement_refusals(), "; ");
  constexpr size_t kMaxDetailBytes = 400;
  if (detail.size() > kMaxDetailBytes) {
    detail = absl::StrCat(detail.substr(0, kMaxDetailBytes), "...");
  }
  return Local(farm::v1::FALLBACK_REASON_NO_WORKER,
               absl::StrCat("no online ", cpu_arch, " worker with a sandbox to run this ", cpu_arch,
                            " toolchain: ", detail, ". Fix: start farm-worker on an ", cpu_arch,
                            " machine with bubblewrap installed and without --no-sandbox, or "
                            "set FARM_CC_DISABLE=1 to compile here without asking the farm"));
}

namespace {

// What a compile needs in the CAS: both trees and every file they name, each file by the
// local path it is read from.
class UploadPlan {
 public:
  UploadPlan(const CompileInputs& inputs, const cc::HostToolchainFiles& toolchain)
      : inputs_(inputs), toolchain_(toolchain) {
    toolchain_wanted_ = {toolchain.tree_digest};
    tree_bytes_.emplace(inputs.digest.hash(), &inputs.bytes);
    trees_ = {inputs.digest};
    for (const auto& [digest, bytes] : inputs.subtrees) {
      tree_bytes_.emplace(digest.hash(), &bytes);
      trees_.push_back(digest);
    }
    for (const farm::v1::FileTree* tree : {&toolchain.tree, &inputs.tree}) {
      for (const farm::v1::InputFile& f : tree->files()) {
        if (!f.symlink_target().empty() || f.directory() ||
            !path_of_.emplace(f.digest().hash(), "/" + f.path()).second) {
          continue;
        }
        if (tree == &toolchain.tree) {
          toolchain_files_.insert(f.digest().hash());
          toolchain_wanted_.push_back(f.digest());
        } else {
          input_files_.push_back(f.digest());
        }
      }
    }
  }

  // Every blob the compile needs that the CAS lacks. The toolchain's by name; the input tree's
  // by its tree blobs, which the coordinator walks, and then by name only the files of the
  // tree blobs it lacks (its directories that are new): a compile whose headers' directories
  // are stored asks about a few hundred digests, not thousands.
  absl::StatusOr<std::vector<farm::v1::Digest>> FindMissing(CasClient* cas) {
    Asked(toolchain_wanted_);
    Asked(trees_);
    FARM_ASSIGN_OR_RETURN(std::optional<std::vector<farm::v1::Digest>> walked,
                          cas->FindMissingWithTrees(toolchain_wanted_, trees_));
    if (!walked.has_value()) {
      // A coordinator that does not walk trees: everything again, by name.
      ComponentLogger("farm-cc")->debug(
          "the coordinator does not walk trees (an older one): asking about every file");
      std::vector<farm::v1::Digest> all = toolchain_wanted_;
      all.insert(all.end(), trees_.begin(), trees_.end());
      all.insert(all.end(), input_files_.begin(), input_files_.end());
      Asked(all);
      return cas->FindMissing(all);
    }
    std::vector<farm::v1::Digest> missing = *std::move(walked);
    std::vector<farm::v1::Digest> unseen;  // the files of the tree blobs the CAS lacks
    std::set<std::string> listed;
    for (const farm::v1::Digest& d : missing) {
      auto tree = tree_bytes_.find(d.hash());
      if (tree == tree_bytes_.end()) continue;
      farm::v1::FileTree part;
      if (!part.ParseFromString(*tree->second)) {
        return absl::InternalError("farm-cc's own tree blob does not parse");
      }
      for (const farm::v1::InputFile& f : part.files()) {
        if (f.directory() || !f.symlink_target().empty()) continue;
        if (listed.insert(f.digest().hash()).second) unseen.push_back(f.digest());
      }
    }
    if (!unseen.empty()) {
      Asked(unseen);
      FARM_ASSIGN_OR_RETURN(std::vector<farm::v1::Digest> more, cas->FindMissing(unseen));
      missing.insert(missing.end(), more.begin(), more.end());
    }
    return missing;
  }

  // The toolchain's tree or one of its files.
  bool IsToolchains(const farm::v1::Digest& d) const {
    return d.hash() == toolchain_.tree_digest.hash() || toolchain_files_.count(d.hash()) != 0;
  }

  absl::Status Upload(const std::vector<farm::v1::Digest>& digests, CasClient* cas) {
    for (const farm::v1::Digest& d : digests) {
      absl::StatusOr<farm::v1::Digest> uploaded;
      std::string what;
      if (auto tree = tree_bytes_.find(d.hash()); tree != tree_bytes_.end()) {
        what = "the input tree or one of its directories";
        uploaded = cas->UploadBytes(*tree->second);
        sent_.Add(d, true);
      } else if (d.hash() == toolchain_.tree_digest.hash()) {
        what = "the cached toolchain tree";
        uploaded = cas->UploadBytes(SerializeFileTree(toolchain_.tree));
        sent_.toolchain_bytes += d.size_bytes();
      } else {
        if (IsToolchains(d)) {
          sent_.toolchain_bytes += d.size_bytes();
        } else {
          sent_.Add(d, false);
        }
        auto it = path_of_.find(d.hash());
        if (it == path_of_.end()) {
          return absl::InternalError(absl::StrCat("the CAS lacks ", d.hash(), ", no file of ours"));
        }
        what = it->second;
        uploaded = cas->UploadFile(what);
      }
      if (!uploaded.ok()) return uploaded.status();
      if (uploaded->hash() != d.hash()) {
        return absl::AbortedError(absl::StrCat(what, " changed while farm-cc read it"));
      }
    }
    return absl::OkStatus();
  }

  // "a tree of 5652 entries in 122 blobs (970.6 KiB flat); asked about 154 blobs (10.7 KiB);
  // sent 4 tree blobs (495 B), 0 files (0 B) and the toolchain (0 B)": what this call cost
  // the network, for FARM_CC_LOG=debug and the benches.
  std::string SentSummary() const {
    return absl::StrCat("a tree of ", inputs_.tree.files_size(), " entries in ", trees_.size(),
                        " blobs (", FormatByteSize(SerializeFileTree(inputs_.tree).size()),
                        " flat); asked about ", asked_, " blobs (", FormatByteSize(asked_bytes_),
                        "); sent ", sent_.tree_blobs, " tree blobs (",
                        FormatByteSize(sent_.tree_bytes), "), ", sent_.files, " files (",
                        FormatByteSize(sent_.file_bytes), ") and the toolchain (",
                        FormatByteSize(sent_.toolchain_bytes), ")");
  }

 private:
  struct Sent {
    int tree_blobs = 0;
    int files = 0;
    int64_t tree_bytes = 0;
    int64_t file_bytes = 0;
    int64_t toolchain_bytes = 0;  // its tree and files
    void Add(const farm::v1::Digest& d, bool tree) {
      (tree ? tree_blobs : files) += 1;
      (tree ? tree_bytes : file_bytes) += d.size_bytes();
    }
  };
  void Asked(const std::vector<farm::v1::Digest>& digests) {
    asked_ += digests.size();
    for (const farm::v1::Digest& d : digests) asked_bytes_ += d.ByteSizeLong() + 2;
  }

  Sent sent_;
  size_t asked_ = 0;                                // digests named in FindMissing calls
  size_t asked_bytes_ = 0;                          // about what they took on the wire
  std::vector<farm::v1::Digest> toolchain_wanted_;  // its tree and files
  std::vector<farm::v1::Digest> trees_;             // the input tree's blobs, root first
  std::vector<farm::v1::Digest> input_files_;       // the input tree's files, each once
  const CompileInputs& inputs_;
  const cc::HostToolchainFiles& toolchain_;
  std::map<std::string, std::string> path_of_;            // file hash -> local file
  std::map<std::string, const std::string*> tree_bytes_;  // hash -> the input tree's blob
  std::set<std::string> toolchain_files_;
};

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> CompileEnvironment(
    const std::map<std::string, std::string>& env, const std::string& cwd) {
  for (const char* name :
       {"DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES", "LD_PRELOAD", "GCC_COMPARE_DEBUG"}) {
    if (env.count(name) != 0) {
      return Local(farm::v1::FALLBACK_REASON_ENVIRONMENT, absl::StrCat(name, " is set"));
    }
  }
  std::map<std::string, std::string> out;
  for (const char* name :
       {"PATH", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "CPATH", "C_INCLUDE_PATH",
        "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH", "SOURCE_DATE_EPOCH", "COMPILER_PATH",
        "GCC_EXEC_PREFIX", "LD_LIBRARY_PATH"}) {
    if (auto it = env.find(name); it != env.end()) out[name] = it->second;
  }
  // GCC takes PWD as the working directory's name when it is that directory (debug info).
  if (auto it = env.find("PWD"); it != env.end()) {
    std::error_code ec;
    if (it->second == cwd) {
      out["PWD"] = cwd;
    } else if (fs::equivalent(it->second, cwd, ec)) {
      return Local(farm::v1::FALLBACK_REASON_ENVIRONMENT,
                   "PWD names the working directory through a link");
    }
  }
  return out;
}

absl::StatusOr<FarmHostCompileResult> CompileOnFarm(
    const CcInvocation& call, const cc::CcCompilePlan& plan,
    const cc::HostToolchainFiles& toolchain, const CompileInputs& inputs,
    const std::map<std::string, std::string>& action_env, const std::string& cwd,
    const FarmCcConfig& options, ActionClient* actions, CasClient* cas, CallClock& clock) {
  std::error_code ec;
  if (fs::canonical(cwd, ec) != fs::path(cwd) || ec) {
    return Local(farm::v1::FALLBACK_REASON_INPUTS,
                 "the working directory is reached through a link");
  }

  std::vector<std::string> outputs;
  std::vector<std::pair<std::string, std::string>> local_outputs;  // {absolute, as named}
  for (const std::string* named : {&plan.object, &plan.depfile}) {
    if (named->empty()) continue;
    auto absolute = RealOutputPath(*named, cwd);
    if (!absolute.ok()) return absolute.status();
    outputs.push_back(absolute->substr(1));
    local_outputs.emplace_back(*absolute, *named);
  }

  farm::v1::Action action;
  action.add_argv(call.compiler);
  for (const std::string& arg : call.args) action.add_argv(arg);
  action.mutable_env()->insert(action_env.begin(), action_env.end());
  for (const std::string& out : outputs) action.add_output_paths(out);
  action.set_working_directory(cwd);
  auto* t = action.mutable_toolchain();
  *t->mutable_tree() = toolchain.tree_digest;
  t->set_compiler(toolchain.compiler);
  t->set_cpu_arch(toolchain.cpu_arch);
  *action.mutable_input_tree() = inputs.digest;
  auto* req = action.mutable_requirements();
  req->set_os("linux");
  req->set_cpu_arch(toolchain.cpu_arch);
  req->set_sandbox(true);
  action.set_timeout_seconds(kHostActionTimeoutSeconds);
  action.set_build_id(options.build_id);
  action.set_shard("host");
  action.set_history_key(plan.source.substr(0, kMaxHistoryKeyBytes));

  // Another tree's compile of the same files may have left the answer (cross_tree_cache.h).
  std::optional<CrossTreeCache> cross_tree;
  if (options.base_dir) {
    auto cache = CrossTreeCache::ForCompile(
        *options.base_dir, action, inputs.tree, toolchain.tree, plan.family,
        {local_outputs[0].first, plan.depfile.empty() ? "" : local_outputs[1].first});
    if (cache.ok()) {
      cross_tree = *std::move(cache);
      // A cache that cannot answer is a miss: the compile still runs on the farm.
      auto hit = cross_tree->Restore(actions, cas);
      // Its outputs written back on a hit; a lookup on a miss.
      clock.Mark("cross-tree cache", hit.ok() && *hit ? "download" : "other");
      if (!hit.ok()) {
        ComponentLogger("farm-cc")->warn("{}: cross-tree cache not read: {}", plan.source,
                                         hit.status().message());
      } else if (*hit) {
        return **std::move(hit);
      }
    } else {
      ComponentLogger("farm-cc")->debug("{}: no cross-tree key: {}", plan.source,
                                        cache.status().message());
    }
  }

  // Only what the CAS lacks is sent (UploadPlan::FindMissing).
  UploadPlan uploads(inputs, toolchain);
  auto missing = uploads.FindMissing(cas);
  if (!missing.ok()) return missing.status();
  std::vector<farm::v1::Digest> missing_toolchain, missing_inputs;
  for (const farm::v1::Digest& d : *missing) {
    (uploads.IsToolchains(d) ? missing_toolchain : missing_inputs).push_back(d);
  }
  if (!missing_toolchain.empty()) {
    // The calls a build starts at once all miss a new toolchain: one sends it (~70 MB for
    // g++), the others wait for it and then find it stored.
    std::optional<FileLock> lock;
    auto taken =
        FileLock::Acquire(absl::StrCat(options.cache_dir, "/toolchain-",
                                       toolchain.tree_digest.hash().substr(0, 32), ".upload.lock"),
                          [] {});
    if (taken.ok()) {
      lock.emplace(*std::move(taken));
      auto still = cas->FindMissing(missing_toolchain);
      if (!still.ok()) return still.status();
      missing_toolchain = *std::move(still);
    } else {
      ComponentLogger("farm-cc")->debug("toolchain upload unlocked: {}", taken.status().message());
    }
    if (absl::Status s = uploads.Upload(missing_toolchain, cas); !s.ok()) return s;
  }
  if (absl::Status s = uploads.Upload(missing_inputs, cas); !s.ok()) return s;

  clock.Mark("upload", "upload");
  if (auto log = ComponentLogger("farm-cc"); log->should_log(spdlog::level::debug)) {
    log->debug("{}: {}", plan.source, uploads.SentSummary());
  }

  auto submitted = actions->Execute({action});
  if (!submitted.ok()) return submitted.status();
  auto done = actions->WaitAll({submitted->front().action_id()},
                               absl::Seconds(kHostActionTimeoutSeconds + 600));
  if (!done.ok()) return done.status();
  // WaitAll answers with the latest statuses it has at its deadline: none when the coordinator
  // was away all along, a queued or running one when the compile outlasted the wait.
  if (done->size() != 1) {
    return absl::UnavailableError(
        "the compile did not run on the farm: the coordinator did not answer before the wait's "
        "deadline");
  }
  if (const farm::v1::ActionStatus& st = done->front();
      st.state() != farm::v1::ACTION_STATE_COMPLETED) {
    if (absl::Status none = NoWorkerForToolchain(st, toolchain.cpu_arch); !none.ok()) {
      return none;
    }
    std::string why = st.error();
    if (why.empty()) {
      const bool ended = IsTerminalActionState(st.state());
      why = absl::StrCat(ended ? "it ended " : "still ", farm::v1::ActionState_Name(st.state()),
                         ended ? "" : " at the wait's deadline");
    }
    return absl::UnavailableError(absl::StrCat("the compile did not run on the farm: ", why));
  }
  clock.Mark("farm", "other");
  const farm::v1::ActionStatus& status = done->front();
  const farm::v1::ActionResult& r = status.result();
  // A result from the action cache ran before this call: nothing of this call's time.
  if (!r.cache_hit()) clock.AddFarmPhases(r.phases());
  if (status.has_started_at() && status.has_finished_at()) {
    clock.Note("on the worker",
               FromProtoTime(status.finished_at()) - FromProtoTime(status.started_at()));
  }
  FarmHostCompileResult result;
  result.exit_code = r.exit_code();
  result.cache_hit = r.cache_hit();
  result.worker = r.worker();
  auto out = ActionLogText(cas, r.stdout_digest(), r.stdout_tail());
  if (!out.ok()) return out.status();
  auto err = ActionLogText(cas, r.stderr_digest(), r.stderr_tail());
  if (!err.ok()) return err.status();
  result.stdout_text = *std::move(out);
  result.stderr_text = *std::move(err);
  if (result.exit_code != 0) return result;
  std::map<std::string, farm::v1::Digest> by_path;
  for (const auto& o : r.outputs()) by_path[o.path()] = o.digest();
  for (const auto& [absolute, named] : local_outputs) {
    auto it = by_path.find(absolute.substr(1));
    if (it == by_path.end()) {
      return absl::DataLossError(absl::StrCat("the farm's compile wrote no '", named, "'"));
    }
    if (absl::Status s = cas->DownloadToFile(it->second, absolute); !s.ok()) return s;
  }
  clock.Mark("download", "download");
  if (cross_tree) {
    const farm::v1::Digest& object = by_path[local_outputs[0].first.substr(1)];
    if (absl::Status s = cross_tree->Record(result, object, actions, cas); !s.ok()) {
      // The object is here; only the next tree misses it.
      ComponentLogger("farm-cc")->warn("{}: cross-tree cache entry not kept: {}", plan.source,
                                       s.message());
    }
    clock.Mark("cross-tree record", "other");
  }
  return result;
}

}  // namespace farm
