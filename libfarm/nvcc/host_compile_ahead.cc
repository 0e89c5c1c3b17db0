#include "libfarm/nvcc/host_compile_ahead.h"

#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libfarm/elf/section_replace.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/logging/logger.h"
#include "libfarm/nvcc/embedded_fatbin.h"

namespace farm {
namespace {

bool HasDebugInfo(const std::vector<std::string>& argv) {
  for (const std::string& word : argv) {
    if (absl::StartsWith(word, "-g") && word != "-g0") return true;
  }
  return false;
}

}  // namespace

std::unique_ptr<HostCompileAhead> HostCompileAhead::Plan(const NvccDryrun& dryrun,
                                                         const std::vector<DeviceJob>& jobs,
                                                         const std::string& temp_dir) {
  if (!dryrun.fatbinary) return nullptr;
  std::optional<size_t> host_compile;
  for (size_t i = *dryrun.fatbinary + 1; i < dryrun.steps.size(); ++i) {
    const DryrunStepKind kind = dryrun.steps[i].kind;
    if (kind == DryrunStepKind::kRemove) continue;
    if (kind != DryrunStepKind::kHostCompile || host_compile) return nullptr;
    host_compile = i;
  }
  if (!host_compile) return nullptr;
  const DryrunStep& compile = dryrun.steps[*host_compile];
  if (compile.output.empty() || HasDebugInfo(compile.argv)) return nullptr;
  // -rdc's fat binary goes to another section, with a frame the placeholder does not have.
  for (const std::string& word : dryrun.steps[*dryrun.fatbinary].argv) {
    if (word == "--device-c") return nullptr;
  }
  const std::string fatbin_c =
      DryrunFlagValue(dryrun.steps[*dryrun.fatbinary].argv, "--embedded-fatbin");
  if (!absl::StartsWith(fatbin_c, temp_dir + "/")) return nullptr;

  // cudafe++ names the stub its output includes; the cicc that writes it is one job's.
  std::string stub;
  for (size_t i : dryrun.StepsOfKind(DryrunStepKind::kCudafe)) {
    stub = DryrunFlagValue(dryrun.steps[i].argv, "--stub_file_name");
  }
  if (stub.empty()) return nullptr;
  if (!absl::StartsWith(stub, "/")) stub = absl::StrCat(temp_dir, "/", stub);
  for (size_t j = 0; j < jobs.size(); ++j) {
    for (const DeviceJobFile& out : jobs[j].outputs) {
      if (out.local_path == stub) {
        return std::unique_ptr<HostCompileAhead>(
            new HostCompileAhead(j, *dryrun.fatbinary, *host_compile, fatbin_c, compile.output,
                                 absl::StrCat(temp_dir, "/farm-host-compile-ahead.o")));
      }
    }
  }
  return nullptr;
}

HostCompileAhead::~HostCompileAhead() {
  if (compile_.joinable()) compile_.join();
}

void HostCompileAhead::Start(LocalSteps& local) {
  compile_ = std::thread([this, &local] {
    std::ofstream placeholder(fatbin_c_, std::ios::binary | std::ios::trunc);
    placeholder << PlaceholderFatbinC();
    if (!placeholder.flush()) {
      compiled_ = absl::InternalError(absl::StrCat("cannot write ", fatbin_c_));
      return;
    }
    placeholder.close();
    compiled_ = local.RunWithOutput(host_compile_, ahead_object_);
  });
}

absl::Status HostCompileAhead::UseObjectCompiledAhead() {
  if (!compiled_.ok()) return compiled_;
  auto real = ReadFileContents(fatbin_c_);
  if (!real.ok()) return real.status();
  auto fatbin = ParseEmbeddedFatbin(*real);
  if (!fatbin.ok()) return fatbin.status();
  auto placeholder = ParseEmbeddedFatbin(PlaceholderFatbinC());
  if (!placeholder.ok()) return placeholder.status();
  if (fatbin->frame != placeholder->frame) {
    return absl::FailedPreconditionError("fatbinary wrote a .fatbin.c of another shape");
  }
  auto object = ReadFileContents(ahead_object_);
  if (!object.ok()) return object.status();
  auto patched = ReplaceSectionContents(*object, ".nv_fatbin", fatbin->bytes);
  if (!patched.ok()) return patched.status();
  std::ofstream out(object_, std::ios::binary | std::ios::trunc);
  out << *patched;
  if (!out.flush()) return absl::UnavailableError(absl::StrCat("cannot write ", object_));
  return absl::OkStatus();
}

absl::StatusOr<bool> HostCompileAhead::Finish(LocalSteps& local) {
  // fatbinary overwrites the placeholder, which the compile must have read first.
  if (compile_.joinable()) compile_.join();
  if (absl::Status s = local.Run({fatbinary_}); !s.ok()) return s;
  if (absl::Status s = UseObjectCompiledAhead(); !s.ok()) {
    ComponentLogger("farm-nvcc")->debug("host compile ahead not used: {}", s.message());
    return false;
  }
  ComponentLogger("farm-nvcc")->debug("host compile ran beside the device jobs");
  return true;
}

}  // namespace farm
