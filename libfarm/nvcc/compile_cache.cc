#include "libfarm/nvcc/compile_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "absl/strings/ascii.h"
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

std::vector<std::string> IncludedFiles(const std::string& text, const std::string& skip_dir) {
  std::set<std::string> files;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    absl::string_view line(text.data() + at, end - at);
    at = end + 1;
    // Only line markers: "# 12 "/usr/include/stdio.h" 1 3 4" (gcc) or "#line 12 "file"";
    // not "#pragma ... "-Wfoo"".
    if (line.empty() || line[0] != '#') continue;
    size_t pos = 1;
    while (pos < line.size() && line[pos] == ' ') ++pos;
    if (line.substr(pos, 4) == "line") pos += 4;
    while (pos < line.size() && line[pos] == ' ') ++pos;
    const size_t digits = pos;
    while (pos < line.size() && absl::ascii_isdigit(static_cast<unsigned char>(line[pos]))) ++pos;
    if (pos == digits || pos + 1 >= line.size() || line[pos] != ' ' || line[pos + 1] != '"') {
      continue;
    }
    const size_t open = pos + 1;
    const size_t close = line.find('"', open + 1);
    if (close == absl::string_view::npos) continue;
    std::string file(line.substr(open + 1, close - open - 1));
    if (file.empty() || file[0] == '<') continue;  // <built-in>, <command-line>
    std::error_code ec;
    fs::path p = fs::absolute(file, ec).lexically_normal();
    if (ec) continue;
    file = p.string();
    if (!skip_dir.empty() && absl::StartsWith(file, skip_dir + "/")) continue;
    files.insert(std::move(file));
  }
  return {files.begin(), files.end()};
}

absl::StatusOr<std::optional<farm::v1::CompileResult>> CompileCache::Restore(
    const std::string& key) {
  auto entry = actions_->GetCompileResult(key);
  if (!entry.ok()) {
    if (entry.status().code() == absl::StatusCode::kNotFound) return std::nullopt;
    return entry.status();
  }
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
