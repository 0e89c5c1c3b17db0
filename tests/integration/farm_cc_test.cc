// farm-cc against a real local farm (coordinator + 2 sandboxed workers) and the local compilers:
// each compile it sends must write the object, dependency file and diagnostics a local compile
// writes, byte for byte, for the flag sets real builds use (CMake, setuptools, cpp_extension);
// what it cannot reproduce stays local and says why; strict mode refuses that.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/net/address.h"
#include "libfarm/process/subprocess.h"
#include "tests/support/suite_fixture.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::string DataDir() { return std::string(FARM_SOURCE_DIR) + "/tests/data/cc"; }

class FarmCcTest : public SuiteFixture<FarmCcTest> {
 protected:
  static void SetUpSuite() {
    for (const char* tool :
         {"/usr/bin/g++", "/usr/bin/gcc", "/usr/bin/clang++", "/usr/bin/clang"}) {
      ASSERT_TRUE(fs::exists(tool)) << tool << " is missing: bash scripts/install-test-deps.sh";
    }
    dir_ = std::make_unique<TempDir>("farm-cc-test");
    auto farm = TestFarm::Start(dir_->path());
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }
  static void TearDownSuite() {
    farm_.reset();
    dir_.reset();
  }

  // A fresh tree: the test sources under src/, an empty build/ (CMake's shape).
  std::string Tree(const std::string& label) {
    const fs::path root = dir_->path() / label;
    fs::create_directories(root / "build");
    fs::copy(DataDir(), root / "src", fs::copy_options::recursive);
    return root.string();
  }

  // Runs `argv` in `cwd`; farm-cc talks to the test farm under `build_id`.
  static CommandResult Run(const std::vector<std::string>& argv, const std::string& cwd,
                           std::vector<std::string> env = {}) {
    std::vector<std::string> full = {"env", "-C", cwd};
    full.insert(full.end(), argv.begin(), argv.end());
    for (const std::string& e : farm_->ClientEnvironment()) env.push_back(e);
    auto r = RunCommand(full, absl::Minutes(5), env);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }

  static std::vector<std::string> With(std::vector<std::string> head,
                                       const std::vector<std::string>& tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  }

  // farm-cc in strict mode (so a compile that stays local fails), then the local compiler with
  // the same words in the same directory: the outputs and the diagnostics must be the same.
  void ExpectSameAsLocal(const std::string& compiler, const std::vector<std::string>& args,
                         const std::string& cwd, const std::vector<std::string>& outputs) {
    SCOPED_TRACE(absl::StrCat(compiler, " ", absl::StrJoin(args, " ")));
    const CommandResult farm = Run(With({FarmBinary("farm-cc"), compiler}, args), cwd,
                                   {"FARM_CC_STRICT=1", "FARM_BUILD_ID=" + build_id_});
    ASSERT_EQ(farm.exit_code, 0) << Output(farm);
    std::map<std::string, std::string> from_farm;
    for (const std::string& out : outputs) {
      const std::string path = (fs::path(cwd) / out).string();
      from_farm[out] = ReadFile(path);
      ASSERT_FALSE(from_farm[out].empty()) << out << " was not written";
      fs::remove(path);
    }
    const CommandResult local = Run(With({compiler}, args), cwd);
    ASSERT_EQ(local.exit_code, 0) << Output(local);
    for (const std::string& out : outputs) {
      EXPECT_TRUE(from_farm[out] == ReadFile((fs::path(cwd) / out).string()))
          << out << " differs from the local compile's";
    }
    EXPECT_EQ(farm.stderr_text, local.stderr_text);
    EXPECT_EQ(farm.stdout_text, local.stdout_text);
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<TestFarm> farm_;
  std::string build_id_ = "farm-cc-test";
};

// The flag sets real builds pass: CMake's Release and RelWithDebInfo lines (absolute source,
// -MD -MT -MF into CMakeFiles/), preprocessor flags of every kind, -Werror with GCC's
// fall-through comment, and the same through clang++ (but for the comment, which clang ignores).
TEST_F(FarmCcTest, ObjectsDependencyFilesAndDiagnosticsEqualALocalCompile) {
  const std::string root = Tree("flags");
  const std::string build = root + "/build";
  fs::create_directories(build + "/CMakeFiles/shapes.dir");
  const std::string src = root + "/src/shapes.cc";
  const std::vector<std::string> cmake_deps = {"-MD", "-MT", "CMakeFiles/shapes.dir/shapes.cc.o",
                                               "-MF", "CMakeFiles/shapes.dir/shapes.cc.o.d"};
  const std::vector<std::string> outputs = {"CMakeFiles/shapes.dir/shapes.cc.o",
                                            "CMakeFiles/shapes.dir/shapes.cc.o.d"};
  const std::vector<std::vector<std::string>> flag_sets = {
      // CMake RelWithDebInfo, -fPIC (a shared library's objects)
      {"-DSHAPES_SCALE=2", "-O2", "-g", "-DNDEBUG", "-fPIC", "-std=gnu++17"},
      // CMake Release
      {"-DSHAPES_SCALE=3", "-O3", "-DNDEBUG", "-std=gnu++17"},
      // Preprocessor flags of every form, warnings as errors, the fall-through comment
      {"-DSHAPES_SCALE=4", "-USHAPES_UNUSED", "-I", root + "/src", "-isystem", root + "/src/sys",
       "-include", root + "/src/forced.h", "-std=c++17", "-Wall", "-Wextra",
       "-Wimplicit-fallthrough", "-Werror", "-O2"},
      // Debug info with the build tree mapped away
      {"-DSHAPES_SCALE=5", "-O2", "-g", "-ffile-prefix-map=" + root + "=/src", "-fPIC"},
  };
  for (const auto& flags : flag_sets) {
    std::vector<std::string> args = flags;
    args.insert(args.end(), cmake_deps.begin(), cmake_deps.end());
    for (const char* w : {"-o", "CMakeFiles/shapes.dir/shapes.cc.o", "-c"}) args.push_back(w);
    args.push_back(src);
    ExpectSameAsLocal("g++", args, build, outputs);
    // clang takes no comment for a fall-through: that set is GCC's.
    if (std::find(args.begin(), args.end(), "-Wimplicit-fallthrough") == args.end()) {
      ExpectSameAsLocal("clang++", args, build, outputs);
    }
  }
}

// GCC reads stdc-predef.h with no #include naming it: a source without includes compiles on
// the farm too (it failed there with "no include path in which to search for stdc-predef.h").
TEST_F(FarmCcTest, ASourceWithoutIncludesCompilesOnTheFarm) {
  const std::string root = Tree("no-includes");
  std::ofstream(root + "/src/bare.c") << "int answer(void) { return 42; }\n";
  ExpectSameAsLocal("gcc", {"-O2", "-c", root + "/src/bare.c", "-o", "bare.o"}, root + "/build",
                    {"bare.o"});
  ExpectSameAsLocal("g++", {"-O2", "-x", "c++", "-c", root + "/src/bare.c", "-o", "bare.o"},
                    root + "/build", {"bare.o"});
}

// setuptools' line for a C extension: relative source, -Wall, a warning the user must see in
// the same words.
TEST_F(FarmCcTest, ASetuptoolsCompileWarnsAsLocally) {
  const std::string root = Tree("setuptools");
  fs::create_directories(root + "/build/temp");
  const std::vector<std::string> args = {"-pthread",
                                         "-Wsign-compare",
                                         "-DNDEBUG",
                                         "-g",
                                         "-fwrapv",
                                         "-O2",
                                         "-Wall",
                                         "-fPIC",
                                         "-include",
                                         "src/forced.h",
                                         "-Isrc",
                                         "-c",
                                         "src/warns.c",
                                         "-o",
                                         "build/temp/warns.o"};
  ExpectSameAsLocal("gcc", args, root, {"build/temp/warns.o"});
  const CommandResult again = Run(With({FarmBinary("farm-cc"), "gcc"}, args), root);
  EXPECT_THAT(again.stderr_text, HasSubstr("unused variable"));
}

// A compile that fails on the worker fails here with the local compiler's own words and exit
// code: the user sees what they would see without the farm.
TEST_F(FarmCcTest, ACompileErrorReadsAsLocally) {
  const std::string root = Tree("errors");
  const std::vector<std::string> args = {"-Wimplicit-fallthrough",     "-Werror", "-c",
                                         root + "/src/fallthrough.cc", "-o",      "f.o"};
  const CommandResult farm =
      Run(With({FarmBinary("farm-cc"), "g++"}, args), root + "/build", {"FARM_CC_STRICT=1"});
  const CommandResult local = Run(With({"g++"}, args), root + "/build");
  EXPECT_NE(local.exit_code, 0);
  EXPECT_EQ(farm.exit_code, local.exit_code) << Output(farm);
  EXPECT_EQ(farm.stderr_text, local.stderr_text);
  EXPECT_THAT(farm.stderr_text, HasSubstr("implicit-fallthrough"));
}

// What the farm cannot reproduce runs here and says why; strict mode refuses such a compile.
TEST_F(FarmCcTest, WhatCannotBeTheSameStaysLocalWithItsReason) {
  const std::string root = Tree("local");
  const std::string build = root + "/build";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"gcc", "-c", root + "/src/time_macro.c", "-o", "t.o"}, "__TIME__"},
      {{"g++", "-DSHAPES_SCALE=1", "-flto", "-c", root + "/src/shapes.cc", "-o", "l.o"}, "-flto"},
      {{"g++", "-DSHAPES_SCALE=1", "-march=native", "-c", root + "/src/shapes.cc", "-o", "n.o"},
       "native"},
  };
  for (const auto& [argv, reason] : cases) {
    SCOPED_TRACE(absl::StrJoin(argv, " "));
    const CommandResult strict =
        Run(With({FarmBinary("farm-cc")}, argv), build, {"FARM_CC_STRICT=1"});
    EXPECT_EQ(strict.exit_code, 3) << Output(strict);
    EXPECT_THAT(strict.stderr_text, HasSubstr("strict mode"));
    EXPECT_THAT(strict.stderr_text, HasSubstr(reason));
    const CommandResult relaxed = Run(With({FarmBinary("farm-cc")}, argv), build);
    EXPECT_EQ(relaxed.exit_code, 0) << Output(relaxed);
    EXPECT_TRUE(fs::exists(build + "/" + argv[argv.size() - 1]));
  }
  // A link is no compile: it runs here even in strict mode.
  const CommandResult link = Run({FarmBinary("farm-cc"), "gcc", root + "/src/time_macro.c",
                                  "-shared", "-fPIC", "-o", "libt.so"},
                                 build, {"FARM_CC_STRICT=1"});
  EXPECT_EQ(link.exit_code, 0) << Output(link);
  EXPECT_TRUE(fs::exists(build + "/libt.so"));
}

// The same compile again (another object name is another compile) is answered by the action
// cache: no worker compiles it twice.
TEST_F(FarmCcTest, ARepeatedCompileComesFromTheCache) {
  const std::string root = Tree("cache");
  const std::vector<std::string> args = {"-DSHAPES_SCALE=9",      "-O2", "-c",
                                         root + "/src/shapes.cc", "-o",  "s.o"};
  build_id_ = "farm-cc-cache";
  for (int i = 0; i < 2; ++i) {
    const CommandResult r = Run(With({FarmBinary("farm-cc"), "g++"}, args), root + "/build",
                                {"FARM_CC_STRICT=1", "FARM_BUILD_ID=farm-cc-cache"});
    ASSERT_EQ(r.exit_code, 0) << Output(r);
  }
  const CommandResult build =
      RunFarmctl({"build", "farm-cc-cache", "--json"}, farm_->ClientEnvironment());
  ASSERT_EQ(build.exit_code, 0) << Output(build);
  const auto json = nlohmann::json::parse(build.stdout_text);
  ASSERT_EQ(json["shards"].size(), 1u);
  EXPECT_EQ(json["shards"][0]["name"], "host");
  EXPECT_EQ(json["shards"][0]["total"], 2);
  EXPECT_EQ(json["shards"][0]["cached"], 1);

  // Where the time went (issue 45): both calls with their phases, which add up to their wall
  // time; the first ran on a worker (queued, fetched, run), the second took its result.
  const auto& times = json["host_compiles"]["times"];
  EXPECT_EQ(times.value("calls", ""), "2") << times.dump();
  const auto& phases = times["phases"];
  double sum = 0;
  for (const auto& [phase, seconds] : phases.items()) sum += seconds.get<double>();
  EXPECT_NEAR(sum, times.value("wall_seconds", 0.0), 1e-6) << times.dump();
  EXPECT_GT(phases.value("run", 0.0), 0) << times.dump();
  EXPECT_GT(phases.value("fetch", 0.0), 0) << times.dump();
  EXPECT_GT(phases.value("upload", 0.0), 0) << times.dump();
  EXPECT_GT(phases.value("scan", 0.0) + phases.value("hash", 0.0), 0) << times.dump();
  ASSERT_EQ(times["slowest"].size(), 2u) << times.dump();
  EXPECT_EQ(times["slowest"][0].value("unit", ""), root + "/src/shapes.cc");
  const CommandResult text = RunFarmctl({"build", "farm-cc-cache"}, farm_->ClientEnvironment());
  EXPECT_THAT(text.stdout_text, HasSubstr("time       host cc: 2 calls on the farm, "))
      << text.stdout_text;
  EXPECT_THAT(text.stdout_text, HasSubstr("slowest ")) << text.stdout_text;
  // And in /metrics, as histograms: the launchers' calls and the workers' runs.
  auto hp = ParseHostPort(farm_->coordinator().http_address());
  ASSERT_TRUE(hp.ok()) << hp.status();
  httplib::Client http(hp->host, hp->port);
  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics);
  for (const char* series :
       {"farm_compile_call_seconds_count{kind=\"host\"} ",
        "farm_compile_call_phase_seconds_count{kind=\"host\",phase=\"upload\"} ",
        "farm_action_phase_seconds_count{phase=\"queue\"} ",
        "farm_action_phase_seconds_count{phase=\"run\"} "}) {
    EXPECT_THAT(metrics->body, HasSubstr(series));
  }
}

// A build starts many compiles at once with a toolchain the farm has never seen: one call
// sends it (some 70 MB for g++), the others wait for it and find it stored, instead of each
// sending it again.
TEST_F(FarmCcTest, CallsStartedTogetherSendANewToolchainOnce) {
  TempDir dir("farm-cc-one-toolchain-upload");
  auto farm = TestFarm::Start(dir.path());  // its own CAS: the toolchain is new there
  ASSERT_TRUE(farm.ok()) << farm.status();
  const std::string root = Tree("one-toolchain-upload");
  const std::string cache_dir = (dir.path() / "cc-cache").string();
  std::vector<std::string> env = (*farm)->ClientEnvironment();
  env.insert(env.end(), {"FARM_CC_STRICT=1", "FARM_CC_CACHE_DIR=" + cache_dir,
                         "FARM_BUILD_ID=farm-cc-one-toolchain-upload"});
  constexpr int kCalls = 4;
  std::vector<CommandResult> results(kCalls);
  std::vector<std::thread> calls;
  for (int i = 0; i < kCalls; ++i) {
    calls.emplace_back([&, i] {
      auto r = RunCommand({"env", "-C", root + "/build", FarmBinary("farm-cc"), "g++",
                           absl::StrCat("-DSHAPES_SCALE=", i + 1), "-c", root + "/src/shapes.cc",
                           "-o", absl::StrCat("s", i, ".o")},
                          absl::Minutes(5), env);
      results[static_cast<size_t>(i)] = r.ok() ? *r : CommandResult{.exit_code = -1};
    });
  }
  for (std::thread& t : calls) t.join();
  for (const CommandResult& r : results) ASSERT_EQ(r.exit_code, 0) << Output(r);

  // The toolchain's bytes: its files, each once (the closure farm-cc cached).
  int64_t toolchain_bytes = 0;
  std::set<std::string> counted;
  for (const auto& entry : fs::directory_iterator(cache_dir)) {
    if (entry.path().extension() != ".json") continue;
    const auto json = nlohmann::json::parse(ReadFile(entry.path().string()));
    for (const auto& path : json["paths"]) {
      const std::string real = fs::canonical(path.get<std::string>()).string();
      if (counted.insert(real).second) toolchain_bytes += fs::file_size(real);
    }
  }
  ASSERT_GT(toolchain_bytes, 10 << 20) << "no g++ toolchain found in " << cache_dir;
  const CommandResult metrics =
      RunCommand({"curl", "-sSf",
                  absl::StrCat("http://", (*farm)->coordinator().http_address(), "/metrics")},
                 absl::Seconds(30))
          .value_or(CommandResult{.exit_code = -1});
  ASSERT_EQ(metrics.exit_code, 0) << Output(metrics);
  const std::string marker = "\nfarm_cas_bytes_in_total ";
  const size_t at = metrics.stdout_text.find(marker);
  ASSERT_NE(at, std::string::npos) << metrics.stdout_text;
  const double bytes_in = std::stod(metrics.stdout_text.substr(at + marker.size()));
  // Once, and the four units' sources and headers (some hundred KB); not twice or more.
  EXPECT_GE(bytes_in, static_cast<double>(toolchain_bytes));
  EXPECT_LT(bytes_in, 1.5 * static_cast<double>(toolchain_bytes))
      << "the toolchain (" << toolchain_bytes << " bytes) was sent more than once";
}

// The dependency scan is kept (scan_cache.h): the same compile again, here or in another
// checkout, runs no preprocessor; a header that changes, or a new one that shadows the one
// found (an earlier -I directory), makes farm-cc scan again, and every object equals a
// local compile's. (FARM_CC_SCAN=compiler: by default these includes are read without a scan.)
TEST_F(FarmCcTest, AKeptScanStandsOnlyWhileNoHeaderChangesOrAppears) {
  const std::string cache_dir = (dir_->path() / "scan-cache-dir").string();
  const std::string first = Tree("scan-cache");
  const std::string second = Tree("scan-cache-in-another-checkout");
  auto WriteFile = [](const std::string& path, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomically(path, text).ok()) << path;
  };
  for (const std::string& root : {first, second}) {
    fs::create_directories(root + "/src/inc1");
    fs::create_directories(root + "/src/inc2");
    WriteFile(root + "/src/inc2/lib.h", "#pragma once\ninline constexpr int kLib = 2;\n");
    WriteFile(root + "/src/uses_lib.cc",
              "#include \"lib.h\"\n#include <vector>\nint Lib() { return kLib; }\n");
  }
  auto args = [](const std::string& root, const std::string& object) {
    return std::vector<std::string>{"-O2", "-I" + root + "/src/inc1", "-I" + root + "/src/inc2",
                                    "-c",  root + "/src/uses_lib.cc", "-o",
                                    object};
  };
  // farm-cc's compile, checked against g++'s own; what farm-cc said at debug level.
  auto compile = [&](const std::string& root) {
    const CommandResult farm =
        Run(With({FarmBinary("farm-cc"), "g++"}, args(root, "farm.o")), root + "/build",
            {"FARM_CC_STRICT=1", "FARM_BUILD_ID=farm-cc-scan-cache", "FARM_CC_LOG=debug",
             "FARM_CC_CACHE_DIR=" + cache_dir, "FARM_CC_BASEDIR=" + root, "FARM_CC_SCAN=compiler"});
    EXPECT_EQ(farm.exit_code, 0) << Output(farm);
    const CommandResult local = Run(With({"g++"}, args(root, "local.o")), root + "/build");
    EXPECT_EQ(local.exit_code, 0) << Output(local);
    const std::string object = ReadFile(root + "/build/farm.o");
    EXPECT_FALSE(object.empty());
    EXPECT_TRUE(object == ReadFile(root + "/build/local.o")) << "differs from g++'s object";
    return std::make_pair(farm.stderr_text, object);
  };
  const std::string kept = "kept scan and input tree";
  auto [said, object] = compile(first);
  EXPECT_THAT(said, Not(HasSubstr(kept)));
  EXPECT_THAT(said, HasSubstr(", scan "));
  std::tie(said, object) = compile(first);
  EXPECT_THAT(said, HasSubstr(kept));
  EXPECT_THAT(said, Not(HasSubstr(", scan ")));
  std::tie(said, object) = compile(second);  // same sources, another tree
  EXPECT_THAT(said, HasSubstr(kept));
  const std::string with_two = object;

  // A header read changes.
  WriteFile(second + "/src/inc2/lib.h", "#pragma once\ninline constexpr int kLib = 3;\n");
  std::tie(said, object) = compile(second);
  EXPECT_THAT(said, HasSubstr("the kept scan no longer holds"));
  EXPECT_THAT(said, Not(HasSubstr(kept)));
  EXPECT_FALSE(object == with_two);
  const std::string with_three = object;
  std::tie(said, object) = compile(second);
  EXPECT_THAT(said, HasSubstr(kept));

  // A new header ahead of it in the search: the compile would now read that one.
  WriteFile(second + "/src/inc1/lib.h", "#pragma once\ninline constexpr int kLib = 4;\n");
  std::tie(said, object) = compile(second);
  EXPECT_THAT(said, HasSubstr("the kept scan no longer holds"));
  EXPECT_FALSE(object == with_three);
  std::tie(said, object) = compile(second);
  EXPECT_THAT(said, HasSubstr(kept));
}

// A compile's inputs go as directories by digest and the CAS is asked by tree: the same unit
// in a second checkout sends only the directories on its own path (the system's headers and
// the source's bytes are stored already) and names fewer blobs than its tree has entries.
TEST_F(FarmCcTest, AnotherCheckoutSendsOnlyTheDirectoriesOnItsOwnPath) {
  const std::string cache_dir = (dir_->path() / "tree-inputs-cache").string();
  struct Sent {
    int entries = 0, blobs = 0, asked = 0, tree_blobs_sent = 0, files_sent = 0;
  };
  auto compile = [&](const std::string& root) {
    EXPECT_TRUE(WriteFileAtomically(root + "/src/containers.cc",
                                    "#include <map>\n#include <string>\n#include <vector>\n"
                                    "int F() { return std::map<std::string, std::vector<int>>{}"
                                    ".size(); }\n")
                    .ok());
    const CommandResult farm =
        Run({FarmBinary("farm-cc"), "g++", "-O2", "-c", root + "/src/containers.cc", "-o", "c.o"},
            root + "/build",
            {"FARM_CC_STRICT=1", "FARM_BUILD_ID=farm-cc-tree-inputs", "FARM_CC_LOG=debug",
             "FARM_CC_CACHE_DIR=" + cache_dir});
    EXPECT_EQ(farm.exit_code, 0) << Output(farm);
    std::smatch m;
    Sent sent;
    if (!std::regex_search(farm.stderr_text, m,
                           std::regex("a tree of (\\d+) entries in (\\d+) blobs .*asked about "
                                      "(\\d+) blobs .*sent (\\d+) tree blobs .*, (\\d+) files"))) {
      ADD_FAILURE() << "no account of what was sent: " << farm.stderr_text;
      return sent;
    }
    sent = {std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3]), std::stoi(m[4]), std::stoi(m[5])};
    return sent;
  };
  const Sent first = compile(Tree("tree-inputs"));
  EXPECT_GT(first.entries, 100) << "<map>, <string> and <vector> read about a hundred headers";
  EXPECT_GT(first.blobs, 10);
  const Sent second = compile(Tree("tree-inputs-in-another-checkout"));
  EXPECT_EQ(second.entries, first.entries);
  // The root and the directories down to src/ are new; nothing else is.
  EXPECT_GE(second.tree_blobs_sent, 1);
  EXPECT_LE(second.tree_blobs_sent, 8);
  EXPECT_EQ(second.files_sent, 0);
  // Asked by tree: the toolchain's files and the tree's blobs, then the few files of the new
  // directories, not every header by name.
  EXPECT_LT(second.asked, second.entries);
}

// By default farm-cc reads a compile's includes itself and runs no -M scan: the tree holds
// every header each include may find, on every branch, so the object equals g++'s, and a
// header that appears ahead of the one found (an earlier -I directory) is read next time. A
// file that includes by a macro's name makes farm-cc scan instead, saying which file.
TEST_F(FarmCcTest, ItsIncludesReadHereStandInForTheScanUnlessAMacroNamesOne) {
  const std::string root = Tree("includes-read");
  const std::string cache_dir = (dir_->path() / "includes-read-cache").string();
  auto WriteFile = [](const std::string& path, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomically(path, text).ok()) << path;
  };
  fs::create_directories(root + "/src/inc1");
  fs::create_directories(root + "/src/inc2");
  WriteFile(root + "/src/inc2/lib.h", "#pragma once\ninline constexpr int kLib = 2;\n");
  WriteFile(root + "/src/uses_lib.cc",
            "#include \"lib.h\"\n#include <vector>\n#if 0\n#include \"absent.h\"\n#endif\n"
            "int Lib() { return kLib; }\n");
  WriteFile(root + "/src/by_macro.cc",
            "#define LIB \"lib.h\"\n#include LIB\nint Lib() { return kLib; }\n");
  auto compile = [&](const std::string& source) {
    const std::vector<std::string> args = {
        "-O2",   "-I" + root + "/src/inc1", "-I" + root + "/src/inc2",
        "-c",    root + "/src/" + source,   "-o",
        "farm.o"};
    const CommandResult farm = Run(With({FarmBinary("farm-cc"), "g++"}, args), root + "/build",
                                   {"FARM_CC_STRICT=1", "FARM_BUILD_ID=farm-cc-includes-read",
                                    "FARM_CC_LOG=debug", "FARM_CC_CACHE_DIR=" + cache_dir});
    EXPECT_EQ(farm.exit_code, 0) << Output(farm);
    std::vector<std::string> local_args = args;
    local_args.back() = "local.o";
    const CommandResult local = Run(With({"g++"}, local_args), root + "/build");
    EXPECT_EQ(local.exit_code, 0) << Output(local);
    const std::string object = ReadFile(root + "/build/farm.o");
    EXPECT_FALSE(object.empty());
    EXPECT_TRUE(object == ReadFile(root + "/build/local.o")) << "differs from g++'s object";
    return std::make_pair(farm.stderr_text, object);
  };
  const std::string read = "includes read and input tree";
  auto [said, object] = compile("uses_lib.cc");
  EXPECT_THAT(said, HasSubstr(read));
  EXPECT_THAT(said, Not(HasSubstr(", scan ")));
  const std::string with_two = object;

  WriteFile(root + "/src/inc1/lib.h", "#pragma once\ninline constexpr int kLib = 4;\n");
  std::tie(said, object) = compile("uses_lib.cc");
  EXPECT_THAT(said, HasSubstr(read));
  EXPECT_FALSE(object == with_two);

  std::tie(said, object) = compile("by_macro.cc");
  EXPECT_THAT(said, HasSubstr("the compiler scans: " + root +
                              "/src/by_macro.cc may look a header up by a name farm-cc cannot "
                              "read"));
  EXPECT_THAT(said, HasSubstr(", scan "));
  EXPECT_THAT(said, Not(HasSubstr(read)));
}

// Another checkout of the same sources (FARM_CC_BASEDIR set in each, as ccache's base_dir), at
// a path of another length so the dependency file's lines break elsewhere, takes the first
// checkout's compile from the cross-tree cache: no action runs, and the object, dependency
// file and warnings are those of a local compile there. With -g the object names its tree:
// no entry is kept, and the other checkout compiles on the farm again.
TEST_F(FarmCcTest, AnotherCheckoutTakesTheCompileFromTheCrossTreeCache) {
  const std::string first = Tree("checkout");
  const std::string second = Tree("another-checkout-at-a-longer-path");
  const std::vector<std::string> outputs = {"CMakeFiles/w.dir/warns.c.o",
                                            "CMakeFiles/w.dir/warns.c.o.d"};
  auto cmake_line = [](const std::string& root, const std::string& debug) {
    std::vector<std::string> args = {"-O2", "-Wall", "-I" + root + "/src", "-include",
                                     root + "/src/forced.h"};
    if (!debug.empty()) args.push_back(debug);
    for (const char* w :
         {"-MD", "-MT", "CMakeFiles/w.dir/warns.c.o", "-MF", "CMakeFiles/w.dir/warns.c.o.d", "-o",
          "CMakeFiles/w.dir/warns.c.o", "-c"}) {
      args.push_back(w);
    }
    args.push_back(root + "/src/warns.c");
    return args;
  };
  // How `build_id`'s compiles ran, from the coordinator.
  auto host_compiles = [](const std::string& build_id) {
    const CommandResult r = RunFarmctl({"build", build_id, "--json"}, farm_->ClientEnvironment());
    EXPECT_EQ(r.exit_code, 0) << Output(r);
    const auto json = nlohmann::json::parse(r.stdout_text, nullptr, false);
    EXPECT_TRUE(json.is_object()) << r.stdout_text;
    return json.is_object() && json.contains("host_compiles") ? json["host_compiles"]
                                                              : nlohmann::json::object();
  };
  for (const std::string debug : {"", "-g"}) {
    SCOPED_TRACE(debug.empty() ? "no debug info" : debug);
    const std::string ids = debug.empty() ? "cross-tree" : "cross-tree-g";
    for (const std::string& root : {first, second}) {
      fs::create_directories(root + "/build/CMakeFiles/w.dir");
      const std::string id = ids + (root == first ? "-1" : "-2");
      if (root == second) {
        // A compile only this checkout has: it makes the build the coordinator counts in
        // (a build exists once one of its actions ran; a wheel build's exists from submit).
        const CommandResult other =
            Run({FarmBinary("farm-cc"), "g++", "-O2",
                 "-DSHAPES_SCALE=" + std::to_string(20 + debug.size()), "-c",
                 root + "/src/shapes.cc", "-o", "shapes.o"},
                root + "/build", {"FARM_CC_STRICT=1", "FARM_BUILD_ID=" + id});
        ASSERT_EQ(other.exit_code, 0) << Output(other);
      }
      const CommandResult farm =
          Run(With({FarmBinary("farm-cc"), "gcc"}, cmake_line(root, debug)), root + "/build",
              {"FARM_CC_STRICT=1", "FARM_BUILD_ID=" + id, "FARM_CC_BASEDIR=" + root});
      ASSERT_EQ(farm.exit_code, 0) << Output(farm);
      EXPECT_THAT(farm.stderr_text, HasSubstr(root + "/src/warns.c:4:"));
      if (root == first) continue;
      std::map<std::string, std::string> from_farm;
      for (const std::string& out : outputs) {
        from_farm[out] = ReadFile(root + "/build/" + out);
        fs::remove(root + "/build/" + out);
      }
      const CommandResult local = Run(With({"gcc"}, cmake_line(root, debug)), root + "/build");
      ASSERT_EQ(local.exit_code, 0) << Output(local);
      for (const std::string& out : outputs) {
        EXPECT_TRUE(from_farm[out] == ReadFile(root + "/build/" + out))
            << out << " differs from the local compile's:\n"
            << from_farm[out] << "\n"
            << ReadFile(root + "/build/" + out);
      }
      EXPECT_EQ(farm.stderr_text, local.stderr_text);
      const nlohmann::json counts = host_compiles(id);
      // The build's first compile (shapes.cc) ran on a worker; warns.c came from the first
      // checkout's entry, or compiled again where the object names its tree.
      EXPECT_EQ(counts.value("cached", "0"), debug.empty() ? "1" : "0") << counts.dump();
      EXPECT_EQ(counts.value("split", "0"), debug.empty() ? "1" : "2") << counts.dump();
    }
  }
}

// A FARM_CC_BASEDIR farm-cc cannot use is refused before anything runs, naming the fix.
TEST_F(FarmCcTest, AMalformedBaseDirIsRefused) {
  const std::string root = Tree("bad-base-dir");
  const CommandResult r = Run({FarmBinary("farm-cc"), "gcc", "-c", root + "/src/warns.c", "-o",
                               "w.o", "-include", root + "/src/forced.h"},
                              root + "/build", {"FARM_CC_BASEDIR=relative/dir"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.stderr_text, HasSubstr("FARM_CC_BASEDIR 'relative/dir'"));
  EXPECT_THAT(r.stderr_text, HasSubstr("Fix:"));
  EXPECT_FALSE(fs::exists(root + "/build/w.o"));
}

// A setting farm-cc cannot take fails the call, naming it and the fix, before anything runs: a
// FARM_CC_DISABLE=true is not quietly taken for "off".
TEST_F(FarmCcTest, AMalformedSettingIsRefused) {
  const std::string root = Tree("bad-scan-settings");
  for (const auto& [setting, said] : std::vector<std::pair<std::string, std::string>>{
           {"FARM_CC_SCAN_CACHE_SIZE=lots", "FARM_CC_SCAN_CACHE_SIZE='lots' is not a size"},
           {"FARM_CC_SCAN=fast", "FARM_CC_SCAN='fast' is neither 'includes' nor 'compiler'"},
           {"FARM_CC_DISABLE=maybe", "FARM_CC_DISABLE='maybe' is not a boolean"}}) {
    const CommandResult r =
        Run({FarmBinary("farm-cc"), "gcc", "-c", root + "/src/warns.c", "-o", "w.o"},
            root + "/build", {setting});
    EXPECT_EQ(r.exit_code, 2) << setting;
    EXPECT_THAT(r.stderr_text, HasSubstr(said));
    EXPECT_THAT(r.stderr_text, HasSubstr("Fix:"));
    EXPECT_FALSE(fs::exists(root + "/build/w.o"));
  }
}

// A compiler the worker cannot run from its tree fails the worker's check: here a g++ that
// hands its call to /usr/bin/g++, a file farm-cc cannot know it needs. The compile falls back
// here, counted with a reason naming the compiler, the worker and the fix; strict mode fails.
TEST_F(FarmCcTest, AToolchainThatFailsTheWorkersCheckFallsBackNamingTheWorkerAndTheFix) {
  const std::string root = Tree("wrapper");
  const std::string wrapper = root + "/bin/g++";
  fs::create_directories(root + "/bin");
  WriteText(
      root + "/bin/forward.c",
      "#include <unistd.h>\nint main(int c, char** v) { (void)c; v[0] = (char*)\"/usr/bin/g++\";"
      " execv(v[0], v); return 127; }\n");
  const CommandResult built = Run({"gcc", "-O2", "forward.c", "-o", "g++"}, root + "/bin");
  ASSERT_EQ(built.exit_code, 0) << Output(built);
  const std::vector<std::string> args = {
      "-O2", "-DSHAPES_SCALE=31", "-c", root + "/src/shapes.cc", "-o", "s.o"};
  const CommandResult r = Run(With({FarmBinary("farm-cc"), wrapper}, args), root + "/build",
                              {"FARM_BUILD_ID=farm-cc-wrapper"});
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  EXPECT_TRUE(fs::exists(root + "/build/s.o"));
  const CommandResult strict = Run(With({FarmBinary("farm-cc"), wrapper}, args), root + "/build",
                                   {"FARM_BUILD_ID=farm-cc-wrapper", "FARM_CC_STRICT=1"});
  EXPECT_EQ(strict.exit_code, 3) << Output(strict);
  // The reason names the worker and the compiler; the worker's words name the fix.
  EXPECT_THAT(strict.stderr_text, ::testing::ContainsRegex("worker w[12]\\)")) << Output(strict);
  EXPECT_THAT(strict.stderr_text, HasSubstr(wrapper + " does not run on this worker"))
      << Output(strict);
  EXPECT_THAT(strict.stderr_text, HasSubstr("Fix:")) << Output(strict);
  const CommandResult build = RunFarmctl({"build", "farm-cc-wrapper"}, farm_->ClientEnvironment());
  EXPECT_THAT(build.stdout_text, HasSubstr("host cc")) << Output(build);
}

// A compile whose dependency scan fails where the compile itself passes stays on this host like
// any other: counted as scan_failed, and refused by strict mode (exit 3) rather than passed.
// Here a g++ whose -M scan fails and which hands everything else to /usr/bin/g++.
TEST_F(FarmCcTest, AScanThatFailsWhereTheCompilePassesIsRefusedInStrictMode) {
  const std::string root = Tree("scan-fails");
  fs::create_directories(root + "/bin");
  WriteText(root + "/bin/no_scan.c",
            "#include <string.h>\n#include <unistd.h>\nint main(int c, char** v) {\n"
            "  for (int i = 1; i < c; ++i) if (strcmp(v[i], \"-M\") == 0) return 1;\n"
            "  v[0] = (char*)\"/usr/bin/g++\"; execv(v[0], v); return 127;\n}\n");
  const CommandResult built = Run({"gcc", "-O2", "no_scan.c", "-o", "g++"}, root + "/bin");
  ASSERT_EQ(built.exit_code, 0) << Output(built);
  const std::string id = "farm-cc-scan-fails";
  const std::vector<std::string> env = {"FARM_BUILD_ID=" + id, "FARM_CC_SCAN=compiler",
                                        "FARM_CC_CACHE_DIR=" + root + "/cache"};
  // The build exists once a compile of it ran on the farm: reports never create one.
  const CommandResult first = Run({FarmBinary("farm-cc"), "g++", "-DSHAPES_SCALE=51", "-c",
                                   root + "/src/shapes.cc", "-o", "first.o"},
                                  root + "/build", With(env, {"FARM_CC_STRICT=1"}));
  ASSERT_EQ(first.exit_code, 0) << Output(first);
  const std::vector<std::string> argv = {FarmBinary("farm-cc"),
                                         root + "/bin/g++",
                                         "-DSHAPES_SCALE=52",
                                         "-c",
                                         root + "/src/shapes.cc",
                                         "-o",
                                         "s.o"};
  const CommandResult strict = Run(argv, root + "/build", With(env, {"FARM_CC_STRICT=1"}));
  EXPECT_EQ(strict.exit_code, 3) << Output(strict);
  EXPECT_THAT(strict.stderr_text, HasSubstr("strict mode: " + root +
                                            "/src/shapes.cc would "
                                            "compile on this host: the dependency scan failed"));
  const CommandResult relaxed = Run(argv, root + "/build", env);
  EXPECT_EQ(relaxed.exit_code, 0) << Output(relaxed);
  EXPECT_TRUE(fs::exists(root + "/build/s.o"));
  const CommandResult build = RunFarmctl({"build", id, "--json"}, farm_->ClientEnvironment());
  ASSERT_EQ(build.exit_code, 0) << Output(build);
  const auto json = nlohmann::json::parse(build.stdout_text);
  EXPECT_EQ(json["host_compiles"]["fallback_reasons"].value("scan_failed", "0"), "2")
      << json.dump();
}

// Debian's g++-11 and g++-12 are two toolchains (two trees, two digests): the same call with
// each compiles on a worker with its own compiler and writes that compiler's object; neither
// is answered by the other's cache entry.
TEST_F(FarmCcTest, TwoToolchainsNeverAnswerEachOther) {
  ASSERT_TRUE(fs::exists("/usr/bin/g++-11")) << "Fix: bash scripts/install-test-deps.sh";
  const std::string root = Tree("two-toolchains");
  const std::vector<std::string> args = {
      "-O2", "-DSHAPES_SCALE=41", "-c", root + "/src/shapes.cc", "-o", "s.o"};
  std::map<std::string, std::string> objects;
  for (const std::string compiler : {"g++-12", "g++-11"}) {
    const std::string id = "farm-cc-" + compiler;
    const CommandResult farm = Run(With({FarmBinary("farm-cc"), compiler}, args), root + "/build",
                                   {"FARM_CC_STRICT=1", "FARM_BUILD_ID=" + id});
    ASSERT_EQ(farm.exit_code, 0) << Output(farm);
    objects[compiler] = ReadFile(root + "/build/s.o");
    const CommandResult local = Run(With({compiler}, args), root + "/build");
    ASSERT_EQ(local.exit_code, 0) << Output(local);
    EXPECT_TRUE(objects[compiler] == ReadFile(root + "/build/s.o"))
        << compiler << ": the farm's object differs from the local compile's";
    const CommandResult build = RunFarmctl({"build", id, "--json"}, farm_->ClientEnvironment());
    ASSERT_EQ(build.exit_code, 0) << Output(build);
    const auto json = nlohmann::json::parse(build.stdout_text);
    EXPECT_EQ(json["host_compiles"].value("split", "0"), "1") << json.dump();
    EXPECT_EQ(json["host_compiles"].value("cached", "0"), "0") << json.dump();
  }
  EXPECT_FALSE(objects["g++-11"] == objects["g++-12"]);
  EXPECT_THAT(objects["g++-11"], HasSubstr("GCC: (Debian 11."));
  EXPECT_THAT(objects["g++-12"], HasSubstr("GCC: (Debian 12."));
}

// Builds that take no launcher (setuptools, cpp_extension's cxx rule) find farm-cc first on
// PATH under the compiler's name, and it finds the real compiler after itself.
TEST_F(FarmCcTest, TheMasqueradeDirectoryStandsInForTheCompilers) {
  const std::string root = Tree("masquerade");
  const std::string masquerade =
      fs::path(FarmBinary("farm-cc")).parent_path() / "farm-cc-masquerade";
  ASSERT_TRUE(fs::is_symlink(masquerade + "/g++"));
  const CommandResult r =
      Run({"g++", "-DSHAPES_SCALE=1", "-c", root + "/src/shapes.cc", "-o", "m.o"}, root + "/build",
          {"PATH=" + masquerade + ":/usr/local/bin:/usr/bin:/bin", "FARM_CC_STRICT=1"});
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  EXPECT_TRUE(fs::exists(root + "/build/m.o"));
}

// A wrapper script named g++ after the masquerade directory, calling `g++` as such wrappers do,
// finds farm-cc again: that farm-cc skips the wrapper its ancestor runs and runs the real g++,
// so the call ends and compiles. (The wrapper gives up after a few rounds, so that the test
// fails instead of recursing without end.)
TEST_F(FarmCcTest, AWrapperNamedLikeTheCompilerThatCallsItByNameEnds) {
  const std::string root = Tree("wrapper-recursion");
  const std::string masquerade =
      fs::path(FarmBinary("farm-cc")).parent_path() / "farm-cc-masquerade";
  fs::create_directories(root + "/wrap");
  WriteText(
      root + "/wrap/g++",
      "#!/bin/sh\n"
      "depth=${WRAPPER_DEPTH:-0}\n"
      "if [ \"$depth\" -ge 5 ]; then echo 'wrapper: g++ keeps finding itself' >&2; exit 9; fi\n"
      "export WRAPPER_DEPTH=$((depth + 1))\n"
      "exec g++ \"$@\"\n");
  fs::permissions(root + "/wrap/g++", fs::perms::owner_all);
  const CommandResult r =
      Run({"g++", "-DSHAPES_SCALE=1", "-c", root + "/src/shapes.cc", "-o", "w.o"}, root + "/build",
          {"PATH=" + masquerade + ":" + root + "/wrap:/usr/local/bin:/usr/bin:/bin"});
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  EXPECT_THAT(r.stderr_text, Not(HasSubstr("keeps finding itself")));
  EXPECT_TRUE(fs::exists(root + "/build/w.o"));
}

// A heavy real unit: <ATen/ATen.h> from torch 2.9.1 (~4,800 headers), compiled as
// torch.utils.cpp_extension compiles C++ sources.
TEST_F(FarmCcTest, ATorchUnitEqualsALocalCompile) {
  const std::string venv = std::string(std::getenv("HOME")) + "/.cache/wheelfarm/torch-2.9.1-venv";
  const std::string torch = venv + "/lib/python3.11/site-packages/torch";
  ASSERT_TRUE(fs::exists(torch + "/include/ATen/ATen.h"))
      << "torch 2.9.1 is missing: bash scripts/install-torch.sh";
  const std::string root = Tree("torch");
  WriteText(root + "/src/aten_unit.cpp",
            "#include <ATen/ATen.h>\nat::Tensor AddOne(const at::Tensor& x) { return x + 1; }\n");
  ExpectSameAsLocal(
      "g++",
      {"-DTORCH_API_INCLUDE_EXTENSION_H", "-isystem", torch + "/include", "-isystem",
       torch + "/include/torch/csrc/api/include", "-fPIC", "-std=c++17", "-O2", "-MD", "-MF",
       "aten_unit.o.d", "-c", root + "/src/aten_unit.cpp", "-o", "aten_unit.o"},
      root + "/build", {"aten_unit.o", "aten_unit.o.d"});
}

}  // namespace
}  // namespace farm::testing
