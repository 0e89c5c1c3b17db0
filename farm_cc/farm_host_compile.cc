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
    wanted_ = {toolchain.tree_digest, inputs.digest};
    for (const auto& [digest, bytes] : inputs.subtrees) {
      subtree_bytes_.emplace(digest.hash(), &bytes);
      wanted_.push_back(digest);
    }
    for (const farm::v1::FileTree* tree : {&toolchain.tree, &inputs.tree}) {
      for (const farm::v1::InputFile& f : tree->files()) {
        if (!f.symlink_target().empty() || f.directory() ||
            !path_of_.emplace(f.digest().hash(), "/" + f.path()).second) {
          continue;
        }
        if (tree == &toolchain.tree) toolchain_files_.insert(f.digest().hash());
        wanted_.push_back(f.digest());
      }
    }
  }

  // Every blob the compile needs, each once.
  const std::vector<farm::v1::Digest>& wanted() const { return wanted_; }

  // The toolchain's tree or one of its files.
  bool IsToolchains(const farm::v1::Digest& d) const {
    return d.hash() == toolchain_.tree_digest.hash() || toolchain_files_.count(d.hash()) != 0;
  }

  absl::Status Upload(const std::vector<farm::v1::Digest>& digests, CasClient* cas) {
    for (const farm::v1::Digest& d : digests) {
      absl::StatusOr<farm::v1::Digest> uploaded;
      std::string what;
      if (d.hash() == inputs_.digest.hash()) {
        what = "the input tree";
        uploaded = cas->UploadBytes(inputs_.bytes);
        sent_.Add(d, true);
      } else if (auto subtree = subtree_bytes_.find(d.hash()); subtree != subtree_bytes_.end()) {
        what = "a directory of the input tree";
        uploaded = cas->UploadBytes(*subtree->second);
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

  // "asked about 5701 blobs (395.5 KiB); sent 3 of 212 tree blobs (4.1 KiB), 1 files
  // (2.0 KiB) and the toolchain (0 B); the input tree flat: 612 KiB": what this call cost
  // the network, for FARM_CC_LOG=debug and the benches.
  std::string SentSummary() const {
    size_t asked_bytes = 0;
    for (const farm::v1::Digest& d : wanted_) asked_bytes += d.ByteSizeLong() + 2;
    return absl::StrCat("asked about ", wanted_.size(), " blobs (", FormatByteSize(asked_bytes),
                        "); sent ", sent_.tree_blobs, " of ", 1 + inputs_.subtrees.size(),
                        " tree blobs (", FormatByteSize(sent_.tree_bytes), "), ", sent_.files,
                        " files (", FormatByteSize(sent_.file_bytes), ") and the toolchain (",
                        FormatByteSize(sent_.toolchain_bytes), "); the input tree flat: ",
                        FormatByteSize(SerializeFileTree(inputs_.tree).size()));
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
  Sent sent_;
  std::vector<farm::v1::Digest> wanted_;
  const CompileInputs& inputs_;
  const cc::HostToolchainFiles& toolchain_;
  std::map<std::string, std::string> path_of_;               // file hash -> local file
  std::map<std::string, const std::string*> subtree_bytes_;  // hash -> the input tree's blob
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

  // One question to the CAS for both trees and every file they name (the toolchain's digest
  // comes with its cached closure); only what it lacks is sent.
  UploadPlan uploads(inputs, toolchain);
  auto missing = cas->FindMissing(uploads.wanted());
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
