#include "libfarm/nvcc/nvcc_dryrun.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/nvcc/shell_words.h"
#include "libfarm/process/subprocess.h"

namespace farm {
namespace {

constexpr absl::string_view kStepPrefix = "#$ ";

// "NAME=..." where NAME is a shell identifier: nvcc's environment lines.
bool IsAssignment(absl::string_view line, std::string& name, absl::string_view& value) {
  const size_t eq = line.find('=');
  if (eq == 0 || eq == absl::string_view::npos) return false;
  for (size_t i = 0; i < eq; ++i) {
    const char c = line[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  if (std::isdigit(static_cast<unsigned char>(line[0]))) return false;
  name = std::string(line.substr(0, eq));
  value = line.substr(eq + 1);
  return true;
}

std::string BaseName(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == absl::string_view::npos ? path : path.substr(slash + 1));
}

bool Has(const std::vector<std::string>& argv, absl::string_view word) {
  return std::find(argv.begin(), argv.end(), word) != argv.end();
}

}  // namespace

std::string DryrunFlagValue(const std::vector<std::string>& argv, absl::string_view flag) {
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == flag && i + 1 < argv.size()) return argv[i + 1];
    if (absl::StartsWith(argv[i], flag) && argv[i].size() > flag.size() &&
        argv[i][flag.size()] == '=') {
      return argv[i].substr(flag.size() + 1);
    }
  }
  return "";
}

namespace {

// Moves "> F", ">F", "2> F", "2>F" out of the words into the step.
void TakeRedirections(DryrunStep& step) {
  std::vector<std::string> kept;
  for (size_t i = 0; i < step.argv.size(); ++i) {
    const std::string& w = step.argv[i];
    std::string* target = nullptr;
    absl::string_view rest;
    if (absl::StartsWith(w, "2>")) {
      target = &step.stderr_redirect;
      rest = absl::string_view(w).substr(2);
    } else if (absl::StartsWith(w, ">")) {
      target = &step.stdout_redirect;
      rest = absl::string_view(w).substr(1);
    }
    if (target == nullptr) {
      kept.push_back(w);
      continue;
    }
    if (rest.empty() && i + 1 < step.argv.size()) {
      *target = step.argv[++i];
    } else {
      *target = std::string(rest);
    }
  }
  step.argv = std::move(kept);
}

std::optional<int> CudaArchDefine(const std::vector<std::string>& argv) {
  constexpr absl::string_view kDefine = "-D__CUDA_ARCH__=";
  for (const std::string& w : argv) {
    int value = 0;
    if (absl::StartsWith(w, kDefine) &&
        absl::SimpleAtoi(absl::string_view(w).substr(kDefine.size()), &value)) {
      return value;
    }
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<FatbinImage>> ParseImages(const std::vector<std::string>& argv) {
  std::vector<FatbinImage> images;
  for (const std::string& w : argv) {
    if (!absl::StartsWith(w, "--image")) continue;
    if (!absl::StartsWith(w, "--image3=")) {
      return absl::InvalidArgumentError(absl::StrCat("unknown fatbinary image option: ", w));
    }
    absl::string_view spec = absl::string_view(w).substr(9);
    // file= comes last and is taken whole: a path may contain commas.
    const size_t file_at = spec.find("file=");
    if (file_at == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("fatbinary image without file=: ", w));
    }
    FatbinImage image;
    image.file = std::string(spec.substr(file_at + 5));
    for (absl::string_view kv : absl::StrSplit(spec.substr(0, file_at), ',', absl::SkipEmpty())) {
      if (absl::ConsumePrefix(&kv, "kind=")) image.kind = std::string(kv);
      if (absl::ConsumePrefix(&kv, "sm=")) image.sm = std::string(kv);
    }
    if (image.kind.empty() || image.sm.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("fatbinary image without kind/sm: ", w));
    }
    images.push_back(std::move(image));
  }
  return images;
}

absl::StatusOr<DryrunStep> ParseStep(absl::string_view line) {
  DryrunStep step;
  step.line = std::string(line);
  absl::string_view value;
  if (IsAssignment(line, step.env_name, value)) {
    step.kind = DryrunStepKind::kEnvironment;
    auto words = SplitShellWords(value);
    if (!words.ok()) return words.status();
    step.env_value = absl::StrJoin(*words, " ");
    return step;
  }
  if (absl::StartsWith(absl::StripAsciiWhitespace(line), "-- Filter Dependencies --")) {
    step.kind = DryrunStepKind::kDependencyFilter;
    const size_t gt = line.find('>');
    if (gt != absl::string_view::npos) {
      step.stdout_redirect = std::string(absl::StripAsciiWhitespace(line.substr(gt + 1)));
    }
    return step;
  }
  auto words = SplitShellWords(line);
  if (!words.ok()) return words.status();
  if (words->empty()) return absl::InvalidArgumentError("empty dryrun step");
  step.argv = *std::move(words);
  TakeRedirections(step);
  step.tool = BaseName(step.argv.front());
  step.output = DryrunFlagValue(step.argv, "-o");
  step.cuda_arch = CudaArchDefine(step.argv);
  const std::string& tool = step.tool;
  if (tool == "cudafe++") {
    step.kind = DryrunStepKind::kCudafe;
  } else if (tool == "cicc") {
    step.kind = DryrunStepKind::kCicc;
    step.arch = DryrunFlagValue(step.argv, "-arch");
  } else if (tool == "ptxas") {
    step.kind = DryrunStepKind::kPtxas;
    step.arch = DryrunFlagValue(step.argv, "-arch");
  } else if (tool == "fatbinary") {
    step.kind = DryrunStepKind::kFatbinary;
    auto images = ParseImages(step.argv);
    if (!images.ok()) return images.status();
    step.images = *std::move(images);
  } else if (tool == "nvlink") {
    step.kind = DryrunStepKind::kNvlink;
  } else if (tool == "rm") {
    step.kind = DryrunStepKind::kRemove;
  } else if (tool == "nvprune" || tool == "cuobjdump" || tool == "nvdisasm" || tool == "bin2c" ||
             tool == "cu++filt" || tool == "ar") {
    step.kind = DryrunStepKind::kOther;
  } else if (Has(step.argv, "-E")) {
    // Any other tool is the host compiler (-ccbin may name it anything).
    step.kind =
        step.cuda_arch ? DryrunStepKind::kDevicePreprocess : DryrunStepKind::kHostPreprocess;
  } else if (Has(step.argv, "-c")) {
    step.kind = DryrunStepKind::kHostCompile;
  } else {
    step.kind = DryrunStepKind::kHostLink;
  }
  return step;
}

// Index of the step among `candidates` whose output is one of `step`'s words.
std::optional<size_t> FindProducer(const NvccDryrun& dryrun, const DryrunStep& step,
                                   const std::vector<size_t>& candidates) {
  for (size_t c : candidates) {
    const std::string& out = dryrun.steps[c].output;
    if (!out.empty() && std::find(step.argv.begin() + 1, step.argv.end(), out) != step.argv.end()) {
      return c;
    }
  }
  return std::nullopt;
}

absl::Status GroupDeviceSteps(NvccDryrun& dryrun) {
  const std::vector<size_t> preprocesses = dryrun.StepsOfKind(DryrunStepKind::kDevicePreprocess);
  const std::vector<size_t> ciccs = dryrun.StepsOfKind(DryrunStepKind::kCicc);
  std::map<size_t, size_t> group_of_cicc;
  for (size_t c : ciccs) {
    const DryrunStep& cicc = dryrun.steps[c];
    std::optional<size_t> pre = FindProducer(dryrun, cicc, preprocesses);
    if (!pre) {
      return absl::InvalidArgumentError(
          absl::StrCat("cicc step reads no device preprocess output: ", cicc.line));
    }
    if (cicc.arch.empty() || cicc.output.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("cicc step without -arch or -o: ", cicc.line));
    }
    DeviceGroup group;
    group.virtual_arch = cicc.arch;
    group.cuda_arch = dryrun.steps[*pre].cuda_arch.value_or(0);
    group.preprocess = *pre;
    group.cicc = c;
    group.preprocessed_file = dryrun.steps[*pre].output;
    group.ptx_file = cicc.output;
    group_of_cicc[c] = dryrun.device_groups.size();
    dryrun.device_groups.push_back(std::move(group));
  }
  for (size_t p : dryrun.StepsOfKind(DryrunStepKind::kPtxas)) {
    const DryrunStep& ptxas = dryrun.steps[p];
    std::optional<size_t> cicc = FindProducer(dryrun, ptxas, ciccs);
    if (!cicc) {
      return absl::InvalidArgumentError(
          absl::StrCat("ptxas step reads no cicc output: ", ptxas.line));
    }
    DeviceGroup& group = dryrun.device_groups[group_of_cicc[*cicc]];
    group.ptxas.push_back(p);
    // No -o: a PTX-only target, where ptxas only checks the PTX (sccache #2862).
    if (!ptxas.output.empty()) {
      group.cubins.emplace_back(std::string(absl::StripPrefix(ptxas.arch, "sm_")), ptxas.output);
    }
  }
  if (dryrun.fatbinary) {
    for (const FatbinImage& image : dryrun.steps[*dryrun.fatbinary].images) {
      bool produced = false;
      for (DeviceGroup& group : dryrun.device_groups) {
        if (image.kind == "ptx" && image.file == group.ptx_file) {
          group.ptx_in_fatbin = true;
          produced = true;
        }
        for (const auto& cubin : group.cubins) produced |= cubin.second == image.file;
      }
      for (size_t n : dryrun.StepsOfKind(DryrunStepKind::kNvlink)) {
        produced |= dryrun.steps[n].output == image.file;
      }
      if (!produced) {
        return absl::InvalidArgumentError(
            absl::StrCat("fatbinary embeds ", image.file, ", which no step produces"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

const char* DryrunStepKindName(DryrunStepKind kind) {
  switch (kind) {
    case DryrunStepKind::kEnvironment:
      return "environment";
    case DryrunStepKind::kHostPreprocess:
      return "host-preprocess";
    case DryrunStepKind::kCudafe:
      return "cudafe++";
    case DryrunStepKind::kDevicePreprocess:
      return "device-preprocess";
    case DryrunStepKind::kCicc:
      return "cicc";
    case DryrunStepKind::kPtxas:
      return "ptxas";
    case DryrunStepKind::kFatbinary:
      return "fatbinary";
    case DryrunStepKind::kHostCompile:
      return "host-compile";
    case DryrunStepKind::kHostLink:
      return "host-link";
    case DryrunStepKind::kNvlink:
      return "nvlink";
    case DryrunStepKind::kRemove:
      return "rm";
    case DryrunStepKind::kDependencyFilter:
      return "dependency-filter";
    case DryrunStepKind::kOther:
      return "other";
  }
  return "unknown";
}

std::vector<size_t> NvccDryrun::StepsOfKind(DryrunStepKind kind) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind == kind) out.push_back(i);
  }
  return out;
}

absl::StatusOr<NvccDryrun> ParseNvccDryrun(absl::string_view stderr_text) {
  NvccDryrun dryrun;
  for (absl::string_view line : absl::StrSplit(stderr_text, '\n')) {
    if (!absl::ConsumePrefix(&line, kStepPrefix)) continue;
    absl::ConsumeSuffix(&line, "\r");
    auto step = ParseStep(line);
    if (!step.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("nvcc --dryrun step: ", step.status().message()));
    }
    if (step->kind == DryrunStepKind::kEnvironment) {
      dryrun.environment.emplace_back(step->env_name, step->env_value);
    }
    if (step->kind == DryrunStepKind::kFatbinary) {
      if (dryrun.fatbinary) return absl::InvalidArgumentError("more than one fatbinary step");
      dryrun.fatbinary = dryrun.steps.size();
    }
    if (step->kind == DryrunStepKind::kCudafe) {
      dryrun.module_id_file = DryrunFlagValue(step->argv, "--module_id_file_name");
    }
    dryrun.steps.push_back(*std::move(step));
  }
  if (absl::Status s = GroupDeviceSteps(dryrun); !s.ok()) return s;
  return dryrun;
}

absl::StatusOr<NvccDryrun> RunNvccDryrun(const std::string& nvcc,
                                         const std::vector<std::string>& args,
                                         const std::string& working_dir, absl::Duration timeout,
                                         const std::string& private_temp_dir) {
  std::vector<std::string> argv;
  if (!working_dir.empty()) {
    // RunCommand has no working-directory option; coreutils env changes it for the child.
    argv = {"env", "-C", working_dir};
  }
  argv.push_back(nvcc);
  argv.push_back("--dryrun");
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env;
  if (!private_temp_dir.empty()) env.push_back("TMPDIR=" + private_temp_dir);
  auto run = RunCommand(argv, timeout, env);
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("nvcc --dryrun exited with ", run->exit_code, ": ", run->stderr_text));
  }
  if (private_temp_dir.empty()) return ParseNvccDryrun(run->stderr_text);
  return ParseNvccDryrun(StableTempNames(run->stderr_text));
}

std::string StableTempNames(absl::string_view dryrun_text) {
  static constexpr absl::string_view kPrefix = "tmpxft_";
  // tmpxft_ + 8 hex + _ + 8 hex + '-'
  static constexpr size_t kTagLength = 7 + 8 + 1 + 8 + 1;
  auto is_hex = [](char c) { return absl::ascii_isxdigit(static_cast<unsigned char>(c)); };
  std::string out;
  out.reserve(dryrun_text.size());
  size_t i = 0;
  while (i < dryrun_text.size()) {
    const size_t hit = dryrun_text.find(kPrefix, i);
    if (hit == absl::string_view::npos) break;
    absl::StrAppend(&out, dryrun_text.substr(i, hit - i));
    absl::string_view tag = dryrun_text.substr(hit, kTagLength);
    bool matches = tag.size() == kTagLength && tag[15] == '_' && tag[24] == '-';
    for (size_t k = 7; matches && k < 24; ++k) {
      if (k != 15 && !is_hex(tag[k])) matches = false;
    }
    if (matches) {
      out += "farm-";
      i = hit + kTagLength;
    } else {
      absl::StrAppend(&out, kPrefix);
      i = hit + kPrefix.size();
    }
  }
  absl::StrAppend(&out, dryrun_text.substr(i));
  return out;
}

std::vector<std::string> ExpandedArgv(const NvccDryrun& dryrun, const DryrunStep& step) {
  std::vector<std::string> argv;
  argv.reserve(step.argv.size());
  for (const std::string& w : step.argv)
    argv.push_back(ExpandShellVariables(w, dryrun.environment));
  return argv;
}

absl::StatusOr<DryrunToolkit> ToolkitOfDryrun(const NvccDryrun& dryrun) {
  for (const DryrunStep& step : dryrun.steps) {
    std::string major, minor, build;
    for (const std::string& word : step.argv) {
      absl::string_view w = word;
      // Digits only: the values become requirements and cache keys.
      auto take = [&](absl::string_view prefix, std::string& out) {
        if (absl::ConsumePrefix(&w, prefix) && !w.empty() &&
            std::all_of(w.begin(), w.end(), [](char c) { return absl::ascii_isdigit(c); })) {
          out = std::string(w);
        }
      };
      take("-D__CUDACC_VER_MAJOR__=", major);
      take("-D__CUDACC_VER_MINOR__=", minor);
      take("-D__CUDACC_VER_BUILD__=", build);
    }
    if (major.empty() || minor.empty()) continue;
    if (build.empty()) {
      // Every nvcc since CUDA 7 defines it; without it two patch releases would look alike.
      return absl::UnimplementedError(
          "not decomposable: nvcc --dryrun names no toolkit release (__CUDACC_VER_BUILD__)");
    }
    return DryrunToolkit{absl::StrCat(major, ".", minor),
                         absl::StrCat(major, ".", minor, ".", build)};
  }
  return absl::UnimplementedError("not decomposable: nvcc --dryrun names no toolkit version");
}

}  // namespace farm
