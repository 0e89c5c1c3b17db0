#include "cli/build_view.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

farm::v1::Build FailedBuild() {
  farm::v1::Build b;
  b.set_id("b1");
  b.set_kind(farm::v1::BUILD_KIND_WHEEL);
  b.set_package("torch");
  b.set_version("2.9.1");
  b.set_state(farm::v1::BUILD_STATE_FAILED);
  b.set_reason("1 of 4 actions failed");
  auto* s = b.add_shards();
  s->set_name("sm_90");
  s->set_total(4);
  s->set_done(3);
  s->set_failed(1);
  s->add_workers("arm1");
  s->add_workers("w1");
  (*s->mutable_worker_cpu_archs())["arm1"] = "aarch64";
  (*s->mutable_worker_cpu_archs())["w1"] = "x86_64";
  s->set_failed_action_id("a7");
  s->set_failed_exit_code(2);
  s->set_error("kernel.cu(3): error: identifier \"x\" is undefined\n");
  b.mutable_wheel()->set_filename("torch-2.9.1-cp312-cp312-manylinux_2_35_aarch64.whl");
  b.mutable_wheel()->set_size_bytes(3 << 20);
  (*b.mutable_wheel()->mutable_device_code_bytes())["sm_90"] = 2 << 20;
  auto* row = b.mutable_verification()->add_rows();
  row->set_arch("sm_90");
  row->set_present(false);
  row->set_note("no SASS in libtorch_cuda.so");
  return b;
}

TEST(BuildViewTest, ReportShowsShardsWheelVerificationAndTheFailure) {
  const std::string text = BuildReport(FailedBuild(), absl::FromUnixSeconds(100));
  EXPECT_THAT(text, HasSubstr("failed: 1 of 4 actions failed"));
  EXPECT_THAT(text, HasSubstr("sm_90"));
  EXPECT_THAT(text, HasSubstr("3/4"));
  EXPECT_THAT(text, HasSubstr("arm1 (aarch64),w1 (x86_64)"));
  EXPECT_THAT(text, HasSubstr("2.0 MiB"));
  EXPECT_THAT(text, HasSubstr("verification FAILED"));
  EXPECT_THAT(text, HasSubstr("no SASS in libtorch_cuda.so"));
  EXPECT_THAT(text, HasSubstr("action a7 exited 2"));
  EXPECT_THAT(text, HasSubstr("  | kernel.cu(3): error: identifier \"x\" is undefined"));
}

// Issue 28: a require_gpu SM no online GPU worker runs waits, and says for what and how long.
TEST(BuildViewTest, ReportShowsAnSmWaitingForAGpuWorker) {
  farm::v1::Build b;
  b.set_id("b1");
  b.set_kind(farm::v1::BUILD_KIND_WHEEL);
  b.set_state(farm::v1::BUILD_STATE_VERIFYING);
  b.mutable_plan()->mutable_smoke()->set_require_gpu(true);
  b.mutable_plan()->mutable_smoke()->set_gpu_wait_seconds(6 * 3600);
  auto* passed = b.add_smoke();
  passed->set_sm("sm_90");
  passed->set_state("passed");
  auto* waiting = b.add_smoke();
  waiting->set_sm("sm_75");
  waiting->set_state("waiting");
  waiting->set_reason("waiting for a GPU worker that runs sm_75 (none online; no GPU online)");
  waiting->mutable_waiting_since()->set_seconds(100);
  const std::string report = BuildReport(b, absl::FromUnixSeconds(100 + 150));
  EXPECT_THAT(report, ::testing::ContainsRegex("sm_75 +waiting"));
  EXPECT_THAT(report, HasSubstr("  sm_75 waiting for a GPU worker that runs sm_75 (none online; "
                                "no GPU online); waited 2m30s of 6h00m (the recipe's gpu_wait), "
                                "then the build fails"));
  // `submit --wait` and `watch` piped: the line says what the build waits for.
  b.set_reason(
      "smoke testing x.whl on the GPU workers; sm_75 waiting for a GPU worker that runs "
      "it (up to 6h)");
  EXPECT_THAT(WatchLine(b), HasSubstr("verifying - smoke testing x.whl on the GPU workers; sm_75 "
                                      "waiting for a GPU worker"));
  b.mutable_smoke(1)->set_state("queued");
  EXPECT_THAT(WatchLine(b), Not(HasSubstr("waiting")));
}

// Issue 15, item 7: what a build printed reaches the terminal escaped, never obeyed.
TEST(BuildViewTest, ErrorTextAndReasonsShowTerminalEscapesEscaped) {
  farm::v1::Build b = FailedBuild();
  b.set_reason("failed \x1b]0;owned\x07");
  b.mutable_shards(0)->set_error(
      "k.cu: \x1b[2J\x1b]52;c;ZXZpbA==\x07"
      "error\n");
  b.mutable_verification()->set_message("odd \x1b[31mred");
  const std::string report = BuildReport(b, absl::FromUnixSeconds(100));
  const std::string frame = WatchFrame(b, absl::FromUnixSeconds(100));
  const std::string line = WatchLine(b);
  for (const std::string& text : {report, frame, line}) {
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
    EXPECT_THAT(text, HasSubstr("failed \\x1b]0;owned\\x07"));
  }
  EXPECT_THAT(report, HasSubstr("  | k.cu: \\x1b[2J\\x1b]52;c;ZXZpbA==\\x07error"));
  EXPECT_THAT(report, HasSubstr("odd \\x1b[31mred"));
}

TEST(BuildViewTest, NvccCallsSayHowManySplitAndWhyTheRestDidNot) {
  farm::v1::NvccCalls c;
  EXPECT_EQ(NvccCallsSummary(c), "");
  c.set_total(14);
  c.set_split(10);
  c.set_cached(2);
  c.set_fallbacks(2);
  (*c.mutable_fallback_reasons())["unknown nvcc option"] = 2;
  EXPECT_EQ(NvccCallsSummary(c),
            "12 of 14 calls split (2 from the compile cache); 2 ran plain nvcc: unknown nvcc "
            "option × 2");
  c.set_total(18);
  c.set_fallbacks(5);
  (*c.mutable_fallback_reasons())["-G device debug info records the compiling directory"] = 3;
  c.set_compile_errors(1);
  EXPECT_EQ(NvccCallsSummary(c),
            "12 of 18 calls split (2 from the compile cache); 5 ran plain nvcc: -G device debug "
            "info records the compiling directory × 3, unknown nvcc option × 2; 1 stopped at a "
            "compile error");
  farm::v1::Build b = FailedBuild();
  *b.mutable_nvcc() = c;
  EXPECT_THAT(BuildReport(b, absl::FromUnixSeconds(100)), HasSubstr("\nnvcc       12 of 18 calls"));
  farm::v1::NvccCalls all;
  all.set_total(3);
  all.set_split(3);
  EXPECT_EQ(NvccCallsSummary(all), "3 of 3 calls split; none ran plain nvcc");
}

TEST(BuildViewTest, HostCompilesSayWhereTheyRanAndWhySomeRanLocally) {
  farm::v1::NvccCalls c;
  EXPECT_EQ(HostCompilesSummary(c), "");
  c.set_total(15);
  c.set_split(10);
  c.set_cached(2);
  c.set_fallbacks(2);
  c.set_compile_errors(1);
  (*c.mutable_fallback_reasons())["no worker has the toolchain"] = 2;
  EXPECT_EQ(HostCompilesSummary(c),
            "15 compiles: 10 on workers, 2 from the compile cache; 2 ran locally: no worker has "
            "the toolchain × 2; 1 stopped at a compile error");
  farm::v1::Build b = FailedBuild();
  *b.mutable_host_compiles() = c;
  const std::string report = BuildReport(b, absl::FromUnixSeconds(100));
  EXPECT_THAT(report, HasSubstr("\nhost cc    15 compiles: 10 on workers"));
  // No nvcc reports: no nvcc line; the host compiles are not shown as nvcc calls.
  EXPECT_THAT(report, Not(HasSubstr("\nnvcc ")));
  farm::v1::NvccCalls one;
  one.set_total(1);
  one.set_split(1);
  EXPECT_EQ(HostCompilesSummary(one), "1 compile: 1 on workers; none ran locally");
}

// A reason is counted by its code; the launchers' own words for it follow the count, escaped.
TEST(BuildViewTest, TheReportListsEachReasonsExamplesUnderItsCount) {
  farm::v1::NvccCalls c;
  c.set_total(4);
  c.set_fallbacks(3);
  c.set_split(1);
  (*c.mutable_fallback_reasons())["command_line"] = 2;
  (*c.mutable_fallback_reasons())["scan_failed"] = 1;
  auto& command_line = (*c.mutable_fallback_examples())["command_line"];
  command_line.add_details("-flto: LTO sections differ per run");
  command_line.add_details("-fplugin=\x1b[2Jx.so");
  (*c.mutable_fallback_examples())["scan_failed"].add_details(
      "the dependency scan failed where the compile passed");
  EXPECT_EQ(HostCompilesSummary(c),
            "4 compiles: 1 on workers; 3 ran locally: command_line × 2, scan_failed × 1");
  farm::v1::Build b = FailedBuild();
  *b.mutable_host_compiles() = c;
  EXPECT_THAT(BuildReport(b, absl::FromUnixSeconds(100)),
              HasSubstr("\nhost cc    4 compiles: 1 on workers; 3 ran locally: command_line × 2, "
                        "scan_failed × 1\n"
                        "           command_line: -flto: LTO sections differ per run\n"
                        "           command_line: -fplugin=\\x1b[2Jx.so\n"
                        "           scan_failed: the dependency scan failed where the compile "
                        "passed\n"));
}

TEST(BuildViewTest, ProgressBarMarksFailuresAndRunning) {
  farm::v1::Shard s;
  s.set_total(10);
  s.set_done(5);
  s.set_failed(1);
  s.set_running(2);
  EXPECT_EQ(ProgressBar(s, 10), "[#####!>>..]");
  s.Clear();
  EXPECT_EQ(ProgressBar(s, 4), "[....]");
}

TEST(BuildViewTest, WatchLineAndJson) {
  const auto b = FailedBuild();
  EXPECT_EQ(WatchLine(b), "b1 failed: sm_90 3/4 (1 failed) - 1 of 4 actions failed");
  const nlohmann::json j = ProtoToJson(b);
  EXPECT_EQ(j["state"], "BUILD_STATE_FAILED");
  EXPECT_EQ(j["shards"][0]["done"], 3);
  EXPECT_EQ(j["wheel"]["size_bytes"], "3145728");  // 64-bit integers are strings in JSON
  EXPECT_THAT(WatchFrame(b, absl::FromUnixSeconds(0)), Not(HasSubstr("running")));
}

TEST(BuildViewTest, PlanListsEachPrerequisiteAndWhereItComesFrom) {
  farm::v1::BuildPlan p;
  p.set_python_version("3.10");
  p.add_build_hosts("g2");
  auto* nccl = p.add_prerequisites();
  nccl->set_name("NCCL");
  nccl->set_version(">=2.27");
  nccl->set_wheel("nvidia-nccl-cu13>=2.27.5,<2.28");
  nccl->add_variables("NCCL_LIB_DIR");
  nccl->add_variables("USE_SYSTEM_NCCL");
  auto* cudnn = p.add_prerequisites();
  cudnn->set_name("cuDNN");
  cudnn->set_host_library("libcudnn.so.9");
  cudnn->add_hosts("g2");
  const std::string text = PlanReport(p);
  EXPECT_THAT(text, HasSubstr("prereq     NCCL >=2.27: wheel nvidia-nccl-cu13>=2.27.5,<2.28 into "
                              "the python env (sets NCCL_LIB_DIR, USE_SYSTEM_NCCL)\n"));
  EXPECT_THAT(text, HasSubstr("prereq     cuDNN: host library libcudnn.so.9 on g2\n"));
  EXPECT_THAT(PlanReport(farm::v1::BuildPlan()), Not(HasSubstr("prereq")));
}

TEST(BuildViewTest, AWheelShowsItsLabelledVersionAndTheArchSetIndexToInstallFrom) {
  farm::v1::Build b;
  b.set_id("b2");
  b.set_kind(farm::v1::BUILD_KIND_WHEEL);
  b.set_package("demo-cuda-ext");
  b.set_version("0.1.0");
  b.set_state(farm::v1::BUILD_STATE_SUCCEEDED);
  b.mutable_wheel()->set_filename(
      "demo_cuda_ext-0.1.0+cu130.sm75.sm90-py3-none-manylinux_2_17_x86_64.whl");
  b.add_published_to(
      "http://127.0.0.1:7421/files/abc/demo_cuda_ext-0.1.0%2Bcu130.sm75.sm90-py3-none-"
      "manylinux_2_17_x86_64.whl");
  const std::string report = BuildReport(b, absl::FromUnixSeconds(100));
  EXPECT_THAT(report, HasSubstr("\nversion    0.1.0+cu130.sm75.sm90\n"));
  EXPECT_THAT(report, HasSubstr("\nindex      http://127.0.0.1:7421/sm75-sm90/simple/\n"));
  EXPECT_EQ(PipInstallHint(b),
            "pip install --index-url http://127.0.0.1:7421/sm75-sm90/simple/ "
            "demo-cuda-ext==0.1.0+cu130.sm75.sm90");
  // A wheel without an arch-set label (from before them) installs from the whole index.
  b.mutable_wheel()->set_filename("demo_cuda_ext-0.1.0+cu130-py3-none-manylinux_2_17_x86_64.whl");
  EXPECT_EQ(PipInstallHint(b),
            "pip install --index-url http://127.0.0.1:7421/simple/ demo-cuda-ext==0.1.0+cu130");
  // Published elsewhere only: no hint, no index line.
  b.clear_published_to();
  b.add_published_to("https://pypi.example/legacy/");
  EXPECT_EQ(PipInstallHint(b), "");
  EXPECT_THAT(BuildReport(b, absl::FromUnixSeconds(100)), Not(HasSubstr("\nindex ")));
}

TEST(BuildViewTest, ThePlanNamesTheWheelsVersionAndItsArchSetIndex) {
  farm::v1::BuildPlan p;
  p.set_package("torch");
  p.set_version("2.9.1");
  p.set_archs("7.5;8.0+PTX;9.0");
  p.set_cuda_version("13.0");
  EXPECT_THAT(PlanReport(p),
              HasSubstr("wheel      torch 2.9.1+cu130.sm75.sm80.compute80.sm90 (arch-set index "
                        "/sm75-sm80-compute80-sm90/simple/)\n"));
}

// A farm requirement the farm has none of, from the recipe's fallback: the plan names the
// index, the CUDA release of its wheels and why not the farm's.
TEST(BuildViewTest, AFallbackBuildDependencySaysWhichIndexAndWhy) {
  farm::v1::BuildPlan p;
  auto* d = p.add_build_dependencies();
  d->set_requirement("torch==2.11.0");
  d->set_source("index");
  d->set_project("torch");
  d->set_index_url("https://download.pytorch.org/whl/cu130");
  d->set_fallback_cuda("13.0");
  d->set_fallback_reason("the farm has no torch==2.11.0 wheel for this build");
  EXPECT_THAT(PlanReport(p),
              HasSubstr("build dep  torch==2.11.0: from the package index "
                        "https://download.pytorch.org/whl/cu130, wheels built for CUDA 13.0 "
                        "(farm_fallback: the farm has no torch==2.11.0 wheel for this build)\n"));
  d->clear_index_url();
  EXPECT_THAT(PlanReport(p), HasSubstr("build dep  torch==2.11.0: from the package index of the "
                                       "build host (PIP_INDEX_URL, else PyPI), wheels built for "
                                       "CUDA 13.0 (farm_fallback: "));
}

TEST(BuildViewTest, CallTimesTellWhereTheFarmsCallsSpentTheirTime) {
  farm::v1::CallTimes times;
  EXPECT_EQ(CallTimesLines("host cc", times, 5), "");
  times.set_calls(3);
  times.set_wall_seconds(4.5);
  times.mutable_phases()->set_run(3.0);
  times.mutable_phases()->set_scan(0.9);
  times.mutable_phases()->set_other(0.6);
  times.mutable_phases()->set_queue(0.001);  // under 5 ms: not shown
  for (const auto& [unit, wall] :
       std::vector<std::pair<std::string, double>>{{"src/slow.cc", 2.5}, {"a\x1b[2Jb.cc", 1.0}}) {
    farm::v1::UnitTime* u = times.add_slowest();
    u->set_unit(unit);
    u->set_wall_seconds(wall);
    u->mutable_phases()->set_run(wall - 0.5);
    u->mutable_phases()->set_scan(0.5);
  }
  EXPECT_EQ(
      CallTimesLines("host cc", times, 5),
      "time       host cc: 3 calls on the farm, 4.50 s: run 3.00 s, scan 0.90 s, other 0.60 s\n"
      "           slowest 2.50 s src/slow.cc (run 2.00 s, scan 0.50 s)\n"
      "                   1.00 s a\\x1b[2Jb.cc (scan 0.50 s, run 0.50 s)\n");
  EXPECT_EQ(CallTimesLines("nvcc", times, 1).find("a\\x1b"), std::string::npos);
}

}  // namespace
}  // namespace farm::cli
