#include "libfarm/coverage/wheel_verifier.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "libfarm/coverage/report_format.h"
#include "libfarm/testing/nvcc_fixtures.h"

namespace farm {
namespace {

using testing::WheelMember;

class WheelVerifierTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto f = testing::GetNvccFixtures();
    if (f.ok())
      fixtures_ = *f;
    else
      error_ = std::string(f.status().message());
  }
  void SetUp() override { ASSERT_NE(fixtures_, nullptr) << error_; }

  // A demo_pkg wheel holding `libs` (member name -> file) plus an __init__.py.
  std::string Wheel(const std::string& label, const std::string& platform,
                    std::vector<WheelMember> extra, const std::string& tamper_member = "",
                    const std::string& tamper_text = "") {
    const std::string dir = absl::StrCat(fixtures_->dir, "/", label);
    std::filesystem::create_directories(dir);
    const std::string path = absl::StrCat(dir, "/demo_pkg-1.0-cp311-cp311-", platform, ".whl");
    std::vector<WheelMember> members = {{"demo_pkg/__init__.py", "", "from . import _C\n"}};
    members.insert(members.end(), extra.begin(), extra.end());
    const absl::Status built =
        testing::BuildWheel({.path = path,
                             .dist_info = "demo_pkg-1.0.dist-info",
                             .tags = {absl::StrCat("cp311-cp311-", platform)},
                             .members = members,
                             .tamper_member = tamper_member,
                             .tamper_text = tamper_text});
    EXPECT_TRUE(built.ok()) << built;
    return path;
  }

  static VerifyPolicy Policy(const char* archs, std::optional<const char*> manylinux) {
    VerifyPolicy policy;
    policy.archs = *ParseArchList(archs);
    if (manylinux) policy.max_glibc = *ParseManylinuxPolicy(*manylinux);
    return policy;
  }

  // "check path" of every failure, in order.
  static std::vector<std::string> Failures(const VerifyReport& report) {
    std::vector<std::string> out;
    for (const VerifyFinding& f : report.failures) out.push_back(f.check + " " + f.path);
    return out;
  }

  static const testing::NvccFixtures* fixtures_;
  static std::string error_;
};

const testing::NvccFixtures* WheelVerifierTest::fixtures_ = nullptr;
std::string WheelVerifierTest::error_;

TEST_F(WheelVerifierTest, CompleteWheelPasses) {
  const std::string wheel = Wheel("complete", "manylinux_2_35_x86_64",
                                  {{"demo_pkg/_C.so", fixtures_->complete_library, ""},
                                   {"demo_pkg/lib/libtu_a.a", fixtures_->static_archive, ""}});
  auto report = VerifyWheel(wheel, Policy("7.5", "2_35"));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->Passed()) << FormatVerifyReport(*report, Policy("7.5", "2_35"));
  // The nvcc -shared device-link stub is recognised and reported apart.
  ASSERT_EQ(report->notes.size(), 1u);
  EXPECT_EQ(report->notes[0].path, "demo_pkg/_C.so");
  EXPECT_EQ(report->notes[0].message,
            "container 1 is a device-link stub from the CUDA runtime (no kernels); its archs are "
            "not checked");

  // sm_90 too: the static archive's tu_c.o lacks it, the library does not.
  auto with_90 = VerifyWheel(wheel, Policy("7.5;9.0", "2_35"));
  ASSERT_TRUE(with_90.ok());
  EXPECT_EQ(Failures(*with_90), std::vector<std::string>{"arch demo_pkg/lib/libtu_a.a!tu_c.o"});
  const nlohmann::json json = VerifyReportToJson(*with_90, Policy("7.5;9.0", "2_35"));
  EXPECT_EQ(json["passed"], false);
  EXPECT_EQ(json["failures"][0]["check"], "arch");
}

TEST_F(WheelVerifierTest, OneTranslationUnitMissingAnArchFails) {
  const std::string wheel = Wheel("missing_arch", "manylinux_2_35_x86_64",
                                  {{"demo_pkg/_C.so", fixtures_->multi_tu_library, ""}});
  const VerifyPolicy policy = Policy("7.5;9.0", "2_35");
  auto report = VerifyWheel(wheel, policy);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(Failures(*report), std::vector<std::string>{"arch demo_pkg/_C.so"});
  EXPECT_EQ(report->failures[0].message,
            "lacks sm_90 SASS in 1 of 3 fat-binary containers (container 4); each container is "
            "one translation unit, so some kernels would not run there; add sm_90 to the build's "
            "arch list for every CUDA file");
  EXPECT_NE(FormatVerifyReport(*report, policy).find("FAIL "), std::string::npos);

  // PTX was never embedded for sm_90.
  auto ptx = VerifyWheel(wheel, Policy("7.5+PTX", "2_35"));
  ASSERT_TRUE(ptx.ok());
  ASSERT_EQ(Failures(*ptx), std::vector<std::string>{"ptx demo_pkg/_C.so"});
  EXPECT_EQ(ptx->failures[0].message.substr(0, 50),
            "lacks compute_75 PTX in 3 of 3 fat-binary containe");

  // Asking for 9.0a is not satisfied by plain sm_90 SASS.
  auto variant = VerifyWheel(wheel, Policy("9.0a", "2_35"));
  ASSERT_TRUE(variant.ok());
  EXPECT_EQ(variant->failures[0].message.substr(0, 41),
            "lacks sm_90a SASS in 3 of 3 fat-binary co");
}

// An -rdc library: the runtime loads the device-linked image, which holds SASS only. Asking
// for PTX fails with advice that can work: not "add the arch", which is already in the list.
TEST_F(WheelVerifierTest, MissingPtxInADeviceLinkedImageSaysRdcKeepsNone) {
  const std::string wheel =
      Wheel("rdc", "manylinux_2_35_x86_64", {{"demo_pkg/_C.so", fixtures_->rdc_library, ""}});
  auto sass = VerifyWheel(wheel, Policy("7.5;9.0", "2_35"));
  ASSERT_TRUE(sass.ok()) << sass.status();
  EXPECT_TRUE(sass->Passed()) << FormatVerifyReport(*sass, Policy("7.5;9.0", "2_35"));
  auto ptx = VerifyWheel(wheel, Policy("7.5;9.0+PTX", "2_35"));
  ASSERT_TRUE(ptx.ok());
  ASSERT_EQ(Failures(*ptx), std::vector<std::string>{"ptx demo_pkg/_C.so"});
  EXPECT_NE(ptx->failures[0].message.find("-rdc device linking keeps no PTX"), std::string::npos)
      << ptx->failures[0].message;
  EXPECT_EQ(ptx->failures[0].message.find("to the build's arch list"), std::string::npos)
      << ptx->failures[0].message;
}

TEST_F(WheelVerifierTest, TamperedRecordFails) {
  const std::string wheel = Wheel("tampered", "manylinux_2_35_x86_64",
                                  {{"demo_pkg/_C.so", fixtures_->complete_library, ""}},
                                  "demo_pkg/__init__.py", "import os; os.system('evil')\n");
  auto report = VerifyWheel(wheel, Policy("7.5;9.0", "2_35"));
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(Failures(*report), (std::vector<std::string>{"record demo_pkg/__init__.py",
                                                         "record demo_pkg/__init__.py"}));
  EXPECT_EQ(report->failures[0].message.substr(0, 34), "hash mismatch: RECORD says sha256=");
  EXPECT_EQ(report->failures[1].message, "size mismatch: RECORD says 17 bytes, file has 29");
}

TEST_F(WheelVerifierTest, TooNewGlibcFails) {
  const std::string wheel = Wheel("glibc", "manylinux_2_35_x86_64",
                                  {{"demo_pkg/_C.so", fixtures_->complete_library, ""},
                                   {"demo_pkg/librandom.so", fixtures_->arc4random_library, ""}});
  auto report = VerifyWheel(wheel, Policy("7.5;9.0", "2_35"));
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(Failures(*report), (std::vector<std::string>{"glibc demo_pkg/librandom.so",
                                                         "tags demo_pkg/librandom.so"}));
  EXPECT_EQ(report->failures[0].message,
            "needs GLIBC_2.36 from libc.so.6 (arc4random), newer than the policy's glibc 2.35; "
            "build on a system with glibc <= 2.35 (e.g. a manylinux_2_35 container)");
  EXPECT_EQ(report->failures[1].message,
            "needs GLIBC_2.36 from libc.so.6 (arc4random) but the file name promises manylinux "
            "glibc 2.35; retag as manylinux_2_36 or rebuild");

  // A stricter policy also catches the tag itself and the nvcc-built library (GLIBC_2.34).
  auto strict = VerifyWheel(wheel, Policy("7.5;9.0", "2_31"));
  ASSERT_TRUE(strict.ok());
  EXPECT_EQ(Failures(*strict), (std::vector<std::string>{"tags ", "glibc demo_pkg/_C.so",
                                                         "glibc demo_pkg/librandom.so",
                                                         "tags demo_pkg/librandom.so"}));
}

TEST_F(WheelVerifierTest, ParentDirectoryMemberFails) {
  const std::string wheel = Wheel("dotdot", "manylinux_2_35_x86_64",
                                  {{"demo_pkg/_C.so", fixtures_->complete_library, ""},
                                   {"../evil.py", "", "print('escaped')\n"}});
  auto report = VerifyWheel(wheel, Policy("7.5;9.0", "2_35"));
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(Failures(*report), std::vector<std::string>{"path ../evil.py"});
  EXPECT_EQ(report->failures[0].message,
            "unsafe member path \"../evil.py\": \"..\" leaves the install directory; rebuild the "
            "wheel with paths relative to its root");
}

TEST_F(WheelVerifierTest, TagsMustMatchContent) {
  const std::string any =
      Wheel("any", "any", {{"demo_pkg/_C.so", fixtures_->complete_library, ""}});
  auto report = VerifyWheel(any, Policy("7.5;9.0", std::nullopt));
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(Failures(*report), std::vector<std::string>{"tags demo_pkg/_C.so"});

  const std::string arm =
      Wheel("arm", "manylinux_2_35_aarch64", {{"demo_pkg/_C.so", fixtures_->complete_library, ""}});
  auto wrong_cpu = VerifyWheel(arm, Policy("7.5;9.0", std::nullopt));
  ASSERT_TRUE(wrong_cpu.ok());
  ASSERT_EQ(Failures(*wrong_cpu), std::vector<std::string>{"tags demo_pkg/_C.so"});
  EXPECT_EQ(wrong_cpu->failures[0].message, "built for x86_64 but the wheel is tagged aarch64");

  const std::string cpu_only = Wheel("cpu_only", "manylinux_2_35_x86_64", {});
  auto no_cuda = VerifyWheel(cpu_only, Policy("9.0", std::nullopt));
  ASSERT_TRUE(no_cuda.ok());
  EXPECT_EQ(Failures(*no_cuda), std::vector<std::string>{"arch "});
}

TEST_F(WheelVerifierTest, UnreadableWheelIsAnErrorOrAFailure) {
  EXPECT_EQ(VerifyWheel(fixtures_->dir + "/nope.whl", Policy("9.0", std::nullopt)).status().code(),
            absl::StatusCode::kNotFound);
  auto not_zip = VerifyWheel(fixtures_->complete_library, Policy("9.0", std::nullopt));
  ASSERT_TRUE(not_zip.ok());
  EXPECT_FALSE(not_zip->Passed());
}

TEST(VerifyPolicyTest, ParsesManylinuxPolicies) {
  EXPECT_EQ(ParseManylinuxPolicy("2_35")->ToString(), "2.35");
  EXPECT_EQ(ParseManylinuxPolicy("2.28")->ToString(), "2.28");
  EXPECT_EQ(ParseManylinuxPolicy("manylinux_2_17")->ToString(), "2.17");
  EXPECT_EQ(ParseManylinuxPolicy("manylinux2014")->ToString(), "2.17");
  EXPECT_FALSE(ParseManylinuxPolicy("jammy").ok());
}

}  // namespace
}  // namespace farm
