#include "coordinator/scheduler/requirements.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::coordinator {
namespace {

using ::testing::HasSubstr;

farm::v1::WorkerCapabilities Grace() {
  farm::v1::WorkerCapabilities w;
  w.set_os("linux");
  w.set_cpu_arch("aarch64");
  w.set_glibc("2.35");
  w.set_ram_bytes(128ULL << 30);
  (*w.mutable_labels())["instance"] = "m8g.8xlarge";
  auto* t = w.add_cuda();
  t->set_version("13.0");
  for (const char* sm : {"sm_75", "sm_90", "sm_121"}) t->add_sms(sm);
  return w;
}

TEST(RequirementsTest, EmptyRequirementsMatchAnyone) {
  EXPECT_TRUE(CheckRequirements({}, Grace()).ok());
  EXPECT_TRUE(CheckRequirements({}, farm::v1::WorkerCapabilities()).ok());
}

TEST(RequirementsTest, MatchingWorkerQualifies) {
  farm::v1::Requirements r;
  r.set_cpu_arch("aarch64");
  r.set_max_glibc("2.35");
  r.set_cuda_version("13.0");
  r.add_sms("sm_121");
  (*r.mutable_labels())["instance"] = "m8g.8xlarge";
  EXPECT_TRUE(CheckRequirements(r, Grace()).ok());
}

// A filesystem image action builds its root from its inputs: only a sandboxed worker can.
TEST(RequirementsTest, ASandboxNeedsASandboxedWorker) {
  farm::v1::Requirements r;
  r.set_sandbox(true);
  farm::v1::WorkerCapabilities w = Grace();
  w.set_sandboxed(false);
  const absl::Status s = CheckRequirements(r, w);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("needs a sandboxed worker"));
  w.set_sandboxed(true);
  EXPECT_TRUE(CheckRequirements(r, w).ok());
}

TEST(RequirementsTest, ArchSpecificAndFamilyTargetsNeedTheirBaseSm) {
  farm::v1::Requirements r;
  r.add_sms("sm_90a");
  EXPECT_TRUE(CheckRequirements(r, Grace()).ok());
  farm::v1::Requirements family;
  family.add_sms("sm_100f");
  EXPECT_FALSE(CheckRequirements(family, Grace()).ok()) << "Grace's toolkit lists no sm_100";
}

TEST(RequirementsTest, EachMissNamesTheRequirement) {
  farm::v1::Requirements arch;
  arch.set_cpu_arch("x86_64");
  EXPECT_THAT(CheckRequirements(arch, Grace()).message(), HasSubstr("needs cpu_arch x86_64"));

  farm::v1::Requirements glibc;
  glibc.set_max_glibc("2.31");
  EXPECT_THAT(CheckRequirements(glibc, Grace()).message(), HasSubstr("glibc <= 2.31, has 2.35"));

  farm::v1::Requirements cuda;
  cuda.set_cuda_min("12.0");
  cuda.set_cuda_max("12.9");
  EXPECT_THAT(CheckRequirements(cuda, Grace()).message(), HasSubstr("has CUDA 13.0"));

  farm::v1::Requirements sm;
  sm.add_sms("sm_70");
  EXPECT_THAT(CheckRequirements(sm, Grace()).message(), HasSubstr("supports sm_70"));

  farm::v1::Requirements ram;
  ram.set_min_ram_bytes(256ULL << 30);
  EXPECT_THAT(CheckRequirements(ram, Grace()).message(), HasSubstr("MiB RAM"));

  farm::v1::Requirements label;
  (*label.mutable_labels())["gpu"] = "t4g";
  EXPECT_THAT(CheckRequirements(label, Grace()).message(), HasSubstr("label gpu=t4g, has none"));

  farm::v1::WorkerCapabilities no_cuda = Grace();
  no_cuda.clear_cuda();
  farm::v1::Requirements any_cuda;
  any_cuda.set_cuda_version("13.0");
  EXPECT_THAT(CheckRequirements(any_cuda, no_cuda).message(), HasSubstr("no CUDA toolkit"));
}

TEST(RequirementsTest, AnExactReleaseNeedsThatToolkitWhateverTheCpu) {
  farm::v1::WorkerCapabilities grace = Grace();
  grace.mutable_cuda(0)->set_release("V13.0.88");
  farm::v1::WorkerCapabilities x86 = grace;
  x86.set_cpu_arch("x86_64");
  auto* newer = x86.add_cuda();
  newer->set_version("13.2");
  newer->set_release("V13.2.86");
  newer->add_sms("sm_90");

  farm::v1::Requirements r;
  r.set_cuda_version("13.0");
  r.set_cuda_release("13.0.88");
  r.add_sms("sm_90");
  EXPECT_TRUE(CheckRequirements(r, grace).ok());
  EXPECT_TRUE(CheckRequirements(r, x86).ok()) << "a device compile runs on any CPU";

  farm::v1::Requirements patch = r;
  patch.set_cuda_release("13.0.96");
  EXPECT_THAT(CheckRequirements(patch, x86).message(),
              HasSubstr("needs CUDA 13.0.96 and a toolkit that supports sm_90, has CUDA "
                        "13.0.88, 13.2.86"));
  // The release and the SMs must hold for one toolkit, not one each.
  farm::v1::Requirements newer_release;
  newer_release.set_cuda_release("13.2.86");
  newer_release.add_sms("sm_121");
  EXPECT_FALSE(CheckRequirements(newer_release, x86).ok()) << "13.2.86 lists no sm_121 here";
  newer_release.clear_sms();
  EXPECT_TRUE(CheckRequirements(newer_release, x86).ok());

  farm::v1::Requirements malformed;
  malformed.set_cuda_release("V13.0.88");
  EXPECT_EQ(ValidateRequirements(malformed).code(), absl::StatusCode::kInvalidArgument);
}

TEST(RequirementsTest, APythonVersionNeedsThatInterpreter) {
  farm::v1::Requirements r;
  r.set_python_version("3.10");
  farm::v1::WorkerCapabilities w = Grace();
  EXPECT_THAT(CheckRequirements(r, w).message(), HasSubstr("needs python3.10, has no Python"));
  w.add_python()->set_version("3.11");
  w.add_python()->set_version("3.12");
  EXPECT_THAT(CheckRequirements(r, w).message(), HasSubstr("needs python3.10, has 3.11, 3.12"));
  w.add_python()->set_version("3.10");
  EXPECT_TRUE(CheckRequirements(r, w).ok());
}

TEST(RequirementsTest, ALibraryNeedsTheWorkerToAdvertiseIt) {
  farm::v1::Requirements r;
  r.add_libraries("libcudnn.so.9");
  farm::v1::WorkerCapabilities w = Grace();
  w.add_libraries("libc.so.6");
  w.add_libraries("libcudnn.so.8");
  EXPECT_THAT(CheckRequirements(r, w).message(),
              HasSubstr("needs library libcudnn.so.9, which its loader does not list"));
  w.add_libraries("libcudnn.so.9");
  EXPECT_TRUE(CheckRequirements(r, w).ok());
  EXPECT_TRUE(ValidateRequirements(r).ok());
  r.add_libraries("../libx.so");
  EXPECT_EQ(ValidateRequirements(r).code(), absl::StatusCode::kInvalidArgument);
}

TEST(RequirementsTest, MalformedVersionsAreInvalid) {
  farm::v1::Requirements r;
  r.set_cuda_version("thirteen");
  EXPECT_EQ(ValidateRequirements(r).code(), absl::StatusCode::kInvalidArgument);
}

// --device-cpu-archs: actions that name no CPU arch (device compiles) go only to workers of
// the listed archs; actions that name one are the recipe's choice and keep it.
TEST(PlacementTest, ActionsNamingNoCpuArchGoOnlyWhereTheFarmSays) {
  farm::v1::WorkerCapabilities x86 = Grace();
  x86.set_cpu_arch("x86_64");
  farm::v1::Requirements device;
  device.set_cuda_version("13.0");
  device.add_sms("sm_90");
  EXPECT_TRUE(CheckPlacement(device, x86, {}).ok());
  const PlacementPolicy arm_only{.portable_cpu_archs = {"aarch64"}};
  EXPECT_TRUE(CheckPlacement(device, Grace(), arm_only).ok());
  absl::Status s = CheckPlacement(device, x86, arm_only);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("only on aarch64 workers (--device-cpu-archs), "
                                                  "has x86_64"));
  farm::v1::Requirements build = device;
  build.set_cpu_arch("x86_64");
  EXPECT_TRUE(CheckPlacement(build, x86, arm_only).ok());
  // The action's own requirements are checked first and named as before.
  device.add_sms("sm_100");
  EXPECT_THAT(std::string(CheckPlacement(device, Grace(), arm_only).message()),
              HasSubstr("sm_100"));
}

}  // namespace
}  // namespace farm::coordinator
