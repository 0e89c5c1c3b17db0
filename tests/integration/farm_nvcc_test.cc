// farm-nvcc against a real local farm (coordinator + 2 workers) and plain nvcc: for every
// arch, the cubin and PTX bytes inside the fat binaries must be identical; compile errors,
// dependency files and the action cache must behave as a user of nvcc expects.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <httplib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/net/address.h"
#include "libfarm/process/subprocess.h"
#include "tests/support/device_payloads.h"
#include "tests/support/suite_fixture.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const char* const kNvcc = "/usr/local/cuda/bin/nvcc";

std::string SourceDir() { return std::string(FARM_SOURCE_DIR) + "/tests/data/cuda"; }

class FarmNvccTest : public SuiteFixture<FarmNvccTest> {
 public:
  // Run, for helpers outside the fixture.
  CommandResult RunIn(const std::vector<std::string>& argv, const std::string& cwd) {
    return Run(argv, cwd);
  }

 protected:
  static void SetUpSuite() {
    dir_ = std::make_unique<TempDir>("farm-nvcc-test");
    auto farm = TestFarm::Start(dir_->path());
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }
  static void TearDownSuite() {
    farm_.reset();
    dir_.reset();
  }

  // Runs `argv` in `cwd` with farm-nvcc's environment (debug log: one line per shard).
  CommandResult Run(const std::vector<std::string>& argv, const std::string& cwd,
                    std::vector<std::string> env = {}) {
    std::vector<std::string> full = {"env", "-C", cwd};
    full.insert(full.end(), argv.begin(), argv.end());
    env.push_back("FARM_COORDINATOR=" + farm_->address());
    env.push_back("FARM_TOKEN_FILE=" + farm_->admin_token_file());
    env.push_back("FARM_NVCC_LOG=debug");
    if (std::none_of(env.begin(), env.end(),
                     [](const std::string& e) { return e.rfind("FARM_BUILD_ID=", 0) == 0; })) {
      env.push_back("FARM_BUILD_ID=farm-nvcc-test");
    }
    auto r = RunCommand(full, absl::Minutes(5), env);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }

  // A fresh work dir holding copies of the test sources.
  std::string WorkDir(const std::string& label) {
    const std::string d = *dir_ / label;
    fs::create_directories(d);
    for (const auto& entry : fs::directory_iterator(SourceDir())) {
      fs::copy_file(entry.path(), d + "/" + entry.path().filename().string(),
                    fs::copy_options::overwrite_existing);
    }
    return d;
  }

  // Compiles `source` with plain nvcc and with farm-nvcc (launcher form) in the same
  // directory (nvcc's device code depends on the source's path) and checks that every device
  // payload is byte-identical and that each shard ran on the farm.
  void ExpectSameDeviceCode(const std::string& label, const std::string& source,
                            const std::vector<std::string>& flags,
                            const std::vector<std::string>& shards) {
    SCOPED_TRACE(label);
    const std::string d = WorkDir(label);
    std::vector<std::string> plain = {kNvcc, "-c", source, "-o", "plain.o"};
    plain.insert(plain.end(), flags.begin(), flags.end());
    CommandResult p = Run(plain, d);
    ASSERT_EQ(p.exit_code, 0) << p.stderr_text;
    std::vector<std::string> farm = {FarmBinary("farm-nvcc"), kNvcc, "-c", source, "-o", "farm.o"};
    farm.insert(farm.end(), flags.begin(), flags.end());
    CommandResult f = Run(farm, d);
    ASSERT_EQ(f.exit_code, 0) << f.stderr_text;
    EXPECT_THAT(f.stderr_text, Not(HasSubstr("running plain nvcc"))) << f.stderr_text;
    for (const std::string& shard : shards) {
      EXPECT_THAT(f.stderr_text, HasSubstr("farm-nvcc: " + shard + ": ")) << f.stderr_text;
    }
    ExpectSamePayloads(d + "/plain.o", d + "/farm.o");
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<TestFarm> farm_;
};

TEST_F(FarmNvccTest, CubTemplatesOnThreeArchsMatchPlainNvcc) {
  ExpectSameDeviceCode("cub", "reduce_cub.cu",
                       {"-O2", "-std=c++17", "-gencode", "arch=compute_75,code=sm_75", "-gencode",
                        "arch=compute_90,code=sm_90", "-gencode", "arch=compute_121,code=sm_121"},
                       {"sm_75", "sm_90", "sm_121"});
}

// The host compile runs beside the device jobs with a placeholder fat binary, which is
// swapped for the real one in the object afterwards: the object must be byte for byte the
// one the host compile writes when it waits for the fat binary, as under nvcc. The action
// cache answers the second compile, so only the host side differs.
TEST_F(FarmNvccTest, HostCompileAheadWritesTheObjectTheWaitingCompileWrites) {
  const std::string d = WorkDir("ahead");
  const std::vector<std::string> args = {FarmBinary("farm-nvcc"),
                                         kNvcc,
                                         "-c",
                                         "reduce_cub.cu",
                                         "-O2",
                                         "-std=c++17",
                                         "-Xcompiler=-fPIC",
                                         "-gencode",
                                         "arch=compute_75,code=[compute_75,sm_75]",
                                         "-gencode",
                                         "arch=compute_90,code=sm_90",
                                         "-gencode",
                                         "arch=compute_121,code=sm_121",
                                         "-o"};
  std::vector<std::string> ahead = args, waiting = args;
  ahead.push_back("ahead.o");
  waiting.push_back("waiting.o");
  CommandResult a = Run(ahead, d);
  ASSERT_EQ(a.exit_code, 0) << a.stderr_text;
  EXPECT_THAT(a.stderr_text, HasSubstr("host compile ran beside the device jobs"));
  CommandResult w = Run(waiting, d, {"FARM_NVCC_HOST_COMPILE_AHEAD=0"});
  ASSERT_EQ(w.exit_code, 0) << w.stderr_text;
  EXPECT_THAT(w.stderr_text, Not(HasSubstr("host compile ran beside")));
  const std::string want = ReadFile(d + "/waiting.o");
  ASSERT_GT(want.size(), 1000u);
  EXPECT_TRUE(ReadFile(d + "/ahead.o") == want) << "objects differ";
  // With -g the fat binary's size is in the debug info: the compile waits, as nvcc's does.
  std::vector<std::string> debug = args;
  debug.insert(debug.end(), {"debug.o", "-Xcompiler=-g"});
  CommandResult g = Run(debug, d);
  ASSERT_EQ(g.exit_code, 0) << g.stderr_text;
  EXPECT_THAT(g.stderr_text, Not(HasSubstr("host compile ran beside")));
}

// Debug info names the source: absolute, as CMake passes it. With -lineinfo ptxas also
// stamps each source's mtime and size into the cubin; the sandboxed worker has no source, so
// it shows stand-ins of the build host's stamps (farm.v1.SourceStamp).
TEST_F(FarmNvccTest, ArchDependentCodeWithPtxAndCubinMatchesPlainNvcc) {
  ExpectSameDeviceCode(
      "arch", *dir_ / "arch/arch_dependent.cu",
      {"-arch=sm_75", "-gencode", "arch=compute_90,code=[compute_90,sm_90]", "-lineinfo"},
      {"sm_75", "sm_90"});
}

TEST_F(FarmNvccTest, PtxOnlyArchSpecificAndFamilyTargetsMatchPlainNvcc) {
  ExpectSameDeviceCode(
      "targets", "saxpy.cu",
      {"-gencode", "arch=compute_80,code=compute_80", "-gencode", "arch=compute_90a,code=sm_90a",
       "-gencode", "arch=compute_100f,code=sm_100f"},
      {"compute_80", "sm_90a", "sm_100f"});
}

TEST_F(FarmNvccTest, CompressedThreadedAndOptionsFileMatchPlainNvcc) {
  const std::string options = *dir_ / "saxpy.options";
  std::ofstream(options) << "--compress-mode=size -Xptxas -O1\n"
                            "-gencode arch=compute_75,code=sm_75\n";
  ExpectSameDeviceCode("options", "saxpy.cu",
                       {"--options-file", options, "-Xfatbin", "-compress-all", "--threads", "2",
                        "-gencode", "arch=compute_90,code=sm_90"},
                       {"sm_75", "sm_90"});
}

TEST_F(FarmNvccTest, RelocatableDeviceCodeLinksToTheSameDeviceCode) {
  const std::string d = WorkDir("rdc");
  const std::vector<std::string> arch = {"-gencode", "arch=compute_75,code=sm_75", "-gencode",
                                         "arch=compute_90,code=sm_90"};
  for (const std::string way : {"plain", "farm"}) {
    const bool farm = way == "farm";
    for (const char* src : {"rdc_caller", "rdc_callee"}) {
      std::vector<std::string> argv;
      if (farm) argv.push_back(FarmBinary("farm-nvcc"));
      argv.insert(argv.end(), {kNvcc, "-dc", absl::StrCat(src, ".cu"), "-o",
                               absl::StrCat(way, "_", src, ".o")});
      argv.insert(argv.end(), arch.begin(), arch.end());
      CommandResult r = Run(argv, d);
      ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
      if (farm) {
        EXPECT_THAT(r.stderr_text, HasSubstr("farm-nvcc: sm_90: "));
      }
    }
    // The device link stays local: farm-nvcc hands -dlink to nvcc and says so.
    std::vector<std::string> link;
    if (farm) link.push_back(FarmBinary("farm-nvcc"));
    link.insert(link.end(), {kNvcc, "-dlink", way + "_rdc_caller.o", way + "_rdc_callee.o", "-o",
                             way + "_dlink.o"});
    link.insert(link.end(), arch.begin(), arch.end());
    CommandResult r = Run(link, d);
    ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
    if (farm) {
      EXPECT_THAT(r.stderr_text, HasSubstr("running plain nvcc: not decomposable: -dlink"));
    }
  }
  for (const char* object : {"rdc_caller.o", "rdc_callee.o", "dlink.o"}) {
    SCOPED_TRACE(object);
    ExpectSamePayloads(absl::StrCat(d, "/plain_", object), absl::StrCat(d, "/farm_", object));
  }
}

// nvcc writes -MD files from its preprocessors' line markers, device ones first; farm-nvcc
// rebuilds them from the same outputs. Headers only some archs (or only the host) include,
// a directory with a space, -MMD's system-header filter and -MP's empty rules must all come
// out as nvcc's.
TEST_F(FarmNvccTest, DependencyFilesAreNvccsOwn) {
  const std::string d = WorkDir("deps-arch");
  fs::create_directories(d + "/with space");
  std::ofstream(d + "/with space/common.h") << "#pragma once\nconstexpr int kCommon = 1;\n";
  std::ofstream(d + "/sm90_only.h") << "constexpr int kSm90 = 90;\n";
  std::ofstream(d + "/sm75_only.h") << "constexpr int kSm75 = 75;\n";
  std::ofstream(d + "/host_only.h") << "#include <cstdio>\ninline void HostOnly() {}\n";
  std::ofstream(d + "/deps.cu")
      << "#ifndef __CUDA_ARCH__\n#include \"host_only.h\"\n#endif\n"
         "#include \"with space/common.h\"\n"
         "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900\n#include \"sm90_only.h\"\n#endif\n"
         "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750\n#include \"sm75_only.h\"\n#endif\n"
         "__global__ void K(int* p) { *p = kCommon; }\n";
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"-MD"}, std::vector<std::string>{"-MMD", "-MP"}}) {
    SCOPED_TRACE(flags.front());
    auto args = [&](const std::string& way) {
      std::vector<std::string> a = {kNvcc};
      a.insert(a.end(), flags.begin(), flags.end());
      a.insert(a.end(), {"-MT", "obj/deps.o", "-MF", way + ".d", "-c", "deps.cu", "-o", way + ".o",
                         "-gencode", "arch=compute_90,code=sm_90", "-gencode",
                         "arch=compute_75,code=sm_75"});
      return a;
    };
    CommandResult p = Run(args("plain"), d);
    ASSERT_EQ(p.exit_code, 0) << p.stderr_text;
    std::vector<std::string> farm = {FarmBinary("farm-nvcc")};
    for (auto& a : args("farm")) farm.push_back(a);
    CommandResult f = Run(farm, d);
    ASSERT_EQ(f.exit_code, 0) << f.stderr_text;
    EXPECT_THAT(f.stderr_text, HasSubstr("farm-nvcc: sm_75: "));
    const std::string want = ReadFile(d + "/plain.d");
    ASSERT_THAT(want, HasSubstr("with\\ space/common.h"));
    EXPECT_EQ(ReadFile(d + "/farm.d"), want);
  }
}

TEST_F(FarmNvccTest, CompileErrorInARemoteShardReadsExactlyAsNvccs) {
  const std::string plain_dir = WorkDir("error-plain");
  const std::string farm_dir = WorkDir("error-farm");
  const std::vector<std::string> args = {kNvcc,
                                         "-c",
                                         "compile_error.cu",
                                         "-o",
                                         "e.o",
                                         "-gencode",
                                         "arch=compute_75,code=sm_75",
                                         "-gencode",
                                         "arch=compute_90,code=sm_90"};
  CommandResult p = Run(args, plain_dir);
  ASSERT_NE(p.exit_code, 0);
  ASSERT_THAT(p.stderr_text, HasSubstr("undeclared_on_hopper"));
  std::vector<std::string> farm = {FarmBinary("farm-nvcc")};
  farm.insert(farm.end(), args.begin(), args.end());
  // At the default log level farm-nvcc adds nothing to nvcc's diagnostics.
  std::vector<std::string> cmd = {"env", "-C", farm_dir, "FARM_NVCC_LOG=info"};
  cmd.insert(cmd.end(), farm.begin(), farm.end());
  auto f = RunCommand(
      cmd, absl::Minutes(5),
      {"FARM_COORDINATOR=" + farm_->address(), "FARM_TOKEN_FILE=" + farm_->admin_token_file()});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->exit_code, p.exit_code);
  EXPECT_EQ(f->stderr_text, p.stderr_text);
  EXPECT_EQ(f->stdout_text, p.stdout_text);
  EXPECT_FALSE(fs::exists(farm_dir + "/e.o"));
}

TEST_F(FarmNvccTest, RebuildIsAnsweredFromTheCacheAndANewArchCompilesAlone) {
  const std::string d = WorkDir("cache");
  auto compile = [&](const std::string& archs) {
    // saxpy.cu does not read __CUDA_ARCH_LIST__: a new arch leaves the others' input alone.
    std::vector<std::string> argv = {FarmBinary("farm-nvcc"), kNvcc, "-c", "saxpy.cu", "-o", "a.o"};
    for (absl::string_view a : absl::StrSplit(archs, ',')) {
      argv.push_back("-gencode");
      argv.push_back(absl::StrCat("arch=compute_", a, ",code=sm_", a));
    }
    CommandResult r = Run(argv, d);
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    return r.stderr_text;
  };
  compile("75,90");
  // The same compile again is restored whole by the compile cache: no device compile.
  const std::string again = compile("75,90");
  EXPECT_THAT(again, HasSubstr("farm-nvcc: saxpy.cu: compile cache"));
  EXPECT_THAT(again, Not(HasSubstr("farm-nvcc: sm_")));
  // Another command line misses it; its unchanged per-arch device code is in the action cache.
  const std::string wider = compile("75,90,121");
  EXPECT_THAT(wider, HasSubstr("farm-nvcc: sm_75: action cache"));
  EXPECT_THAT(wider, HasSubstr("farm-nvcc: sm_90: action cache"));
  EXPECT_THAT(wider, HasSubstr("farm-nvcc: sm_121: ran on w"));
}

TEST_F(FarmNvccTest, UnreachableCoordinatorFallsBackToPlainNvccWithOneLine) {
  const std::string d = WorkDir("down");
  std::vector<std::string> cmd = {
      "env", "-C", d, FarmBinary("farm-nvcc"), kNvcc, "-c", "saxpy.cu", "-o", "s.o", "-arch=sm_75"};
  auto r =
      RunCommand(cmd, absl::Minutes(2),
                 {"FARM_COORDINATOR=127.0.0.1:1", "FARM_TOKEN_FILE=" + farm_->admin_token_file()});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 0) << r->stderr_text;
  EXPECT_THAT(r->stderr_text, HasSubstr("farm-nvcc: running plain nvcc: "));
  EXPECT_EQ(std::count(r->stderr_text.begin(), r->stderr_text.end(), '\n'), 1) << r->stderr_text;
  EXPECT_THAT(Keys(DevicePayloads(d + "/s.o")), ::testing::Contains(HasSubstr("sm_75")));
}

TEST_F(FarmNvccTest, DeviceDebugRunsPlainNvccAndSaysWhy) {
  const std::string d = WorkDir("device-debug");
  CommandResult r = Run(
      {FarmBinary("farm-nvcc"), kNvcc, "-G", "-c", d + "/saxpy.cu", "-o", "s.o", "-arch=sm_90"}, d);
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_THAT(r.stderr_text, HasSubstr("running plain nvcc: not decomposable: -G"));
  EXPECT_THAT(Keys(DevicePayloads(d + "/s.o")), ::testing::Contains(HasSubstr("sm_90")));
}

// Every call reports its outcome: the build counts 1 split and 1 fallback by its code
// (command_line) with its text as the example, `farmctl build` and /metrics show them, and in
// strict mode a call that would fall back fails, naming the file and the reason, and writes
// no object.
TEST_F(FarmNvccTest, FallbacksAreCountedPerBuildAndStrictModeRefusesThem) {
  const std::string d = WorkDir("fallback-counts");
  const std::string build = "fallback-counts";
  // A define no other case uses: the compile cache cannot answer this call.
  const std::string salt = absl::StrCat("-DFALLBACK_COUNT_SALT=", absl::ToUnixNanos(absl::Now()));
  const std::vector<std::string> env = {"FARM_BUILD_ID=" + build};
  CommandResult split = Run(
      {FarmBinary("farm-nvcc"), kNvcc, "-c", d + "/saxpy.cu", "-o", "split.o", "-arch=sm_90", salt},
      d, env);
  ASSERT_EQ(split.exit_code, 0) << split.stderr_text;
  EXPECT_THAT(split.stderr_text, Not(HasSubstr("running plain nvcc")));
  CommandResult fallback = Run({FarmBinary("farm-nvcc"), kNvcc, "-G", "-c", d + "/saxpy.cu", "-o",
                                "fallback.o", "-arch=sm_90"},
                               d, env);
  ASSERT_EQ(fallback.exit_code, 0) << fallback.stderr_text;
  EXPECT_TRUE(fs::exists(d + "/fallback.o"));

  const std::vector<std::string> farm_env = {"FARM_COORDINATOR=" + farm_->address(),
                                             "FARM_TOKEN_FILE=" + farm_->admin_token_file()};
  CommandResult json = RunFarmctl({"build", build, "--json"}, farm_env);
  ASSERT_EQ(json.exit_code, 0) << json.stderr_text;
  const nlohmann::json b = nlohmann::json::parse(json.stdout_text, nullptr, false);
  ASSERT_TRUE(b.is_object()) << json.stdout_text;
  EXPECT_EQ(b["nvcc"]["total"], "2") << b["nvcc"].dump();
  EXPECT_EQ(b["nvcc"]["split"], "1");
  EXPECT_EQ(b["nvcc"]["fallbacks"], "1");
  EXPECT_EQ(b["nvcc"]["fallback_reasons"]["command_line"], "1") << b["nvcc"].dump();
  EXPECT_EQ(b["nvcc"]["fallback_examples"]["command_line"]["details"][0],
            "not decomposable: -G device debug info records the compiling directory")
      << b["nvcc"].dump();
  CommandResult text = RunFarmctl({"build", build}, farm_env);
  ASSERT_EQ(text.exit_code, 0) << text.stderr_text;
  EXPECT_THAT(text.stdout_text,
              HasSubstr("nvcc       1 of 2 calls split; 1 ran plain nvcc: command_line × 1\n"
                        "           command_line: not decomposable: -G device debug info "
                        "records the compiling directory\n"));

  auto hp = ParseHostPort(farm_->coordinator().http_address());
  ASSERT_TRUE(hp.ok()) << hp.status();
  httplib::Client http(hp->host, hp->port);
  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body,
              HasSubstr("farm_nvcc_calls_total{outcome=\"fallback\",reason=\"command_line\"} "));
  EXPECT_THAT(metrics->body, HasSubstr("farm_nvcc_calls_total{outcome=\"split\",reason=\"\"} "));

  // Strict: no nvcc runs, so no object; the reason and the file are named; still counted.
  std::vector<std::string> strict_env = env;
  strict_env.push_back("FARM_NVCC_STRICT=1");
  CommandResult strict = Run({FarmBinary("farm-nvcc"), kNvcc, "-G", "-c", d + "/saxpy.cu", "-o",
                              "strict.o", "-arch=sm_90"},
                             d, strict_env);
  EXPECT_EQ(strict.exit_code, 3) << strict.stderr_text;
  EXPECT_THAT(strict.stderr_text,
              HasSubstr("farm-nvcc: strict mode: " + d +
                        "/saxpy.cu would run plain nvcc: not decomposable: -G device debug info "
                        "records the compiling directory. Fix: "));
  EXPECT_FALSE(fs::exists(d + "/strict.o"));
  // A call that splits is unaffected by strict mode.
  CommandResult strict_split = Run({FarmBinary("farm-nvcc"), kNvcc, "-c", d + "/saxpy.cu", "-o",
                                    "strict_split.o", "-arch=sm_90", salt + "1"},
                                   d, strict_env);
  EXPECT_EQ(strict_split.exit_code, 0) << strict_split.stderr_text;
  EXPECT_TRUE(fs::exists(d + "/strict_split.o"));
  CommandResult after = RunFarmctl({"build", build}, farm_env);
  EXPECT_THAT(after.stdout_text,
              HasSubstr("nvcc       2 of 4 calls split; 2 ran plain nvcc: command_line × 2\n"))
      << after.stdout_text;
}

// The report is best effort: a build id the coordinator does not know is refused there, and
// the compile goes on as if nothing happened.
// A split call's host compile (cudafe++'s output by the host compiler) runs on the farm
// through farm-cc, installed beside farm-nvcc, and writes the object the build host's would.
TEST_F(FarmNvccTest, TheHostCompileRunsOnTheFarmThroughFarmCc) {
  ASSERT_TRUE(fs::exists(FarmBinary("farm-cc")));
  const std::string d = WorkDir("host-side");
  // Defines no other call uses and the code ignores, one per call: neither is answered by the
  // compile cache, and saxpy.cu's module id does not depend on them.
  const int64_t now = absl::ToUnixNanos(absl::Now());
  const std::vector<std::string> args = {FarmBinary("farm-nvcc"), kNvcc,         "-c",
                                         d + "/saxpy.cu",         "-arch=sm_90", "-o"};
  std::vector<std::string> on = args;
  on.insert(on.end(), {"on.o", absl::StrCat("-DHOST_SIDE_SALT=", now)});
  const std::string cc_cache = d + "/farm-cc-cache";
  CommandResult farm =
      Run(on, d, {"FARM_BUILD_ID=nvcc-host-on-farm", "FARM_CC_CACHE_DIR=" + cc_cache});
  ASSERT_EQ(farm.exit_code, 0) << farm.stderr_text;
  // farm-cc found the toolchain there, and kept no scan of nvcc's temporary source.
  EXPECT_TRUE(fs::exists(cc_cache));
  EXPECT_FALSE(fs::exists(cc_cache + "/scans"));
  std::vector<std::string> off = args;
  off.insert(off.end(), {"off.o", absl::StrCat("-DHOST_SIDE_SALT=", now + 1)});
  CommandResult here =
      Run(off, d, {"FARM_BUILD_ID=nvcc-host-here", "FARM_NVCC_HOST_COMPILE_ON_FARM=0"});
  ASSERT_EQ(here.exit_code, 0) << here.stderr_text;
  const std::string object = ReadFile(d + "/on.o");
  ASSERT_GT(object.size(), 1000u);
  EXPECT_TRUE(object == ReadFile(d + "/off.o")) << "the farm's host compile wrote another object";

  const std::vector<std::string> farm_env = {"FARM_COORDINATOR=" + farm_->address(),
                                             "FARM_TOKEN_FILE=" + farm_->admin_token_file()};
  for (const auto& [build, on_farm] : std::vector<std::pair<std::string, std::string>>{
           {"nvcc-host-on-farm", "1"}, {"nvcc-host-here", ""}}) {
    CommandResult json = RunFarmctl({"build", build, "--json"}, farm_env);
    ASSERT_EQ(json.exit_code, 0) << json.stderr_text;
    const nlohmann::json b = nlohmann::json::parse(json.stdout_text, nullptr, false);
    ASSERT_TRUE(b.is_object()) << json.stdout_text;
    if (on_farm.empty()) {
      EXPECT_FALSE(b.contains("host_compiles")) << b.dump();
    } else {
      EXPECT_EQ(b["host_compiles"]["split"], on_farm) << b.dump();
    }
  }
}

// A rebuild of unchanged sources is answered whole by the compile cache: no action runs, so
// only its calls' reports say it happened. It is a build all the same: listed, finished and
// counted, its calls shown.
TEST_F(FarmNvccTest, ABuildTheCompileCacheAnswersWholeIsListedAndCounted) {
  const std::string d = WorkDir("cached-build");
  const std::vector<std::string> compile = {
      FarmBinary("farm-nvcc"),
      kNvcc,
      "-c",
      d + "/saxpy.cu",
      "-o",
      "saxpy.o",
      "-arch=sm_90",
      absl::StrCat("-DCACHED_BUILD_SALT=", absl::ToUnixNanos(absl::Now()))};
  CommandResult first = Run(compile, d, {"FARM_BUILD_ID=cached-build-first"});
  ASSERT_EQ(first.exit_code, 0) << first.stderr_text;
  EXPECT_THAT(first.stderr_text, HasSubstr("farm-nvcc: sm_90: "));
  CommandResult again = Run(compile, d, {"FARM_BUILD_ID=cached-build-again"});
  ASSERT_EQ(again.exit_code, 0) << again.stderr_text;
  EXPECT_THAT(again.stderr_text, HasSubstr("/saxpy.cu: compile cache"));
  EXPECT_THAT(again.stderr_text, Not(HasSubstr("was not counted")));

  const std::vector<std::string> farm_env = {"FARM_COORDINATOR=" + farm_->address(),
                                             "FARM_TOKEN_FILE=" + farm_->admin_token_file()};
  CommandResult json = RunFarmctl({"build", "cached-build-again", "--json"}, farm_env);
  ASSERT_EQ(json.exit_code, 0) << json.stderr_text;
  const nlohmann::json b = nlohmann::json::parse(json.stdout_text, nullptr, false);
  ASSERT_TRUE(b.is_object()) << json.stdout_text;
  EXPECT_EQ(b.value("kind", ""), "BUILD_KIND_COMPILE") << b.dump();
  EXPECT_EQ(b.value("state", ""), "BUILD_STATE_SUCCEEDED") << b.dump();
  EXPECT_EQ(b["nvcc"]["total"], "1") << b.dump();
  EXPECT_EQ(b["nvcc"]["cached"], "1") << b.dump();
  EXPECT_TRUE(b.contains("finished_at")) << b.dump();
  CommandResult text = RunFarmctl({"build", "cached-build-again"}, farm_env);
  EXPECT_THAT(text.stdout_text,
              HasSubstr("nvcc       1 of 1 calls split (1 from the compile cache); none ran "
                        "plain nvcc\n"))
      << text.stdout_text;
  CommandResult list = RunFarmctl({"builds"}, farm_env);
  EXPECT_THAT(list.stdout_text,
              ::testing::ContainsRegex("cached-build-again +compile +- +succeeded"))
      << list.stdout_text;

  auto hp = ParseHostPort(farm_->coordinator().http_address());
  ASSERT_TRUE(hp.ok()) << hp.status();
  httplib::Client http(hp->host, hp->port);
  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body,
              HasSubstr("farm_builds_finished_total{kind=\"compile\",state=\"succeeded\"} "));
}

TEST_F(FarmNvccTest, ARefusedReportNeverFailsTheCompile) {
  const std::string d = WorkDir("unknown-build");
  CommandResult r =
      Run({FarmBinary("farm-nvcc"), kNvcc, "-G", "-c", d + "/saxpy.cu", "-o", "s.o", "-arch=sm_90"},
          d, {"FARM_BUILD_ID=no-such-build-ever"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_THAT(r.stderr_text, HasSubstr("this call's outcome was not counted in build "
                                       "no-such-build-ever: no build 'no-such-build-ever'"));
  EXPECT_TRUE(fs::exists(d + "/s.o"));
  CommandResult b = RunFarmctl(
      {"build", "no-such-build-ever"},
      {"FARM_COORDINATOR=" + farm_->address(), "FARM_TOKEN_FILE=" + farm_->admin_token_file()});
  EXPECT_NE(b.exit_code, 0) << "a report must not create a build";
}

TEST_F(FarmNvccTest, DropInFormFindsNvccThroughCudaHome) {
  const std::string d = WorkDir("dropin");
  CommandResult r = Run({FarmBinary("farm-nvcc"), "-c", "saxpy.cu", "-o", "s.o", "-arch=sm_90"}, d,
                        {"CUDA_HOME=/usr/local/cuda"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_THAT(r.stderr_text, HasSubstr("farm-nvcc: sm_90: "));
  EXPECT_THAT(Keys(DevicePayloads(d + "/s.o")), ::testing::Contains(HasSubstr("sm_90")));
}

}  // namespace
}  // namespace farm::testing

namespace farm::testing {
namespace {

// ccache's and sccache's convention: the compiler named bare and found on PATH. It splits like
// the path form, with no fallback.
TEST_F(FarmNvccTest, LauncherFormWithABareCompilerNameSplits) {
  const std::string d = WorkDir("bare-name");
  CommandResult r = Run({FarmBinary("farm-nvcc"), "nvcc", "-c", "saxpy.cu", "-o", "s.o", "-gencode",
                         "arch=compute_90,code=sm_90"},
                        d, {"PATH=/usr/local/cuda/bin:/usr/bin:/bin", "CUDA_HOME="});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_THAT(r.stderr_text, Not(HasSubstr("running plain nvcc"))) << r.stderr_text;
  EXPECT_THAT(r.stderr_text, HasSubstr("farm-nvcc: sm_90: ")) << r.stderr_text;
  EXPECT_THAT(Keys(DevicePayloads(d + "/s.o")), ::testing::Contains(HasSubstr("sm_90")));
}

// The host compiler as -ccbin: a g++ that logs which local job slot its caller held
// (FARM_LOCAL_JOB_SLOT_HELD, "none" without), at which priority farm-cc was asked to take its
// slots (FARM_LOCAL_JOB_PRIORITY, "none" without) and what it was asked, then runs g++.
std::string SlotLoggingCompiler(const std::string& dir) {
  fs::create_directories(dir + "/ccbin");
  const std::string compiler = dir + "/ccbin/g++";
  std::ofstream(compiler) << "#!/bin/sh\necho \"${FARM_LOCAL_JOB_SLOT_HELD:-none} "
                             "${FARM_LOCAL_JOB_PRIORITY:-none} $*\" >> "
                          << dir << "/compiler.log\nexec /usr/bin/g++ \"$@\"\n";
  fs::permissions(compiler, fs::perms::owner_all);
  return compiler;
}

// The compiler log's calls for nvcc's plan steps (not nvcc's own probe of the compiler):
// {slot class, whether it preprocessed (-E) or compiled (-c)}.
std::vector<std::pair<std::string, std::string>> CompilerCalls(const std::string& dir,
                                                               bool with_priority = false) {
  std::ifstream in(dir + "/compiler.log");
  std::vector<std::pair<std::string, std::string>> calls;
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> words = absl::StrSplit(line, ' ');
    if (line.find("-D__CUDA_ARCH_LIST__=") == std::string::npos) continue;
    const bool preprocess = std::find(words.begin(), words.end(), "-E") != words.end();
    const bool compile = std::find(words.begin(), words.end(), "-c") != words.end();
    if (preprocess || compile) {
      calls.emplace_back(with_priority ? absl::StrCat(words[0], " ", words[1]) : words[0],
                         preprocess ? "-E" : "-c");
    }
  }
  return calls;
}

TEST_F(FarmNvccTest, LocalStepsAndPlainNvccRunUnderTheBuildHostsJobSlots) {
  const std::string d = WorkDir("job-slots");
  const std::string compiler = SlotLoggingCompiler(d);
  const std::string slots = d + "/slots";
  const std::vector<std::string> limits = {"FARM_LOCAL_JOBS_DIR=" + slots,
                                           "FARM_LOCAL_JOBS_HEAVY=1", "FARM_LOCAL_JOBS_LIGHT=2"};
  // Split: preprocessing under light slots, the host compile under the heavy one.
  CommandResult split = Run({FarmBinary("farm-nvcc"), kNvcc, "-ccbin", compiler, "-c", "saxpy.cu",
                             "-o", "split.o", "-arch=sm_90"},
                            d, limits);
  ASSERT_EQ(split.exit_code, 0) << split.stderr_text;
  EXPECT_THAT(split.stderr_text, Not(HasSubstr("running plain nvcc"))) << split.stderr_text;
  const auto calls = CompilerCalls(d);
  EXPECT_THAT(calls, ::testing::Contains(std::pair<std::string, std::string>("light", "-E")));
  EXPECT_THAT(calls, ::testing::Contains(std::pair<std::string, std::string>("heavy", "-c")));
  for (const auto& [slot, kind] : calls) {
    // Every step that ran the compiler held a slot of its class.
    EXPECT_EQ(slot, kind == "-E" ? "light" : "heavy") << kind;
  }

  // Priorities: the split call's fatbinary and host compile closed the unit's work; a unit not
  // known to be long never took a slot as one.
  EXPECT_THAT(CompilerCalls(d, true),
              ::testing::Contains(std::pair<std::string, std::string>("heavy closing", "-c")));
  EXPECT_TRUE(fs::exists(slots + "/light.closing"));
  EXPECT_FALSE(fs::exists(slots + "/light.long-unit"));
  EXPECT_FALSE(fs::exists(slots + "/heavy.long-unit"));
  // Plain nvcc waits while another process holds the only heavy slot, then runs under it.
  fs::remove(d + "/compiler.log");
  const std::string heavy = slots + "/heavy-0.lock";
  auto holder = Subprocess::Spawn(
      {"sh", "-c", absl::StrCat("exec 9>'", heavy, "' && flock 9 && exec sleep 600")});
  ASSERT_TRUE(holder.ok()) << holder.status();
  auto locked = [&] {
    auto r = RunCommand({"flock", "--nonblock", heavy, "true"}, absl::Seconds(30));
    return r.ok() && r->exit_code != 0;
  };
  for (int i = 0; i < 600 && !locked(); ++i) usleep(100'000);
  ASSERT_TRUE(locked());
  std::vector<std::string> env = limits;
  env.push_back("FARM_NVCC_DISABLE=1");
  SpawnOptions spawn;
  spawn.log_path = d + "/plain.log";
  spawn.extra_env = env;
  for (const std::string& e :
       {"FARM_COORDINATOR=" + farm_->address(), "FARM_TOKEN_FILE=" + farm_->admin_token_file(),
        std::string("FARM_NVCC_LOG=debug"), std::string("FARM_BUILD_ID=farm-nvcc-test")}) {
    spawn.extra_env.push_back(e);
  }
  auto plain = Subprocess::Spawn({"env", "-C", d, FarmBinary("farm-nvcc"), kNvcc, "-ccbin",
                                  compiler, "-c", "saxpy.cu", "-o", "plain.o", "-arch=sm_90"},
                                 spawn);
  ASSERT_TRUE(plain.ok()) << plain.status();
  // Never done while the slot is held (a correct farm-nvcc cannot pass this by luck).
  EXPECT_FALSE(plain->Wait(absl::Milliseconds(500)).has_value());
  EXPECT_FALSE(fs::exists(d + "/plain.o"));
  holder->Signal(SIGKILL);
  holder->Wait(absl::Seconds(60));
  auto exit_code = plain->Wait(absl::Minutes(5));
  ASSERT_TRUE(exit_code.has_value());
  EXPECT_EQ(*exit_code, 0) << ReadFile(d + "/plain.log");
  for (const auto& [slot, kind] : CompilerCalls(d)) {
    EXPECT_EQ(slot, "heavy") << "plain nvcc's " << kind << " ran outside its heavy slot";
  }
  EXPECT_FALSE(CompilerCalls(d).empty());
  EXPECT_FALSE(locked()) << "plain nvcc kept its slot after it ended";

  // Once the farm has seen the unit take longer than the threshold, its steps take their
  // slots ahead of other units' (the first call taught it the unit's time).
  fs::remove(d + "/compiler.log");
  std::vector<std::string> long_unit = limits;
  long_unit.push_back("FARM_NVCC_LONG_UNIT_SECONDS=0.000001");
  CommandResult again = Run({FarmBinary("farm-nvcc"), kNvcc, "-ccbin", compiler, "-c", "saxpy.cu",
                             "-o", "split.o", "-arch=sm_90", "-DAGAIN"},
                            d, long_unit);
  ASSERT_EQ(again.exit_code, 0) << again.stderr_text;
  EXPECT_THAT(again.stderr_text, Not(HasSubstr("running plain nvcc"))) << again.stderr_text;
  EXPECT_TRUE(fs::exists(slots + "/light.long-unit"));
  EXPECT_TRUE(fs::exists(slots + "/heavy.long-unit"));
  EXPECT_THAT(CompilerCalls(d, true),
              ::testing::Contains(std::pair<std::string, std::string>("heavy long-unit", "-c")));
  CommandResult bad_threshold =
      Run({FarmBinary("farm-nvcc"), kNvcc, "-c", "saxpy.cu", "-o", "bad.o"}, d,
          {"FARM_NVCC_LONG_UNIT_SECONDS=soon"});
  EXPECT_EQ(bad_threshold.exit_code, 2);
  EXPECT_THAT(bad_threshold.stderr_text, HasSubstr("FARM_NVCC_LONG_UNIT_SECONDS='soon'"));
  EXPECT_THAT(bad_threshold.stderr_text, HasSubstr("Fix:"));

  // A bad limit is refused before anything runs.
  CommandResult bad = Run({FarmBinary("farm-nvcc"), kNvcc, "-c", "saxpy.cu", "-o", "bad.o"}, d,
                          {"FARM_LOCAL_JOBS_HEAVY=lots"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.stderr_text, HasSubstr("FARM_LOCAL_JOBS_HEAVY='lots'"));
  EXPECT_THAT(bad.stderr_text, HasSubstr("Fix:"));
  EXPECT_FALSE(fs::exists(d + "/bad.o"));
}

TEST_F(FarmNvccTest, CompileCacheRestoresAWholeCompileUntilAnIncludedHeaderChanges) {
  const std::string d = WorkDir("compile-cache");
  std::ofstream(d + "/scale.h") << "#define SCALE 2.0f\n";
  std::ofstream(d + "/scaled.cu")
      << "#include \"scale.h\"\n"
         "__global__ void scaled(float* x) { x[threadIdx.x] *= SCALE; }\n";
  const std::vector<std::string> argv = {FarmBinary("farm-nvcc"),
                                         kNvcc,
                                         "-MD",
                                         "-MT",
                                         "scaled.o",
                                         "-MF",
                                         "scaled.d",
                                         "-c",
                                         "scaled.cu",
                                         "-o",
                                         "scaled.o",
                                         "-arch=sm_90"};
  CommandResult first = Run(argv, d);
  ASSERT_EQ(first.exit_code, 0) << first.stderr_text;
  EXPECT_THAT(first.stderr_text, HasSubstr("farm-nvcc: sm_90: ran on w"));
  const std::string object = ReadFile(d + "/scaled.o");
  const std::string deps = ReadFile(d + "/scaled.d");
  ASSERT_THAT(deps, HasSubstr("scale.h"));

  fs::remove(d + "/scaled.o");
  fs::remove(d + "/scaled.d");
  CommandResult restored = Run(argv, d);
  ASSERT_EQ(restored.exit_code, 0) << restored.stderr_text;
  EXPECT_THAT(restored.stderr_text, HasSubstr("farm-nvcc: scaled.cu: compile cache"));
  EXPECT_THAT(restored.stderr_text, Not(HasSubstr("farm-nvcc: sm_90")));
  EXPECT_EQ(ReadFile(d + "/scaled.o"), object);
  EXPECT_EQ(ReadFile(d + "/scaled.d"), deps);

  // The header is part of the compile: changing it is a miss, and the code changes.
  std::ofstream(d + "/scale.h") << "#define SCALE 3.0f\n";
  CommandResult changed = Run(argv, d);
  ASSERT_EQ(changed.exit_code, 0) << changed.stderr_text;
  EXPECT_THAT(changed.stderr_text, Not(HasSubstr("compile cache")));
  EXPECT_THAT(changed.stderr_text, HasSubstr("farm-nvcc: sm_90: ran on w"));
  EXPECT_NE(ReadFile(d + "/scaled.o"), object);
}

// Issue 15, item 1: whoever holds the farm token can put a compile cache entry, so an entry
// is data, not a list of files to write. One naming a file beside k.o must not touch it.
TEST_F(FarmNvccTest, CompileCacheEntryNamingOtherPathsIsRefusedAndTheCallCompiles) {
  const std::string d = WorkDir("compile-cache-hostile");
  std::ofstream(d + "/k.cu") << "__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }\n";
  const std::string victim = *dir_ / "victim-bashrc";
  std::ofstream(victim) << "export PS1='mine'\n";
  const std::vector<std::string> argv = {FarmBinary("farm-nvcc"),
                                         kNvcc,
                                         "-MD",
                                         "-MF",
                                         "k.d",
                                         "-c",
                                         "k.cu",
                                         "-o",
                                         "k.o",
                                         "-arch=sm_90"};
  CommandResult first = Run(argv, d);
  ASSERT_EQ(first.exit_code, 0) << first.stderr_text;
  const std::string key = LoggedCompileCacheKey(first.stderr_text);
  ASSERT_EQ(key.size(), 64u) << first.stderr_text;
  const auto payloads = DevicePayloads(d + "/k.o");
  ASSERT_FALSE(payloads.empty());

  const std::string token = farm_->AdminToken();
  auto cas = CasClient::Connect(farm_->address(), token);
  auto actions = ActionClient::Connect(farm_->address(), token);
  auto payload = cas->UploadBytes("echo pwned\n");
  ASSERT_TRUE(payload.ok()) << payload.status();
  auto honest = actions->GetCompileResult(key);
  ASSERT_TRUE(honest.ok()) << honest.status();

  struct Case {
    std::string label;
    std::vector<std::string> paths;  // the entry's outputs; the payload goes to the last one
  };
  const std::vector<Case> cases = {
      {"absolute path beside the object", {"k.o", "k.d", victim}},
      {"relative path out of the work dir", {"k.o", "k.d", "../victim-bashrc"}},
      {"the object twice", {"k.o", "k.d", "k.o"}},
      {"the victim instead of the dependency file", {"k.o", victim}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    farm::v1::CompileResult entry = *honest;
    entry.clear_outputs();
    for (const std::string& path : c.paths) {
      auto* out = entry.add_outputs();
      out->set_path(path);
      *out->mutable_digest() = *payload;
    }
    ASSERT_TRUE(actions->PutCompileResult(key, entry).ok());
    fs::remove(d + "/k.o");
    CommandResult r = Run(argv, d);
    ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
    EXPECT_THAT(r.stderr_text, HasSubstr("compile cache entry refused"));
    EXPECT_THAT(r.stderr_text, Not(HasSubstr("k.cu: compile cache")));
    // Compiled instead (its device code from the action cache), the victim untouched.
    EXPECT_THAT(r.stderr_text, HasSubstr("farm-nvcc: sm_90: "));
    EXPECT_EQ(ReadFile(victim), "export PS1='mine'\n");
    EXPECT_EQ(DevicePayloads(d + "/k.o"), payloads);
    EXPECT_THAT(ReadFile(d + "/k.d"), HasSubstr("k.cu"));
  }
  // The compile above recorded an honest entry again: the next call restores it.
  fs::remove(d + "/k.o");
  CommandResult restored = Run(argv, d);
  ASSERT_EQ(restored.exit_code, 0) << restored.stderr_text;
  EXPECT_THAT(restored.stderr_text, HasSubstr("farm-nvcc: k.cu: compile cache"));
  EXPECT_EQ(DevicePayloads(d + "/k.o"), payloads);
}

TEST_F(FarmNvccTest, CMakeProjectBuildsThroughTheLauncherAndRebuildsOneFile) {
  const std::string src = *dir_ / "cuda-kernels";
  fs::copy(std::string(FARM_SOURCE_DIR) + "/examples/cuda-kernels", src,
           fs::copy_options::recursive);
  const std::string tree = *dir_ / "cuda-kernels-build";
  CommandResult configure = Run({"cmake", "-S", src, "-B", tree, "-G", "Ninja",
                                 "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CUDA_ARCHITECTURES=75;90",
                                 "-DCMAKE_CUDA_COMPILER_LAUNCHER=" + FarmBinary("farm-nvcc")},
                                src);
  ASSERT_EQ(configure.exit_code, 0) << configure.stdout_text << configure.stderr_text;
  CommandResult first = Run({"ninja", "-C", tree, "-j2"}, src);
  ASSERT_EQ(first.exit_code, 0) << first.stdout_text << first.stderr_text;
  const std::string log = first.stdout_text + first.stderr_text;
  EXPECT_EQ(CountOccurrences(log, "farm-nvcc: sm_75: "), 6) << log;
  EXPECT_EQ(CountOccurrences(log, "farm-nvcc: sm_90: "), 6) << log;
  EXPECT_EQ(CountOccurrences(log, "running plain nvcc"), 0) << log;
  auto payloads = DevicePayloads(tree + "/libcuda_kernels.so");
  EXPECT_THAT(Keys(payloads), ::testing::Contains(HasSubstr("cubin sm_75")));
  EXPECT_THAT(Keys(payloads), ::testing::Contains(HasSubstr("cubin sm_90")));

  // Edit a comment in one file: only it is compiled again; its device code, unchanged after
  // preprocessing, comes from the action cache.
  const fs::path saxpy = src + "/src/saxpy.cu";
  std::ofstream(saxpy, std::ios::app) << "// edited\n";
  fs::last_write_time(saxpy, fs::file_time_type::clock::now() + std::chrono::seconds(2));
  CommandResult second = Run({"ninja", "-C", tree, "-j2"}, src);
  ASSERT_EQ(second.exit_code, 0) << second.stdout_text << second.stderr_text;
  const std::string log2 = second.stdout_text + second.stderr_text;
  EXPECT_EQ(CountOccurrences(log2, "farm-nvcc: sm_"), 2) << log2;
  EXPECT_EQ(CountOccurrences(log2, ": action cache"), 2) << log2;
  EXPECT_THAT(log2, HasSubstr("saxpy.cu"));

  // A clean rebuild of unchanged sources is restored from the compile cache, every file.
  CommandResult clean = Run({"ninja", "-C", tree, "clean"}, src);
  ASSERT_EQ(clean.exit_code, 0) << clean.stdout_text << clean.stderr_text;
  CommandResult third = Run({"ninja", "-C", tree, "-j2"}, src);
  ASSERT_EQ(third.exit_code, 0) << third.stdout_text << third.stderr_text;
  const std::string log3 = third.stdout_text + third.stderr_text;
  EXPECT_EQ(CountOccurrences(log3, ": compile cache"), 6) << log3;
  EXPECT_EQ(CountOccurrences(log3, "farm-nvcc: sm_"), 0) << log3;
  EXPECT_EQ(DevicePayloads(tree + "/libcuda_kernels.so"), payloads);
}

// The bytes of an nvcc object, with the one name in it that no two nvcc runs share renamed:
// the STT_FILE symbol of the host compile's input, nvcc's temporary
// ("tmpxft_<pid>_00000000-6_k.cudafe1.cpp"; farm-nvcc's "farm-6_k.cudafe1.cpp"). Plain
// nvcc's own objects differ there from one run to the next; everything else is compared
// byte for byte (objcopy copies every section and every other symbol as it is).
std::string ComparableObject(const std::string& object) {
  auto symbols = RunCommand({"readelf", "-sW", object});
  EXPECT_TRUE(symbols.ok() && symbols->exit_code == 0) << object;
  if (!symbols.ok()) return "";
  std::vector<std::string> names;
  for (absl::string_view line : absl::StrSplit(symbols->stdout_text, '\n')) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() == 8 && fields[3] == "FILE") names.emplace_back(fields[7]);
  }
  EXPECT_EQ(names.size(), 1u) << symbols->stdout_text;
  if (names.size() != 1) return "";
  EXPECT_THAT(names[0], HasSubstr(".cudafe1.cpp"));
  const std::string out = object + ".comparable";
  auto copy =
      RunCommand({"objcopy", "--redefine-sym", names[0] + "=host-source.cudafe1.cpp", object, out});
  EXPECT_TRUE(copy.ok() && copy->exit_code == 0) << object;
  return ReadFile(out);
}

// Compiles with plain nvcc in `dir` with the `object` and `deps` names farm-nvcc's call used
// (its outputs moved aside first), and expects the same object and dependency file.
void ExpectPlainNvccWritesTheSame(FarmNvccTest& test, const std::string& dir,
                                  std::vector<std::string> farm_argv, const std::string& object,
                                  const std::string& deps) {
  SCOPED_TRACE(dir + "/" + object);
  fs::rename(dir + "/" + object, dir + "/farm-" + object);
  if (!deps.empty()) fs::rename(dir + "/" + deps, dir + "/farm-" + deps);
  farm_argv.erase(farm_argv.begin());  // farm-nvcc
  CommandResult p = test.RunIn(farm_argv, dir);
  ASSERT_EQ(p.exit_code, 0) << p.stderr_text;
  const std::string want = ComparableObject(dir + "/" + object);
  ASSERT_GT(want.size(), 1000u);
  EXPECT_TRUE(ComparableObject(dir + "/farm-" + object) == want) << "objects differ";
  if (!deps.empty()) {
    EXPECT_EQ(ReadFile(dir + "/farm-" + deps), ReadFile(dir + "/" + deps));
  }
}

// CMake's command lines: absolute source and include paths, the object and dependency file
// relative to the build tree. nvcc's object embeds neither the build tree nor its own name,
// so another tree and another -o name are answered by the compile cache, with the bytes
// plain nvcc writes there.
TEST_F(FarmNvccTest, CompileCacheAnswersAnotherBuildTreeAndAnotherObjectName) {
  const std::string src = WorkDir("trees-src");
  const std::string tree1 = *dir_ / "trees-1";
  const std::string tree2 = *dir_ / "trees-2";
  fs::create_directories(tree1);
  fs::create_directories(tree2);
  auto argv = [&](const std::string& object) {
    return std::vector<std::string>{FarmBinary("farm-nvcc"),
                                    kNvcc,
                                    "-I" + src,
                                    "-O2",
                                    "-std=c++17",
                                    "-MD",
                                    "-MT",
                                    "obj/reduce_cub.o",
                                    "-MF",
                                    object + ".d",
                                    "-c",
                                    src + "/reduce_cub.cu",
                                    "-o",
                                    object,
                                    "-gencode",
                                    "arch=compute_75,code=sm_75",
                                    "-gencode",
                                    "arch=compute_90,code=sm_90"};
  };
  CommandResult first = Run(argv("a.o"), tree1);
  ASSERT_EQ(first.exit_code, 0) << first.stderr_text;
  EXPECT_THAT(first.stderr_text, HasSubstr("farm-nvcc: sm_90: ran on w"));
  EXPECT_THAT(first.stderr_text, HasSubstr("working directory: not in the key"));

  CommandResult other_tree = Run(argv("a.o"), tree2);
  ASSERT_EQ(other_tree.exit_code, 0) << other_tree.stderr_text;
  EXPECT_THAT(other_tree.stderr_text, HasSubstr("reduce_cub.cu: compile cache"));
  EXPECT_THAT(other_tree.stderr_text, Not(HasSubstr("farm-nvcc: sm_")));

  CommandResult other_name = Run(argv("b.o"), tree1);
  ASSERT_EQ(other_name.exit_code, 0) << other_name.stderr_text;
  EXPECT_THAT(other_name.stderr_text, HasSubstr("reduce_cub.cu: compile cache"));
  EXPECT_THAT(other_name.stderr_text, Not(HasSubstr("farm-nvcc: sm_")));

  ExpectPlainNvccWritesTheSame(*this, tree2, argv("a.o"), "a.o", "a.o.d");
  ExpectPlainNvccWritesTheSame(*this, tree1, argv("b.o"), "b.o", "b.o.d");
}

// -lineinfo names the sources (absolute) and stamps them into the cubins: another build tree
// of the same sources is still the same compile, but a copy of the sources elsewhere is
// not (and nvcc's module id hashes the source's real path into symbol names even without
// line info): no compile cache hit there, and the bytes are plain nvcc's.
TEST_F(FarmNvccTest, LineInfoReusesAnotherTreeOfTheSameSourcesButNotACopyOfThem) {
  const std::string src = WorkDir("lineinfo-src");
  const std::string copy = WorkDir("lineinfo-copy");
  const std::string tree1 = *dir_ / "lineinfo-1";
  const std::string tree2 = *dir_ / "lineinfo-2";
  fs::create_directories(tree1);
  fs::create_directories(tree2);
  auto argv = [&](const std::string& source_dir) {
    return std::vector<std::string>{FarmBinary("farm-nvcc"),
                                    kNvcc,
                                    "-lineinfo",
                                    "-c",
                                    source_dir + "/saxpy.cu",
                                    "-o",
                                    "s.o",
                                    "-gencode",
                                    "arch=compute_75,code=sm_75",
                                    "-gencode",
                                    "arch=compute_90,code=[compute_90,sm_90]"};
  };
  CommandResult first = Run(argv(src), tree1);
  ASSERT_EQ(first.exit_code, 0) << first.stderr_text;
  EXPECT_THAT(first.stderr_text, HasSubstr("farm-nvcc: sm_90: ran on w"));

  CommandResult other_tree = Run(argv(src), tree2);
  ASSERT_EQ(other_tree.exit_code, 0) << other_tree.stderr_text;
  EXPECT_THAT(other_tree.stderr_text, HasSubstr("saxpy.cu: compile cache"));
  ExpectPlainNvccWritesTheSame(*this, tree2, argv(src), "s.o", "");

  // Touched, not changed: the cubins' line tables hold the new mtime, so both caches miss.
  fs::last_write_time(src + "/saxpy.cu",
                      fs::last_write_time(src + "/saxpy.cu") + std::chrono::seconds(10));
  CommandResult touched = Run(argv(src), tree2);
  ASSERT_EQ(touched.exit_code, 0) << touched.stderr_text;
  EXPECT_THAT(touched.stderr_text, Not(HasSubstr("compile cache")));
  EXPECT_THAT(touched.stderr_text, HasSubstr("farm-nvcc: sm_90: ran on w"));
  ExpectPlainNvccWritesTheSame(*this, tree2, argv(src), "s.o", "");

  CommandResult copied = Run(argv(copy), tree1);
  ASSERT_EQ(copied.exit_code, 0) << copied.stderr_text;
  EXPECT_THAT(copied.stderr_text, Not(HasSubstr("compile cache")));
  EXPECT_THAT(copied.stderr_text, HasSubstr("farm-nvcc: sm_90: ran on w"));
  ExpectPlainNvccWritesTheSame(*this, tree1, argv(copy), "s.o", "");
  EXPECT_NE(ComparableObject(tree1 + "/s.o"), ComparableObject(tree2 + "/s.o"));
}

// -lineinfo with a relative source, and a header found through a relative -I: cicc names each
// file as the preprocessor spelled it, made absolute against its working directory, so the
// worker is sent the device source with its relative files named from the call's directory.
// The line tables, PTX and cubins are plain nvcc's. A path that climbs out of the directory
// ("../src/k.cu") is one the worker's stand-ins cannot show: plain nvcc runs, saying why.
TEST_F(FarmNvccTest, LineInfoWithARelativeSourceAndIncludeDirMatchesPlainNvcc) {
  const std::string d = WorkDir("lineinfo-relative");
  fs::create_directories(d + "/src");
  fs::create_directories(d + "/inc");
  fs::create_directories(d + "/build");
  std::ofstream(d + "/inc/twice.h") << "__device__ inline float Twice(float x) { return 2 * x; }\n";
  std::ofstream(d + "/src/relative.cu") << "#include \"twice.h\"\n"
                                           "__global__ void Scale(float* x, int n) {\n"
                                           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                           "  if (i < n) x[i] = Twice(x[i]);\n"
                                           "}\n";
  auto argv = [](const std::string& source, const std::string& include) {
    return std::vector<std::string>{FarmBinary("farm-nvcc"),
                                    kNvcc,
                                    "-lineinfo",
                                    "-I" + include,
                                    "-c",
                                    source,
                                    "-o",
                                    "relative.o",
                                    "-gencode",
                                    "arch=compute_75,code=sm_75",
                                    "-gencode",
                                    "arch=compute_90,code=[compute_90,sm_90]"};
  };
  CommandResult farm = Run(argv("src/relative.cu", "inc"), d);
  ASSERT_EQ(farm.exit_code, 0) << farm.stderr_text;
  EXPECT_THAT(farm.stderr_text, Not(HasSubstr("running plain nvcc"))) << farm.stderr_text;
  EXPECT_THAT(farm.stderr_text, HasSubstr("farm-nvcc: sm_90: ran on w")) << farm.stderr_text;
  ExpectPlainNvccWritesTheSame(*this, d, argv("src/relative.cu", "inc"), "relative.o", "");
  // CMake's absolute source, with a header found through a relative -I all the same.
  CommandResult absolute = Run(argv(d + "/src/relative.cu", "inc"), d);
  ASSERT_EQ(absolute.exit_code, 0) << absolute.stderr_text;
  EXPECT_THAT(absolute.stderr_text, Not(HasSubstr("running plain nvcc"))) << absolute.stderr_text;
  ExpectPlainNvccWritesTheSame(*this, d, argv(d + "/src/relative.cu", "inc"), "relative.o", "");

  CommandResult up = Run(argv("../src/relative.cu", "../inc"), d + "/build");
  ASSERT_EQ(up.exit_code, 0) << up.stderr_text;
  EXPECT_THAT(up.stderr_text, HasSubstr("running plain nvcc: not decomposable: -lineinfo with "
                                        "the path '../src/relative.cu'"))
      << up.stderr_text;
  EXPECT_TRUE(fs::exists(d + "/build/relative.o"));
}

// A torch extension's unit reads more files than an action carries stamps for (DeepSpeed
// 0.18.9's multi_tensor_adam.cu: 5332, through torch/extension.h); ptxas stamps only the few
// its PTX names. Sent without stamps, the cubins' line tables held zeros where plain nvcc's
// hold mtime and size. farm-nvcc sends the stamps of the files that declare device functions,
// and where the PTX names another (a constexpr host function that device code calls, with
// --expt-relaxed-constexpr) compiles the job again with the stamps the PTX asks for.
TEST_F(FarmNvccTest, LineInfoOfAUnitReadingMoreFilesThanAnActionCarriesStamps) {
  const std::string d = WorkDir("many-headers");
  fs::create_directories(d + "/inc");
  {
    std::ofstream all(d + "/inc/all.h");
    for (int i = 0; i <= 4096; ++i) {
      std::ofstream(absl::StrCat(d, "/inc/h", i, ".h")) << "// header " << i << "\n";
      all << "#include \"h" << i << ".h\"\n";
    }
  }
  std::ofstream(d + "/scale.cuh") << "__device__ inline float Scale(float x) { return 2 * x; }\n";
  std::ofstream(d + "/half.h") << "constexpr float Half(float x) { return x / 2; }\n";
  std::ofstream(d + "/device.cu") << "#include \"inc/all.h\"\n#include \"scale.cuh\"\n"
                                     "__global__ void K(float* x) { x[0] = Scale(x[1]); }\n";
  std::ofstream(d + "/constexpr.cu")
      << "#include \"inc/all.h\"\n#include \"scale.cuh\"\n#include \"half.h\"\n"
         "__global__ void K(float* x) { x[0] = Scale(Half(x[1])); }\n";
  auto argv = [&](const std::string& source) {
    return std::vector<std::string>{FarmBinary("farm-nvcc"),
                                    kNvcc,
                                    "--expt-relaxed-constexpr",
                                    "-lineinfo",
                                    "-c",
                                    d + "/" + source,
                                    "-o",
                                    "k.o",
                                    "-gencode",
                                    "arch=compute_90,code=sm_90"};
  };
  for (const std::string source : {"device.cu", "constexpr.cu"}) {
    SCOPED_TRACE(source);
    CommandResult r = Run(argv(source), d);
    ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
    EXPECT_THAT(r.stderr_text, HasSubstr("farm-nvcc: sm_90: ran on w"));
    EXPECT_THAT(r.stderr_text, Not(HasSubstr("running plain nvcc")));
    const bool again = source == "constexpr.cu";
    EXPECT_EQ(absl::StrContains(r.stderr_text,
                                "sm_90: its line info names files it was sent no "
                                "stamps for: compiled again with the stamps of those 3"),
              again)
        << r.stderr_text;
    ExpectPlainNvccWritesTheSame(*this, d, argv(source), "k.o", "");
    fs::remove(d + "/k.o");
    fs::remove(d + "/farm-k.o");
  }
}

// A copy of the sources in another directory, everything relative: the same command line,
// but nvcc's module id (the source's real path, hashed) is in the symbol names of the
// object and of its device code. Neither cache may answer; the bytes are plain nvcc's.
TEST_F(FarmNvccTest, ACopyOfTheSourcesElsewhereIsCompiledAgain) {
  const std::vector<std::string> args = {
      FarmBinary("farm-nvcc"),     kNvcc, "-c", "reduce_cub.cu", "-o", "r.o", "-gencode",
      "arch=compute_90,code=sm_90"};
  const std::string a = WorkDir("copy-a");
  const std::string b = WorkDir("copy-b");
  CommandResult first = Run(args, a);
  ASSERT_EQ(first.exit_code, 0) << first.stderr_text;
  CommandResult second = Run(args, b);
  ASSERT_EQ(second.exit_code, 0) << second.stderr_text;
  EXPECT_THAT(second.stderr_text, Not(HasSubstr("compile cache")));
  EXPECT_THAT(second.stderr_text, HasSubstr("farm-nvcc: sm_90: ran on w"));
  ExpectPlainNvccWritesTheSame(*this, b, args, "r.o", "");
  EXPECT_NE(ComparableObject(a + "/r.o"), ComparableObject(b + "/r.o"));
}

// Host debug info records the working directory (DW_AT_comp_dir): with -g the directory is
// in the key, so another build tree compiles again and its object names its own directory.
// (nvcc's -g objects also name nvcc's temporary by its full path, so plain nvcc's are
// compared by their device code here.)
TEST_F(FarmNvccTest, WithDebugInfoAnotherBuildTreeIsCompiledAgain) {
  const std::string src = WorkDir("debug-src");
  const std::string tree1 = *dir_ / "debug-1";
  const std::string tree2 = *dir_ / "debug-2";
  fs::create_directories(tree1);
  fs::create_directories(tree2);
  const std::vector<std::string> args = {FarmBinary("farm-nvcc"), kNvcc, "-g",  "-c",
                                         src + "/saxpy.cu",       "-o",  "s.o", "-arch=sm_90"};
  CommandResult first = Run(args, tree1);
  ASSERT_EQ(first.exit_code, 0) << first.stderr_text;
  EXPECT_THAT(first.stderr_text, HasSubstr("working directory: -g may record"));
  CommandResult second = Run(args, tree2);
  ASSERT_EQ(second.exit_code, 0) << second.stderr_text;
  EXPECT_THAT(second.stderr_text, Not(HasSubstr("compile cache")));
  EXPECT_THAT(second.stderr_text, HasSubstr("farm-nvcc: sm_90: "));
  auto dwarf = RunCommand({"readelf", "--debug-dump=info", tree2 + "/s.o"});
  ASSERT_TRUE(dwarf.ok());
  EXPECT_THAT(dwarf->stdout_text, HasSubstr(tree2));
  EXPECT_THAT(dwarf->stdout_text, Not(HasSubstr(tree1)));
  std::vector<std::string> plain(args.begin() + 1, args.end());
  plain[plain.size() - 2] = "plain.o";
  CommandResult p = Run(plain, tree2);
  ASSERT_EQ(p.exit_code, 0) << p.stderr_text;
  ExpectSamePayloads(tree2 + "/plain.o", tree2 + "/s.o");
}

// Issue 27, item 3: compiling and linking in one call, as Makefiles and READMEs write it. Each
// .cu is compiled as a -c call through the split path (into an object of farm-nvcc's), then
// nvcc links those objects here with the call's own options: the library holds plain nvcc's
// device code. The same call again is answered by the compile cache and links again.
TEST_F(FarmNvccTest, OneShotSharedLibrarySplitsTheCompileAndLinksHere) {
  const std::string d = WorkDir("one-shot-shared");
  const std::vector<std::string> call = {"-shared",  "-Xcompiler",
                                         "-fPIC",    "saxpy.cu",
                                         "-gencode", "arch=compute_75,code=sm_75",
                                         "-gencode", "arch=compute_90,code=[compute_90,sm_90]",
                                         "-o"};
  auto argv = [&](bool farm, const std::string& library) {
    std::vector<std::string> words;
    if (farm) words.push_back(FarmBinary("farm-nvcc"));
    words.push_back(kNvcc);
    words.insert(words.end(), call.begin(), call.end());
    words.push_back(library);
    return words;
  };
  CommandResult p = Run(argv(false, "libplain.so"), d);
  ASSERT_EQ(p.exit_code, 0) << p.stderr_text;
  CommandResult f = Run(argv(true, "libfarm.so"), d);
  ASSERT_EQ(f.exit_code, 0) << f.stderr_text;
  EXPECT_THAT(f.stderr_text, Not(HasSubstr("running plain nvcc"))) << f.stderr_text;
  EXPECT_THAT(f.stderr_text, HasSubstr("farm-nvcc: sm_75: ")) << f.stderr_text;
  EXPECT_THAT(f.stderr_text, HasSubstr("farm-nvcc: sm_90: ")) << f.stderr_text;
  EXPECT_THAT(f.stderr_text, HasSubstr("1 .cu compiled on the farm; nvcc links here"));
  ExpectSamePayloads(d + "/libplain.so", d + "/libfarm.so");

  CommandResult again = Run(argv(true, "libagain.so"), d);
  ASSERT_EQ(again.exit_code, 0) << again.stderr_text;
  EXPECT_THAT(again.stderr_text, HasSubstr("farm-nvcc: saxpy.cu: compile cache"));
  EXPECT_THAT(again.stderr_text, Not(HasSubstr("running plain nvcc")));
  ExpectSamePayloads(d + "/libplain.so", d + "/libagain.so");
}

// Several .cu files with relocatable device code and a host source, linked into a program in
// one call: each .cu compiles on the farm (as -rdc=true -c), main.cpp and the device link are
// nvcc's own in the link. The program holds plain nvcc's device code, and it runs on this
// GPU-less host as long as it launches nothing.
TEST_F(FarmNvccTest, OneShotProgramWithRelocatableDeviceCodeAndAHostSourceLinks) {
  const std::string d = WorkDir("one-shot-rdc-program");
  std::ofstream(d + "/main.cpp") << "#include <cstdio>\n"
                                    "void LaunchSquareAll(float*, int);\n"
                                    "int main(int argc, char**) {\n"
                                    "  if (argc > 1) LaunchSquareAll(nullptr, 0);\n"
                                    "  std::puts(\"linked\");\n"
                                    "}\n";
  const std::vector<std::string> call = {"-rdc=true", "rdc_caller.cu", "rdc_callee.cu",
                                         "main.cpp",  "-arch=sm_90",   "-o"};
  std::vector<std::string> plain = {kNvcc};
  plain.insert(plain.end(), call.begin(), call.end());
  plain.push_back("plain_prog");
  CommandResult p = Run(plain, d);
  ASSERT_EQ(p.exit_code, 0) << p.stderr_text;
  std::vector<std::string> farm = {FarmBinary("farm-nvcc"), kNvcc};
  farm.insert(farm.end(), call.begin(), call.end());
  farm.push_back("farm_prog");
  CommandResult f = Run(farm, d);
  ASSERT_EQ(f.exit_code, 0) << f.stderr_text;
  EXPECT_THAT(f.stderr_text, Not(HasSubstr("running plain nvcc"))) << f.stderr_text;
  EXPECT_EQ(CountOccurrences(f.stderr_text, "farm-nvcc: sm_90: "), 2) << f.stderr_text;
  ExpectSamePayloads(d + "/plain_prog", d + "/farm_prog");
  CommandResult run = Run({d + "/farm_prog"}, d);
  EXPECT_EQ(run.exit_code, 0) << run.stderr_text;
  EXPECT_EQ(run.stdout_text, "linked\n");
}

// Issue 27, item 9: a unit that defines no function or variable with external linkage gets
// from cudafe++ a module id ending in cudafe++'s process id, so plain nvcc's device code
// differs from run to run. farm-nvcc makes that id of the unit's inputs: two farm builds in
// fresh build ids write the same object, the second's device code from the action cache.
// (-MD keys the second call apart in the compile cache, not in the action cache: the device
// compile is the same.) Plain nvcc's output is per-process, so it is compared by structure.
TEST_F(FarmNvccTest, PerProcessModuleIdIsMadeOfTheUnitsInputs) {
  const std::string d = WorkDir("module-id");
  const std::vector<std::string> call = {"-c", "internal_linkage_only.cu", "-gencode",
                                         "arch=compute_90,code=sm_90", "-o"};
  std::vector<std::map<std::string, std::string>> plain;
  for (const std::string object : {"plain1.o", "plain2.o"}) {
    std::vector<std::string> argv = {kNvcc};
    argv.insert(argv.end(), call.begin(), call.end());
    argv.push_back(object);
    CommandResult p = Run(argv, d);
    ASSERT_EQ(p.exit_code, 0) << p.stderr_text;
    plain.push_back(DevicePayloads(d + "/" + object));
  }
  ASSERT_EQ(Keys(plain[0]), Keys(plain[1]));
  EXPECT_NE(plain[0], plain[1]) << "plain nvcc wrote the same device code twice: the file "
                                   "no longer has a per-process module id";

  std::vector<std::string> first = {FarmBinary("farm-nvcc"), kNvcc};
  first.insert(first.end(), call.begin(), call.end());
  first.push_back("farm1.o");
  CommandResult f1 = Run(first, d, {"FARM_BUILD_ID=module-id-1"});
  ASSERT_EQ(f1.exit_code, 0) << f1.stderr_text;
  EXPECT_THAT(f1.stderr_text, Not(HasSubstr("running plain nvcc"))) << f1.stderr_text;
  EXPECT_THAT(f1.stderr_text, HasSubstr("module id carried its process id; the unit's is "
                                        "_"));
  std::vector<std::string> second = first;
  second.back() = "farm2.o";
  second.push_back("-MD");
  CommandResult f2 = Run(second, d, {"FARM_BUILD_ID=module-id-2"});
  ASSERT_EQ(f2.exit_code, 0) << f2.stderr_text;
  EXPECT_THAT(f2.stderr_text, Not(HasSubstr("internal_linkage_only.cu: compile cache")));
  EXPECT_THAT(f2.stderr_text, HasSubstr("farm-nvcc: sm_90: action cache")) << f2.stderr_text;
  const std::string want = ComparableObject(d + "/farm1.o");
  ASSERT_GT(want.size(), 1000u);
  EXPECT_TRUE(ComparableObject(d + "/farm2.o") == want) << "farm-nvcc's objects differ";
  EXPECT_EQ(Keys(DevicePayloads(d + "/farm1.o")), Keys(plain[0]));
}

}  // namespace
}  // namespace farm::testing
