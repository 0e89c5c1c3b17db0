#include "libfarm/nvcc/compile_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libfarm/cas/digest.h"
#include "libfarm/cas/sha256.h"
#include "libfarm/process/path_search.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

// Bumped when what the key covers changes.
constexpr char kKeyVersion[] = "farm-nvcc compile cache 1";

// nvcc and its host compiler are identified cheaply by path, size and mtime, as ccache does.
std::string ToolIdentity(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return absl::StrCat(path, " missing");
  return absl::StrCat(path, " ", st.st_size, " ", st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec);
}

void AddField(Sha256& hash, absl::string_view name, absl::string_view value) {
  // Length-prefixed, so no two field lists hash alike.
  hash.Update(absl::StrCat(name.size(), ":", name, "=", value.size(), ":"));
  hash.Update(value);
}

}  // namespace

absl::StatusOr<std::string> CompileCacheKey(const std::string& nvcc,
                                            const NvccCommandLine& command) {
  if (command.inputs.size() != 1) {
    return absl::UnimplementedError("the compile cache takes one source file");
  }
  auto source = DigestOfFile(command.inputs[0]);
  if (!source.ok()) return source.status();
  std::error_code ec;
  const std::string cwd = fs::current_path(ec).string();
  if (ec) return absl::InternalError("cannot read the working directory");

  Sha256 hash;
  AddField(hash, "version", kKeyVersion);
  AddField(hash, "nvcc", ToolIdentity(nvcc));
  const char* path = std::getenv("PATH");
  for (const char* host : {"gcc", "g++", "cc", "c++"}) {
    AddField(hash, host, ToolIdentity(FindOnPath(host, path ? path : "").value_or("")));
  }
  AddField(hash, "cwd", cwd);
  for (const std::string& arg : command.args) AddField(hash, "arg", arg);
  for (const char* name : {"NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN", "CPATH",
                           "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "CUDA_HOME", "PATH"}) {
    const char* value = std::getenv(name);
    AddField(hash, name, value == nullptr ? "<unset>" : value);
  }
  AddField(hash, "source", source->hash());
  return hash.FinishHex();
}

std::vector<std::string> IncludedFiles(const std::vector<LineMarkerFile>& marked_files,
                                       const std::string& skip_dir) {
  std::set<std::string> files;
  for (const LineMarkerFile& marked : marked_files) {
    std::error_code ec;
    std::string file = fs::absolute(marked.path, ec).lexically_normal().string();
    if (ec) continue;
    if (!skip_dir.empty() && absl::StartsWith(file, skip_dir + "/")) continue;
    files.insert(std::move(file));
  }
  return {files.begin(), files.end()};
}

std::vector<std::string> CompileCacheOutputs(const NvccCommandLine& command) {
  std::vector<std::string> outputs = {command.output};
  if (command.dependencies.with_compile && !command.dependencies.file.empty()) {
    outputs.push_back(command.dependencies.file);
  }
  return outputs;
}

absl::Status CheckRestorableOutputs(const farm::v1::CompileResult& entry,
                                    const std::vector<std::string>& expected) {
  const std::set<std::string> allowed(expected.begin(), expected.end());
  std::set<std::string> seen;
  for (const auto& out : entry.outputs()) {
    // Compared as spelled: the key covers the working directory and every argument, so an
    // honest entry names the outputs exactly as this call does.
    if (!allowed.contains(out.path())) {
      return absl::PermissionDeniedError(absl::StrCat(
          "compile cache entry refused: it would write '", out.path(),
          "', which this nvcc call does not name as an output. Fix: find who can write to the "
          "farm's compile cache with the farm token; the compile runs normally"));
    }
    if (!seen.insert(out.path()).second) {
      return absl::PermissionDeniedError(
          absl::StrCat("compile cache entry refused: it lists '", out.path(), "' twice"));
    }
  }
  for (const std::string& path : allowed) {
    if (!seen.contains(path)) {
      return absl::PermissionDeniedError(absl::StrCat(
          "compile cache entry refused: it does not restore '", path, "', which this call writes"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<farm::v1::CompileResult>> CompileCache::Restore(
    const std::string& key, const std::vector<std::string>& expected_outputs) {
  auto entry = actions_->GetCompileResult(key);
  if (!entry.ok()) {
    if (entry.status().code() == absl::StatusCode::kNotFound) return std::nullopt;
    return entry.status();
  }
  // Checked before anything else: nothing is written unless every path is ours.
  if (absl::Status s = CheckRestorableOutputs(*entry, expected_outputs); !s.ok()) return s;
  for (const auto& dep : entry->dependencies()) {
    auto now = DigestOfFile(dep.path());
    if (!now.ok() || now->hash() != dep.sha256()) return std::nullopt;
  }
  for (const auto& out : entry->outputs()) {
    if (absl::Status s = cas_->DownloadToFile(out.digest(), out.path()); !s.ok()) return s;
  }
  return *std::move(entry);
}

absl::Status CompileCache::Record(const std::string& key,
                                  const std::vector<std::string>& dependencies,
                                  const std::vector<std::string>& outputs,
                                  const std::string& stdout_text, const std::string& stderr_text) {
  farm::v1::CompileResult result;
  for (const std::string& path : dependencies) {
    auto digest = DigestOfFile(path);
    if (!digest.ok()) return digest.status();
    auto* dep = result.add_dependencies();
    dep->set_path(path);
    dep->set_sha256(digest->hash());
  }
  for (const std::string& path : outputs) {
    auto digest = cas_->UploadFile(path);
    if (!digest.ok()) return digest.status();
    auto* out = result.add_outputs();
    out->set_path(path);
    *out->mutable_digest() = *digest;
  }
  result.set_stdout_text(stdout_text);
  result.set_stderr_text(stderr_text);
  return actions_->PutCompileResult(key, result);
}

}  // namespace farm
