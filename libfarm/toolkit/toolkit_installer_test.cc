// The installer offline: wheels laid out as NVIDIA's (nvidia/cu13/...) are made from the
// installed toolkit's nvcc, so the whole path runs (unpack, modes, check with the real
// `nvcc --version`, marker, rename) without PyPI. The integration test installs from PyPI.
#include "libfarm/toolkit/toolkit_installer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "libfarm/process/subprocess.h"
#include "libfarm/zip/zip_writer.h"

namespace farm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The installed toolkit's release ("13.0.88"), which the fake wheels carry.
std::string InstalledRelease() {
  auto run = RunCommand({"/usr/local/cuda/bin/nvcc", "--version"});
  if (!run.ok()) return "";
  const size_t v = run->stdout_text.find(", V");
  return v == std::string::npos
             ? ""
             : run->stdout_text.substr(v + 3, run->stdout_text.find('\n', v) - v - 3);
}

class FakeWheels final : public WheelSource {
 public:
  explicit FakeWheels(fs::path dir) : dir_(std::move(dir)) {}

  absl::StatusOr<std::string> Download(const PinnedWheel& wheel, const std::string& platform_tag,
                                       const std::string& dest_dir) override {
    ++downloads;
    platform_tags[wheel.package] = platform_tag;
    if (wheel.package == fail_package) {
      return absl::NotFoundError("pip could not download " + wheel.package);
    }
    const std::string version = wheel.package == wrong_version_package ? "1.0" : wheel.version;
    std::string dist = wheel.package;
    std::replace(dist.begin(), dist.end(), '-', '_');
    const std::string path =
        absl::StrCat(dest_dir, "/", dist, "-", version, "-py3-none-", platform_tag, ".whl");
    auto zip = ZipWriter::Create(path);
    if (!zip.ok()) return zip.status();
    for (const auto& [name, source] : Members(wheel.package)) {
      const std::string bytes = source.rfind("text:", 0) == 0 ? source.substr(5) : ReadAll(source);
      ByteSpan span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      // Mode 0644 whatever the file is: the installer must make programs executable itself.
      if (absl::Status s = zip->Add("nvidia/cu13/" + name, span, 0644, false); !s.ok()) return s;
    }
    if (absl::Status s = zip->Add(dist + "-" + version + ".dist-info/RECORD", {}, 0644); !s.ok()) {
      return s;
    }
    if (absl::Status s = zip->Finish(); !s.ok()) return s;
    return path;
  }
  absl::StatusOr<std::string> VersionsOnOffer(const std::string& package,
                                              const std::string& platform_tag) override {
    asked = package + " " + platform_tag;
    return std::string("13.5.37, 13.0.88, 13.0.48");
  }

  int downloads = 0;
  std::string fail_package, wrong_version_package, asked;
  std::map<std::string, std::string> platform_tags;  // package -> the tag it was fetched for

 private:
  // Member name -> source file, or "text:CONTENT". The real nvcc (its --version is checked);
  // the other programs only need to exist and be executable.
  std::map<std::string, std::string> Members(const std::string& package) {
    if (package == "nvidia-cuda-nvcc") {
      return {{"bin/nvcc", "/usr/local/cuda/bin/nvcc"},
              {"bin/nvcc.profile", "/usr/local/cuda/bin/nvcc.profile"},
              {"bin/ptxas", "/bin/true"},
              {"bin/fatbinary", "/bin/true"},
              {"bin/cudafe++", "/bin/true"},
              {"bin/crt/link.stub", "text:stub"}};
    }
    if (package == "nvidia-nvvm") {
      return {{"nvvm/bin/cicc", "/bin/true"}, {"nvvm/libdevice/libdevice.10.bc", "text:BC"}};
    }
    if (package == "nvidia-cuda-crt") {
      return {{"include/crt/host_config.h", "text:"}, {"include/crt/host_defines.h", "text:"}};
    }
    if (package == "nvidia-cuda-runtime") {
      return {{"include/cuda_runtime.h", "text:"}, {"lib/libcudart.so.13", "text:"}};
    }
    if (package == "nvidia-cublas") {
      return {{"include/cublas_v2.h", "text:"},
              {"lib/libcublas.so.13", "text:"},
              {"lib/libcublasLt.so.13", "text:"}};
    }
    return {{"include/cccl/cub/cub.cuh", "text:"}};
  }

  fs::path dir_;
};

class ToolkitInstallerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("farm_toolkit_install_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    release_ = InstalledRelease();
    ASSERT_NE(FindToolkitPin(release_), nullptr)
        << "the installed toolkit (" << release_ << ") has no pin to fake";
  }
  void TearDown() override { fs::remove_all(dir_); }

  ToolkitInstallRequest Request(const std::string& name) {
    return {.release = release_, .cpu_arch = "", .prefix = (dir_ / name).string()};
  }
  static uint32_t Mode(const fs::path& p) {
    struct stat st {};
    ::stat(p.c_str(), &st);
    return st.st_mode & 07777;
  }

  fs::path dir_;
  std::string release_;
};

TEST_F(ToolkitInstallerTest, AssemblesChecksAndPublishesTheToolkitOnce) {
  FakeWheels wheels(dir_);
  std::vector<std::string> said;
  auto result = InstallToolkit(Request("tk"), wheels,
                               [&](absl::string_view line) { said.emplace_back(line); });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->already_installed);
  EXPECT_EQ(wheels.downloads, 5);
  EXPECT_EQ(result->wheels.size(), 5u);
  EXPECT_TRUE(result->check.ran_nvcc);
  EXPECT_EQ(result->check.release, "V" + release_);
  EXPECT_EQ(result->check.root, (dir_ / "tk").string());
  EXPECT_THAT(said, ::testing::Contains(HasSubstr("downloading nvidia-nvvm==")));

  const fs::path tk = dir_ / "tk";
  for (const char* program :
       {"bin/nvcc", "bin/ptxas", "bin/fatbinary", "bin/cudafe++", "nvvm/bin/cicc"}) {
    EXPECT_EQ(Mode(tk / program), 0755u) << program;
  }
  for (const char* data : {"bin/nvcc.profile", "bin/crt/link.stub",
                           "nvvm/libdevice/libdevice.10.bc", "include/cuda_runtime.h"}) {
    EXPECT_EQ(Mode(tk / data), 0644u) << data;
  }
  // The runfile layout builds expect: nvcc.profile's lib64, CMake's libcudart.so.
  EXPECT_EQ(fs::read_symlink(tk / "lib64"), "lib");
  EXPECT_EQ(fs::read_symlink(tk / "lib/libcudart.so"), "libcudart.so.13");
  EXPECT_TRUE(fs::exists(tk / kToolkitMarkerFile));
  EXPECT_FALSE(fs::exists(tk / ("nvidia_cuda_nvcc-" + release_ + ".dist-info")));
  EXPECT_FALSE(fs::exists(dir_ / "tk.partial"));
  EXPECT_FALSE(fs::exists(dir_ / "tk.download"));

  // Again: checked and returned, nothing downloaded.
  auto again = InstallToolkit(Request("tk"), wheels);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->already_installed);
  EXPECT_EQ(wheels.downloads, 5);
  EXPECT_EQ(again->wheels, result->wheels);

  // Another release or CPU into the same prefix is refused, the toolkit left alone.
  ToolkitInstallRequest other = Request("tk");
  other.cpu_arch = "aarch64";
  auto refused = InstallToolkit(other, wheels);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("Fix: choose another --prefix"));
  EXPECT_TRUE(fs::exists(tk / "bin/nvcc"));
}

// A build host whose builds link a CUDA library (bitsandbytes: cuBLAS) gets it beside the
// compiler, with the development links CMake's FindCUDAToolkit looks for.
TEST_F(ToolkitInstallerTest, AddsTheLibrariesAskedForWithTheirDevelopmentLinks) {
  FakeWheels wheels(dir_);
  ToolkitInstallRequest with_cublas = Request("tk");
  with_cublas.libraries = {"cublas"};
  auto result = InstallToolkit(with_cublas, wheels);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(wheels.downloads, 6);
  const fs::path tk = dir_ / "tk";
  EXPECT_TRUE(fs::exists(tk / "include/cublas_v2.h"));
  EXPECT_EQ(fs::read_symlink(tk / "lib/libcublas.so"), "libcublas.so.13");
  EXPECT_EQ(fs::read_symlink(tk / "lib/libcublasLt.so"), "libcublasLt.so.13");
  EXPECT_EQ(fs::read_symlink(tk / "lib/libcudart.so"), "libcudart.so.13");
  // Fetched under the platform tag its pin names (PyPI has it as manylinux_2_27 only).
  EXPECT_THAT(wheels.platform_tags["nvidia-cublas"],
              ::testing::MatchesRegex("manylinux(_2_27|2014)_.*"));
  EXPECT_THAT(wheels.platform_tags["nvidia-cuda-nvcc"], ::testing::StartsWith("manylinux2014_"));

  // Asked again, with or without it: the toolkit as it is.
  auto again = InstallToolkit(with_cublas, wheels);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->already_installed);
  ASSERT_TRUE(InstallToolkit(Request("tk"), wheels).ok());
  EXPECT_EQ(wheels.downloads, 6);

  // A toolkit without it is not one with it: refused, naming what it lacks and the fix.
  ASSERT_TRUE(InstallToolkit(Request("plain"), wheels).ok());
  ToolkitInstallRequest plain_with_cublas = Request("plain");
  plain_with_cublas.libraries = {"cublas"};
  auto refused = InstallToolkit(plain_with_cublas, wheels);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("without cublas. Fix: choose another --prefix"));
  EXPECT_FALSE(fs::exists(dir_ / "plain/lib/libcublas.so"));

  // A library farmctl does not add: refused before anything is fetched.
  const int downloads = wheels.downloads;
  ToolkitInstallRequest unknown = Request("other");
  unknown.libraries = {"cufft"};
  auto bad = InstallToolkit(unknown, wheels);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("no CUDA library 'cufft'"));
  EXPECT_THAT(bad.status().message(), HasSubstr("Fix: --libraries cublas"));
  EXPECT_EQ(wheels.downloads, downloads);
  EXPECT_FALSE(fs::exists(dir_ / "other"));
}

TEST_F(ToolkitInstallerTest, AFailedDownloadOrAWrongWheelLeavesNothingBehind) {
  FakeWheels failing(dir_);
  failing.fail_package = "nvidia-cuda-crt";
  auto r = InstallToolkit(Request("tk"), failing);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("nvidia-cuda-crt"));
  FakeWheels wrong(dir_);
  wrong.wrong_version_package = "nvidia-cuda-runtime";
  auto w = InstallToolkit(Request("tk"), wrong);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(w.status().message(), HasSubstr("nvidia_cuda_runtime-1.0-"));
  for (const char* left : {"tk", "tk.partial", "tk.download"}) {
    EXPECT_FALSE(fs::exists(dir_ / left)) << left;
  }
}

TEST_F(ToolkitInstallerTest, AnUnpinnedReleaseNamesThePinsAndWhatPyPIOffers) {
  FakeWheels wheels(dir_);
  ToolkitInstallRequest r = Request("tk");
  r.release = "13.0.99";
  r.cpu_arch = "aarch64";
  auto result = InstallToolkit(r, wheels);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(result.status().message(),
              HasSubstr("no pinned CUDA toolkit 13.0.99: farmctl installs 13.0.48, 13.0.88"));
  EXPECT_THAT(result.status().message(),
              HasSubstr("nvidia-cuda-nvcc on PyPI for manylinux2014_aarch64 has versions: "
                        "13.5.37, 13.0.88, 13.0.48"));
  EXPECT_EQ(wheels.asked, "nvidia-cuda-nvcc manylinux2014_aarch64");
  EXPECT_EQ(wheels.downloads, 0);
  EXPECT_FALSE(fs::exists(dir_ / "tk"));
}

TEST_F(ToolkitInstallerTest, AnExistingDirectoryIsNeverOverwritten) {
  fs::create_directories(dir_ / "mine");
  std::ofstream(dir_ / "mine" / "notes.txt") << "keep";
  FakeWheels wheels(dir_);
  auto r = InstallToolkit(Request("mine"), wheels);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("is not a toolkit farmctl installed"));
  EXPECT_EQ(ReadAll((dir_ / "mine" / "notes.txt").string()), "keep");
  EXPECT_EQ(wheels.downloads, 0);
  // An empty directory is fine: it is what `mkdir -p` before an install leaves.
  fs::create_directories(dir_ / "empty");
  EXPECT_TRUE(InstallToolkit(Request("empty"), wheels).ok());
}

}  // namespace
}  // namespace farm
