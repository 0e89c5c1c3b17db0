// Wheels that install anywhere their tag says (issue 44 item 3): every build's wheel goes
// through the build host's repair step (worker/wheel_repair.h), which carries the libraries it
// needs beyond the manylinux policy inside it or fails the build naming them. On loopback, one
// worker builds the demo extension for sm_80 with a C++ file that links the build host's
// libpng (outside the policy's allow-list), as torchvision's image extension does; then the
// same with a library that has no soname, and with a copy of the driver's libcuda.so.1 inside.
#include <filesystem>
#include <regex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "libfarm/process/subprocess.h"
#include "tests/support/demo_recipe.h"
#include "tests/support/suite_fixture.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kBuiltinPublish = "[[publish]]\nkind = \"builtin\"\n";
const std::string kBuildEnvTail = "CMAKE_BUILD_PARALLEL_LEVEL = \"{jobs}\"";

// A function of the demo's library that calls into libpng, and (with DEMO_NOSONAME) into a
// library built beside it without a soname, which CMake links as -lnosoname with a RUNPATH.
constexpr char kPngProbe[] = R"(#include <png.h>
#ifdef DEMO_NOSONAME
extern "C" int demo_nosoname();
extern "C" int demo_nosoname_value() { return demo_nosoname(); }
#endif
extern "C" const char* demo_png_version() { return png_get_libpng_ver(nullptr); }
)";
constexpr char kNoSoname[] = "extern \"C\" int demo_nosoname() { return 42; }\n";
// A library named as the NVIDIA driver's own (libcuda.so.1), which a package might ship by
// mistake (a copy from the build host, or the toolkit's stub renamed).
constexpr char kDriverCopy[] = "extern \"C\" int cuInit(unsigned) { return 0; }\n";
constexpr char kCMakeTail[] = R"(
target_sources(demo_cuda_ext PRIVATE src/png_probe.cc)
target_link_libraries(demo_cuda_ext PRIVATE png16)
if(DEFINED ENV{DEMO_NOSONAME})
  add_library(nosoname SHARED src/nosoname.cc)
  set_target_properties(nosoname PROPERTIES NO_SONAME ON)
  target_link_libraries(demo_cuda_ext PRIVATE nosoname)
  target_compile_definitions(demo_cuda_ext PRIVATE DEMO_NOSONAME)
endif()
if(DEFINED ENV{DEMO_DRIVER_COPY})
  add_library(driver_copy SHARED src/driver_copy.cc)
  set_target_properties(driver_copy PROPERTIES OUTPUT_NAME cuda SOVERSION 1)
endif()
)";
// setup.py packs the driver's copy beside the extension when CMake built it.
constexpr char kSetupPyCopy[] =
    "        shutil.copy2(os.path.join(build_temp, LIBRARY), os.path.join(target, LIBRARY))\n";
constexpr char kSetupPyDriverCopy[] =
    "        if os.path.exists(os.path.join(build_temp, \"libcuda.so.1\")):\n"
    "            shutil.copy2(os.path.join(build_temp, \"libcuda.so.1\"), target)\n";

CommandResult RunTool(const std::vector<std::string>& argv) {
  auto r = RunCommand(argv, absl::Seconds(120));
  if (!r.ok()) return CommandResult{.exit_code = -1, .stderr_text = r.status().ToString()};
  return CommandResult{
      .exit_code = r->exit_code, .stdout_text = r->stdout_text, .stderr_text = r->stderr_text};
}

class WheelRepairTest : public SuiteFixture<WheelRepairTest> {
 protected:
  static void SetUpSuite() {
    LeaveVirtualenvs();  // the worker makes the environments itself, as on a stock host
    dir_ = std::make_unique<TempDir>("wheel-repair-test");
    const fs::path src = *dir_ / "src";
    fs::copy(FARM_SOURCE_DIR "/examples/demo-cuda-ext", src, fs::copy_options::recursive);
    for (const char* leftover : {"build", "dist", "demo_cuda_ext.egg-info"}) {
      fs::remove_all(src / leftover);
    }
    WriteText(src / "src/png_probe.cc", kPngProbe);
    WriteText(src / "src/nosoname.cc", kNoSoname);
    WriteText(src / "src/driver_copy.cc", kDriverCopy);
    WriteText(src / "CMakeLists.txt", ReadFile(src / "CMakeLists.txt") + kCMakeTail);
    const std::string setup_py = ReadFile(src / "setup.py");
    ASSERT_NE(setup_py.find(kSetupPyCopy), std::string::npos) << "the demo's setup.py changed";
    WriteText(src / "setup.py",
              absl::StrReplaceAll(
                  setup_py, {{kSetupPyCopy, absl::StrCat(kSetupPyCopy, kSetupPyDriverCopy)}}));
    fs::create_directories(*dir_ / "published");

    const std::string recipes = *dir_ / "recipes";
    auto recipe = [&](const std::string& name, const std::string& env) {
      WriteText(absl::StrCat(recipes, "/", name, ".toml"),
                DemoRecipe(name, {{FARM_SOURCE_DIR "/examples/demo-cuda-ext", src.string()},
                                  {kBuildEnvTail, kBuildEnvTail + env},
                                  {kBuiltinPublish,
                                   absl::StrCat("[[publish]]\nkind = \"command\"\ncommand = "
                                                "[\"cp\", \"{wheel}\", \"",
                                                *dir_ / "published", "\"]\n")}}));
    };
    recipe("pngdemo", "");
    recipe("nosoname", "\nDEMO_NOSONAME = \"1\"");
    recipe("drivercopy", "\nDEMO_DRIVER_COPY = \"1\"");

    auto farm = TestFarm::Start(dir_->path(), WheelFarmOptions(dir_->path(), recipes, 1));
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }

  static void TearDownSuite() {
    farm_.reset();
    dir_.reset();
  }

  static CommandResult Submit(const std::string& ref) {
    return farm_->Farmctl({"submit", ref, "--archs", "8.0", "--wait"}, {}, absl::Minutes(15));
  }

  // The published wheel (the hook's copy); "" when there is none.
  static std::string PublishedWheel() {
    for (const auto& e : fs::directory_iterator(*dir_ / "published")) {
      if (e.path().extension() == ".whl") return e.path().string();
    }
    return "";
  }

  // The auditwheel the worker installed in its repair tool environment.
  static std::string Auditwheel() {
    for (const auto& e : fs::directory_iterator(*dir_ / "builds/.envs")) {
      const fs::path tool = e.path() / "bin/auditwheel";
      if (fs::exists(tool)) return tool.string();
    }
    return "";
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<TestFarm> farm_;
};

TEST_F(WheelRepairTest, AHostLibraryOutsideThePolicyIsCarriedAndTheTagIsAuditwheels) {
  CommandResult r = Submit("pngdemo-0.1.0");
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  const std::string wheel = PublishedWheel();
  ASSERT_FALSE(wheel.empty()) << Output(r);
  const std::string filename = fs::path(wheel).filename().string();
  std::smatch tag;
  ASSERT_TRUE(
      std::regex_search(filename, tag, std::regex("-(manylinux_2_[0-9]+_(x86_64|aarch64))\\.whl$")))
      << filename;

  // The build log says what was carried, from where, how big.
  CommandResult logs = farm_->Farmctl({"logs", SubmittedBuildId(r)});
  EXPECT_THAT(logs.stdout_text, ::testing::ContainsRegex(
                                    "wheelfarm: carrying libpng16.so.16 from /[^ ]*libpng16[^ ]* "
                                    "\\([0-9]+ bytes\\), needed by "
                                    "demo_cuda_ext/libdemo_cuda_ext.so"))
      << logs.stdout_text;
  EXPECT_THAT(logs.stdout_text, HasSubstr("wheelfarm: carried demo_cuda_ext.libs/libpng16-"))
      << logs.stdout_text;

  // Inside: the renamed copy, and the extension's RPATH and DT_NEEDED pointing at it.
  const fs::path unpacked = *dir_ / "unpacked";
  CommandResult unzip = RunTool({"python3", "-m", "zipfile", "-e", wheel, unpacked.string()});
  ASSERT_EQ(unzip.exit_code, 0) << Output(unzip);
  std::string carried;
  for (const auto& e : fs::directory_iterator(unpacked / "demo_cuda_ext.libs")) {
    carried = e.path().filename().string();
  }
  EXPECT_TRUE(std::regex_match(carried, std::regex("libpng16-[0-9a-f]{8}\\.so\\.16[.0-9]*")))
      << carried;
  const std::string extension = (unpacked / "demo_cuda_ext/libdemo_cuda_ext.so").string();
  CommandResult dynamic = RunTool({"readelf", "-d", extension});
  EXPECT_THAT(dynamic.stdout_text, HasSubstr("[$ORIGIN/../demo_cuda_ext.libs]")) << Output(dynamic);
  EXPECT_THAT(dynamic.stdout_text, HasSubstr(absl::StrCat("[", carried, "]"))) << Output(dynamic);
  EXPECT_THAT(dynamic.stdout_text, ::testing::Not(HasSubstr("[libpng16.so.16]")))
      << Output(dynamic);

  // auditwheel agrees with the published tag.
  const std::string auditwheel = Auditwheel();
  ASSERT_FALSE(auditwheel.empty()) << "no repair tool environment under " << *dir_ / "builds/.envs";
  CommandResult show = RunTool({auditwheel, "show", "--json", wheel});
  ASSERT_EQ(show.exit_code, 0) << Output(show);
  const nlohmann::json report = nlohmann::json::parse(show.stdout_text, nullptr, false);
  EXPECT_EQ(report.value("overall_tag", ""), tag[1].str()) << show.stdout_text;
  EXPECT_TRUE(report.value("external_libs", nlohmann::json::object()).empty()) << show.stdout_text;

  // It loads where the host's libpng cannot be: in a mount namespace whose libpng files read
  // as empty, the library is the wheel's copy (the control: the host's own fails to load).
  std::vector<std::string> hidden = {"bwrap", "--dev-bind", "/", "/"};
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
                          "/usr/lib/aarch64-linux-gnu", "/lib/aarch64-linux-gnu"}) {
    if (!fs::exists(dir) || fs::is_symlink(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().filename().string().rfind("libpng16.so", 0) == 0 && !e.is_symlink()) {
        hidden.insert(hidden.end(), {"--ro-bind", "/dev/null", e.path().string()});
      }
    }
  }
  ASSERT_GT(hidden.size(), 4u) << "no libpng16 on this host";
  auto in_hidden = [&](const std::string& code) {
    std::vector<std::string> argv = hidden;
    argv.insert(argv.end(), {"python3", "-c", code});
    return RunTool(argv);
  };
  CommandResult host = in_hidden("import ctypes; ctypes.CDLL('libpng16.so.16')");
  EXPECT_NE(host.exit_code, 0) << "the host's libpng still loads: " << Output(host);
  CommandResult loaded =
      in_hidden(absl::StrCat("import ctypes; lib = ctypes.CDLL(", nlohmann::json(extension).dump(),
                             "); lib.demo_png_version.restype = ctypes.c_char_p; "
                             "print(lib.demo_png_version().decode())"));
  EXPECT_EQ(loaded.exit_code, 0) << Output(loaded);
  EXPECT_THAT(loaded.stdout_text, ::testing::MatchesRegex("1\\.6\\.[0-9]+\n")) << Output(loaded);
  CommandResult ldd = RunTool({"ldd", extension});
  EXPECT_THAT(ldd.stdout_text,
              HasSubstr(absl::StrCat(carried, " => ", unpacked.string(),
                                     "/demo_cuda_ext/../demo_cuda_ext.libs/", carried)))
      << Output(ldd);
}

TEST_F(WheelRepairTest, ALibraryWithNoSonameFailsTheBuildNamingItAndTheExtension) {
  CommandResult r = Submit("nosoname-0.1.0");
  EXPECT_NE(r.exit_code, 0) << Output(r);
  EXPECT_THAT(r.stderr_text, HasSubstr("demo_cuda_ext/libdemo_cuda_ext.so needs libnosoname.so ("))
      << Output(r);
  EXPECT_THAT(r.stderr_text, HasSubstr("a library with no soname, which cannot be carried"))
      << Output(r);
  EXPECT_THAT(r.stderr_text, HasSubstr("Fix: give the library a soname")) << Output(r);
}

// A wheel that ships its own libcuda.so.1 would load it instead of the driver's and break on
// every other driver release: the build fails naming the file and the fix; nothing published.
TEST_F(WheelRepairTest, AWheelShippingTheDriversLibraryFailsTheBuildNamingIt) {
  CommandResult r = Submit("drivercopy-0.1.0");
  EXPECT_NE(r.exit_code, 0) << Output(r);
  EXPECT_THAT(r.stderr_text, HasSubstr("the wheel ships demo_cuda_ext/libcuda.so.1, a copy of the "
                                       "NVIDIA driver's own library"))
      << Output(r);
  EXPECT_THAT(r.stderr_text, HasSubstr("Fix: leave it out of the package")) << Output(r);
  for (const auto& e : fs::directory_iterator(*dir_ / "published")) {
    EXPECT_THAT(e.path().filename().string(), ::testing::Not(HasSubstr("drivercopy")));
  }
}

}  // namespace
}  // namespace farm::testing
