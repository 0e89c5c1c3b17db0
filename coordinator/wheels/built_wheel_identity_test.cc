#include "coordinator/wheels/built_wheel_identity.h"

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "libfarm/process/subprocess.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A wheel by Python's zipfile: each dist-info folder gets METADATA naming `name` `version`.
void WriteWheel(const std::string& path, const std::vector<std::string>& dist_infos,
                const std::string& name, const std::string& version) {
  std::vector<std::string> argv = {
      "python3",
      "-c",
      "import sys, zipfile\n"
      "with zipfile.ZipFile(sys.argv[1], 'w') as z:\n"
      "  for d in sys.argv[4:]:\n"
      "    z.writestr(d + '/METADATA', 'Metadata-Version: 2.1\\nName: %s\\nVersion: %s\\n'"
      " % (sys.argv[2], sys.argv[3]))\n"
      "    z.writestr(d + '/WHEEL', 'Wheel-Version: 1.0\\nTag: py3-none-any\\n')\n",
      path,
      name,
      version};
  argv.insert(argv.end(), dist_infos.begin(), dist_infos.end());
  auto r = RunCommand(argv);
  ASSERT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->stderr_text : r.status().ToString());
}

class BuiltWheelIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / absl::StrCat("built_wheel_identity_", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string In(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(BuiltWheelIdentityTest, TheBuildsOwnPackageAndVersionPassInAnySpelling) {
  for (const char* name :
       {"probe_pkg-1.0.2-py3-none-linux_x86_64.whl", "Probe.Pkg-1.0.2.0-py3-none-linux_x86_64.whl",
        "probe_pkg-v1.0.2+cu130-cp312-cp312-manylinux_2_28_x86_64.whl",
        // A local label the build chose is the farm's to replace.
        "probe_pkg-1.0.2+git1a2b3c-1-py3-none-any.whl"}) {
    auto parsed = CheckBuiltWheelName(name, "probe-pkg", "1.0.2");
    EXPECT_TRUE(parsed.ok()) << name << ": " << parsed.status();
  }
}

// Issue 24: a build of probe-pkg 1.0.2 published numpy 99.0+cu130.
TEST_F(BuiltWheelIdentityTest, AnotherPackageOrVersionFailsNamingBoth) {
  auto other =
      CheckBuiltWheelName("numpy-99.0+cu130-py3-none-linux_x86_64.whl", "probe-pkg", "1.0.2");
  EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(other.status().message(),
              HasSubstr("the build of probe-pkg 1.0.2 produced "
                        "numpy-99.0+cu130-py3-none-linux_x86_64.whl, a wheel of numpy "
                        "99.0+cu130: a build publishes only its own package and version"));
  EXPECT_THAT(other.status().message(), HasSubstr("Fix: give the project the name probe-pkg and "
                                                  "the version 1.0.2"));
  for (const char* name :
       {"probe_pkg-1.0.3-py3-none-any.whl", "probe_pkg-1.0.2.post1-py3-none-any.whl",
        "probe_pkg-1.0.2rc1-py3-none-any.whl", "probe_pkg-1!1.0.2-py3-none-any.whl",
        "probe_pkgs-1.0.2-py3-none-any.whl"}) {
    EXPECT_EQ(CheckBuiltWheelName(name, "probe-pkg", "1.0.2").status().code(),
              absl::StatusCode::kFailedPrecondition)
        << name;
  }
}

TEST_F(BuiltWheelIdentityTest, AMalformedNameIsRefusedBeforeAnythingElse) {
  auto injected = CheckBuiltWheelName("probe_pkg-1.0.0$(id>PWNED)-py3-none-linux_x86_64.whl",
                                      "probe-pkg", "1.0.0");
  EXPECT_EQ(injected.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(injected.status().message(),
              HasSubstr("the build's wheel is refused: wheel file name "
                        "\"probe_pkg-1.0.0$(id>PWNED)-py3-none-linux_x86_64.whl\": the version "
                        "\"1.0.0$(id>PWNED)\" is not a PEP 440 version"));
}

// The file name can be the build's while the metadata inside names another project.
TEST_F(BuiltWheelIdentityTest, TheWheelsMetadataMustBeTheBuildsToo) {
  const std::string name = "probe_pkg-1.0.2+cu130-py3-none-any.whl";
  WriteWheel(In(name), {"probe_pkg-1.0.2+cu130.dist-info"}, "probe-pkg", "1.0.2+cu130");
  EXPECT_TRUE(CheckBuiltWheel(In(name), name, "probe-pkg", "1.0.2").ok());

  WriteWheel(In(name), {"probe_pkg-1.0.2+cu130.dist-info"}, "numpy", "1.0.2+cu130");
  EXPECT_THAT(CheckBuiltWheel(In(name), name, "probe-pkg", "1.0.2").message(),
              HasSubstr("METADATA says Name: numpy but the file name says probe_pkg"));

  WriteWheel(In(name), {"numpy-99.0+cu130.dist-info"}, "numpy", "99.0+cu130");
  EXPECT_THAT(CheckBuiltWheel(In(name), name, "probe-pkg", "1.0.2").message(),
              HasSubstr("folder matching its file name"));

  // A decoy folder matching the name beside the one pip would not install.
  WriteWheel(In(name), {"probe_pkg-1.0.2+cu130.dist-info", "numpy-99.0+cu130.dist-info"},
             "probe-pkg", "1.0.2+cu130");
  EXPECT_THAT(CheckBuiltWheel(In(name), name, "probe-pkg", "1.0.2").message(),
              HasSubstr("has 2 .dist-info folders"));
}

}  // namespace
}  // namespace farm::coordinator
