#include "libfarm/nvcc/device_job.h"

#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/nvcc/shell_words.h"

namespace farm {
namespace {

constexpr absl::string_view kRootVariable = "FARM_CUDA_ROOT";
// Marks where the toolkit root stood in a word until it is quoted for the shell.
constexpr char kRootMark = '\x01';

std::string EnvValue(const NvccDryrun& dryrun, absl::string_view name) {
  std::string value;
  for (const auto& [n, v] : dryrun.environment) {
    if (n == name) value = v;  // later assignments win, as in the shell
  }
  return value;
}

// Rewrites one word of a device step for the worker: temporaries become bare names in the
// scratch dir, the local toolkit root becomes a mark for $FARM_CUDA_ROOT.
class WordRewriter {
 public:
  WordRewriter(const NvccDryrun& dryrun, const std::string& temp_dir)
      : temp_prefix_(temp_dir + "/") {
    // nvcc spells the root "$_HERE_/.." (TOP) and its bin dir as _HERE_; replace the longer
    // spelling first.
    const std::string top = EnvValue(dryrun, "TOP");
    const std::string here = EnvValue(dryrun, "_HERE_");
    if (!top.empty()) roots_.emplace_back(top, std::string(1, kRootMark));
    if (!here.empty()) roots_.emplace_back(here, std::string(1, kRootMark) + "/bin");
  }

  std::string Rewrite(const std::string& word) const {
    std::string out = StripTempPrefixes(word);
    for (const auto& [from, to] : roots_) out = absl::StrReplaceAll(out, {{from, to}});
    return out;
  }

  // A scratch-dir name for a temporary nvcc planned; refuses anything else.
  absl::StatusOr<std::string> ScratchName(const std::string& local_path) const {
    if (!absl::StartsWith(local_path, temp_prefix_)) {
      return absl::UnimplementedError(absl::StrCat("not decomposable: device step file '",
                                                   local_path, "' is not an nvcc temporary"));
    }
    std::string name = StripTempPrefixes(local_path);
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
      return absl::UnimplementedError(
          absl::StrCat("not decomposable: unexpected temporary '", local_path, "'"));
    }
    return name;
  }

 private:
  // "<temp>/farm-8_k.compute_75.ptx" -> "k.compute_75.ptx". nvcc numbers its temporaries in
  // plan order, so the number of an arch's files changes when archs are added; without it the
  // names are unique within a job and the same whatever else the build compiles.
  std::string StripTempPrefixes(const std::string& word) const {
    std::string out;
    size_t at = 0;
    while (true) {
      const size_t hit = word.find(temp_prefix_, at);
      out += word.substr(at, hit == std::string::npos ? hit : hit - at);
      if (hit == std::string::npos) break;
      at = hit + temp_prefix_.size();
      size_t digits = at + 5;
      if (word.compare(at, 5, "farm-") == 0) {
        while (digits < word.size() &&
               absl::ascii_isdigit(static_cast<unsigned char>(word[digits])))
          ++digits;
        if (digits > at + 5 && digits < word.size() && word[digits] == '_') at = digits + 1;
      }
    }
    return out;
  }

  std::string temp_prefix_;
  std::vector<std::pair<std::string, std::string>> roots_;
};

// Quotes a rewritten word for sh, turning each root mark into "$FARM_CUDA_ROOT".
std::string QuoteWord(const std::string& word) {
  std::string out;
  size_t start = 0;
  while (true) {
    const size_t mark = word.find(kRootMark, start);
    const std::string part = word.substr(start, mark == std::string::npos ? mark : mark - start);
    if (!part.empty()) out += ShellQuote(part);
    if (mark == std::string::npos) break;
    absl::StrAppend(&out, "\"$", kRootVariable, "\"");
    start = mark + 1;
  }
  return out.empty() ? "''" : out;
}

// The environment lines the device steps see. PATH-like values keep only their toolkit
// entries: the rest is this host's and would make every user's actions differ.
std::string EnvironmentLines(const NvccDryrun& dryrun, const WordRewriter& rewriter) {
  std::map<std::string, std::string> values;
  for (const auto& [name, value] : dryrun.environment) values[name] = value;
  std::string lines;
  for (const auto& [name, value] : values) {
    if (name == "PATH" || name == "LD_LIBRARY_PATH") continue;
    absl::StrAppend(&lines, name, "=", QuoteWord(rewriter.Rewrite(value)), "; export ", name, "\n");
  }
  absl::StrAppend(&lines, "PATH=\"$", kRootVariable, "/nvvm/bin:$", kRootVariable,
                  "/bin:$PATH\"; export PATH\n");
  absl::StrAppend(&lines, "LD_LIBRARY_PATH=\"$", kRootVariable, "/lib\"; export LD_LIBRARY_PATH\n");
  return lines;
}

std::string CommandLine(const NvccDryrun& dryrun, const DryrunStep& step,
                        const WordRewriter& rewriter) {
  std::string line;
  for (const std::string& word : ExpandedArgv(dryrun, step)) {
    if (!line.empty()) line += ' ';
    line += QuoteWord(rewriter.Rewrite(word));
  }
  return line;
}

absl::Status AddFile(const WordRewriter& rewriter, const std::string& local_path,
                     std::vector<DeviceJobFile>& files) {
  auto name = rewriter.ScratchName(local_path);
  if (!name.ok()) return name.status();
  for (const auto& f : files) {
    if (f.name == *name) return absl::OkStatus();
  }
  files.push_back({local_path, *name});
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<DeviceJob>> PlanDeviceJobs(const NvccDryrun& dryrun,
                                                      const std::string& temp_dir) {
  const WordRewriter rewriter(dryrun, temp_dir);
  const std::string environment = EnvironmentLines(dryrun, rewriter);
  if (dryrun.module_id_file.empty()) {
    return absl::UnimplementedError("not decomposable: cudafe++ writes no module id file");
  }
  std::vector<DeviceJob> jobs;
  for (const DeviceGroup& group : dryrun.device_groups) {
    DeviceJob job;
    job.virtual_arch = group.virtual_arch;
    for (const auto& [sm, file] : group.cubins) job.sms.push_back(absl::StrCat("sm_", sm));
    job.shard = job.sms.empty() ? group.virtual_arch : job.sms.front();

    const DryrunStep& cicc = dryrun.steps[group.cicc];
    if (!cicc.stdout_redirect.empty() || !cicc.stderr_redirect.empty()) {
      return absl::UnimplementedError("not decomposable: cicc output is redirected");
    }
    std::string script =
        absl::StrCat("set -e\n", environment, CommandLine(dryrun, cicc, rewriter), "\n");
    for (size_t p : group.ptxas) {
      const DryrunStep& ptxas = dryrun.steps[p];
      if (!ptxas.stdout_redirect.empty() || !ptxas.stderr_redirect.empty()) {
        return absl::UnimplementedError("not decomposable: ptxas output is redirected");
      }
      absl::StrAppend(&script, CommandLine(dryrun, ptxas, rewriter), "\n");
    }
    job.script = std::move(script);

    for (const std::string& in : {group.preprocessed_file, dryrun.module_id_file}) {
      if (absl::Status s = AddFile(rewriter, in, job.inputs); !s.ok()) return s;
    }
    if (absl::Status s = AddFile(rewriter, group.ptx_file, job.outputs); !s.ok()) return s;
    for (const auto& [sm, file] : group.cubins) {
      if (absl::Status s = AddFile(rewriter, file, job.outputs); !s.ok()) return s;
    }
    // The host compile includes the stub of the last virtual arch; each job returns its own.
    const std::string stub = DryrunFlagValue(cicc.argv, "--stub_file_name");
    if (!stub.empty()) {
      if (absl::Status s = AddFile(rewriter, stub, job.outputs); !s.ok()) return s;
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

bool HasLineInfo(const DeviceJob& job) {
  // cicc's -generate-line-info and ptxas's --generate-line-info, as nvcc's plan spells them.
  return absl::StrContains(job.script, "-generate-line-info");
}

std::vector<SourceStamp> StampsOfFiles(const std::vector<std::string>& files,
                                       const std::string& cwd, size_t limit) {
  std::vector<SourceStamp> stamps;
  std::set<std::string> seen;
  for (const std::string& file : files) {
    std::filesystem::path p(file);
    if (p.is_relative()) p = std::filesystem::path(cwd) / p;
    std::string path = p.lexically_normal().string();
    struct stat st {};
    if (!seen.insert(path).second || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      continue;
    }
    if (stamps.size() == limit) return {};
    stamps.push_back({std::move(path), static_cast<int64_t>(st.st_mtim.tv_sec),
                      static_cast<uint64_t>(st.st_size)});
  }
  return stamps;
}

std::vector<std::string> PtxSourceFiles(absl::string_view ptx) {
  // `.file 1 "/src/k.cu"`, or with cicc's optional `, mtime, size` after the name.
  std::vector<std::string> files;
  for (absl::string_view line : absl::StrSplit(ptx, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, ".file")) continue;
    const size_t open = line.find('"');
    const size_t close = open == absl::string_view::npos ? open : line.find('"', open + 1);
    if (close == absl::string_view::npos) continue;
    files.emplace_back(line.substr(open + 1, close - open - 1));
  }
  return files;
}

}  // namespace farm
