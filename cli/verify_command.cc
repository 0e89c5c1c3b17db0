// farmctl verify WHEEL --archs LIST [--manylinux 2_35]: exit 0 only when every CUDA library
// in the wheel has SASS (and PTX where asked) for every arch in every translation unit, no
// library needs a newer glibc than the policy, RECORD matches and the tags fit the content.
#include <iostream>

#include "cli/command_support.h"
#include "libfarm/coverage/report_format.h"
#include "libfarm/coverage/wheel_verifier.h"

namespace farm::cli {
namespace {

// The wheel was read and breaks the policy; usage errors exit with kExitConfig (2).
constexpr int kExitVerifyFailed = 1;

struct VerifyOptions {
  std::string wheel;
  std::string archs;
  std::string manylinux;
};

}  // namespace

void AddVerifyCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand(
      "verify",
      "check a wheel: SASS/PTX for every arch in every CUDA translation unit, glibc floor, "
      "RECORD hashes, tags; exit 0 pass, 1 fail, 2 bad arguments");
  auto options = std::make_shared<VerifyOptions>();
  cmd->add_option("wheel", options->wheel, "the .whl file")->required();
  cmd->add_option("--archs", options->archs,
                  "required archs, e.g. \"7.5;9.0;12.1\", \"8.0+PTX\", \"9.0a\", \"12.0f\"")
      ->required();
  cmd->add_option("--manylinux", options->manylinux,
                  "highest glibc any library may need, e.g. 2_35 (Ubuntu 22.04)");
  cmd->callback([&ctx, options] {
    VerifyPolicy policy;
    auto archs = ParseArchList(options->archs);
    if (!archs.ok()) {
      ctx.exit_code = Fail(archs.status());
      return;
    }
    policy.archs = *std::move(archs);
    if (!options->manylinux.empty()) {
      auto glibc = ParseManylinuxPolicy(options->manylinux);
      if (!glibc.ok()) {
        ctx.exit_code = Fail(glibc.status());
        return;
      }
      policy.max_glibc = *glibc;
    }
    auto report = VerifyWheel(options->wheel, policy);
    if (!report.ok()) {
      ctx.exit_code = Fail(report.status());
      return;
    }
    if (ctx.global.json) {
      PrintJson(VerifyReportToJson(*report, policy));
    } else {
      std::cout << FormatVerifyReport(*report, policy);
    }
    ctx.exit_code = report->Passed() ? 0 : kExitVerifyFailed;
  });
}

}  // namespace farm::cli
