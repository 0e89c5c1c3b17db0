// ARM64 hosts, emulated: aarch64 farm binaries (scripts/cross-build-aarch64.sh) run under
// qemu-user inside an arm64 Debian root with an aarch64 CUDA toolkit from PyPI, as real
// processes on loopback beside an x86_64 coordinator and x86_64 workers.
//  - an aarch64 worker registers with its own facts (CPU, glibc, toolkit, Python);
//  - an aarch64 build host's device compiles run on x86_64 workers, and the device code is
//    byte-identical to the same TU compiled entirely on the aarch64 host;
//  - farmctl submit builds the demo's aarch64 wheel on the mixed fleet: verified,
//    published, pip-installed inside the arm64 root and run there; PyTorch's plan on the
//    mixed fleet refuses the root's glibc until the submit raises the ceiling;
//  - bitsandbytes, a real package linking cuBLAS, builds there as a manylinux aarch64 wheel,
//    its device code per SM the same as the x86_64 build's;
//  - an aarch64 build host's farm-cc compiles run only on aarch64 workers that sandbox their
//    actions, byte-identical to its own g++; without one, strict mode refuses naming the fix.
// Missing pieces (binfmt, root, cross build, toolkit) fail the suite naming the fix.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <system_error>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "libfarm/elf/elf_file.h"
#include "libfarm/process/output_tail.h"
#include "libfarm/process/subprocess.h"
#include "tests/support/arm64_host.h"
#include "tests/support/demo_recipe.h"
#include "tests/support/device_payloads.h"
#include "tests/support/suite_fixture.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class Arm64Test : public SuiteFixture<Arm64Test> {
 protected:
  static void SetUpSuite() {
    dir_ = std::make_unique<TempDir>("arm64-test");
    const std::string recipes = *dir_ / "recipes";
    WriteText(recipes + "/demo.toml", DemoRecipe("demo"));
    for (const std::string recipe : {"pytorch", "bitsandbytes"}) {
      WriteText(recipes + "/" + recipe + ".toml",
                ReadFile(FARM_SOURCE_DIR "/recipes/" + recipe + ".toml"));
    }
    auto host = Arm64Host::Create(*dir_ / "arm-host");
    ASSERT_TRUE(host.ok()) << host.status();
    host_ = std::make_unique<Arm64Host>(*std::move(host));
    // Two x86_64 compile workers with the machine's toolkit (13.0.88, like the arm hosts').
    auto farm = TestFarm::Start(
        dir_->path(), {.coordinator_args = {"--recipes-dir", recipes},
                       .workers = {{.name = "x1", .args = {"--cuda-path", "/usr/local/cuda"}},
                                   {.name = "x2", .args = {"--cuda-path", "/usr/local/cuda"}}}});
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }

  static void TearDownSuite() {
    farm_.reset();
    arm_worker_ = nullptr;
    host_.reset();
    dir_.reset();
  }

  // Starts the aarch64 worker `name` on the emulated host, joined to the farm (which stops it
  // with the others).
  static absl::Status StartEmulatedWorker(const std::string& name, bool sandboxed) {
    auto w = host_->StartWorker(farm_->address(), farm_->admin_token_file(), name, {"--slots", "1"},
                                sandboxed);
    if (!w.ok()) return w.status();
    farm_->Adopt(name, *std::move(w));
    return absl::OkStatus();
  }

  // Starts the aarch64 worker "arm1" once for the tests that need it.
  static void StartArmWorker() {
    if (arm_worker_ != nullptr) return;
    absl::Status started = StartEmulatedWorker("arm1", /*sandboxed=*/false);
    ASSERT_TRUE(started.ok()) << started;
    arm_worker_ = &farm_->worker("arm1");
    // qemu runs the toolkit and Python probes at start: slower than a native worker.
    absl::Status online = farm_->WaitUntilOnline({"arm1"}, absl::Minutes(3));
    ASSERT_TRUE(online.ok()) << online;
  }

  static CommandResult Farmctl(const std::vector<std::string>& args) {
    return farm_->Farmctl(args);
  }

  // A tool of this machine (tar, python3, readelf), run to completion; a failure to start it is
  // its result's exit code -1 and message.
  static CommandResult Tool(const std::vector<std::string>& argv) {
    auto r = RunCommand(argv, absl::Minutes(2));
    if (r.ok()) return *std::move(r);
    return CommandResult{.exit_code = -1, .stderr_text = std::string(r.status().message())};
  }

  static nlohmann::json Json(const CommandResult& r) {
    return nlohmann::json::parse(r.stdout_text, nullptr, false);
  }

  // The farm's side of a build that did not finish: its shards and actions, the workers and
  // the end of each worker's log.
  static std::string FarmView(const std::string& build_id) {
    std::string view = absl::StrCat("\n--- farmctl build ", build_id, " ---\n",
                                    Output(Farmctl({"build", build_id})),
                                    "\n--- farmctl workers ---\n", Output(Farmctl({"workers"})));
    for (const std::string& name : farm_->WorkerNames()) {
      const std::string log = farm_->worker(name).log_path();
      absl::StrAppend(&view, "\n--- ", log, " (end) ---\n", TailLines(ReadFile(log), 40));
    }
    return view;
  }

  // Worker name -> CPU arch over every shard of a build, from `farmctl build --json`.
  static std::map<std::string, std::string> ShardCpus(const std::string& build_id) {
    std::map<std::string, std::string> out;
    nlohmann::json b = Json(Farmctl({"--json", "build", build_id}));
    if (!b.is_object() || !b.contains("shards")) return out;
    for (const auto& s : b["shards"]) {
      if (!s.contains("worker_cpu_archs")) continue;
      const nlohmann::json& cpus = s["worker_cpu_archs"];
      for (auto it = cpus.begin(); it != cpus.end(); ++it) out[it.key()] = it.value();
    }
    return out;
  }

  // The files under `dir` whose ELF header names the aarch64 machine.
  static std::vector<std::string> Aarch64ElfFilesUnder(const fs::path& dir) {
    std::vector<std::string> found;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
      std::ifstream in(it->path(), std::ios::binary);
      uint8_t header[20] = {};
      if (!in.read(reinterpret_cast<char*>(header), sizeof header)) continue;
      const ByteSpan bytes(header, sizeof header);
      if (ElfFile::HasMagic(bytes) && LoadLE<uint16_t>(bytes, 18) == kElfMachineAarch64) {
        found.push_back(it->path().string());
      }
    }
    return found;
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<Arm64Host> host_;
  static inline std::unique_ptr<TestFarm> farm_;
  static inline WorkerProcess* arm_worker_ = nullptr;  // farm_'s
};

TEST_F(Arm64Test, DeviceCompilesOfAnArm64BuildHostRunOnX86WorkersByteIdentical) {
  // Before any aarch64 worker joins: only x86_64 workers can take the device actions.
  const std::string work = "/host/cross";
  fs::create_directories(host_->Outside(work));
  fs::copy_file(FARM_SOURCE_DIR "/tests/data/cuda/reduce_cub.cu", host_->Outside(work + "/k.cu"),
                fs::copy_options::overwrite_existing);
  auto token = host_->CopyIn(farm_->admin_token_file(), "client.token");
  ASSERT_TRUE(token.ok()) << token.status();
  const std::vector<std::string> flags = {"-c",
                                          "k.cu",
                                          "-O2",
                                          "-gencode",
                                          "arch=compute_75,code=sm_75",
                                          "-gencode",
                                          "arch=compute_90,code=sm_90"};
  std::vector<std::string> farm = {"env",
                                   "-C",
                                   work,
                                   "FARM_COORDINATOR=" + farm_->address(),
                                   "FARM_TOKEN_FILE=" + *token,
                                   "FARM_BUILD_ID=arm-cross",
                                   "FARM_NVCC_STRICT=1",
                                   "/opt/wheelfarm/bin/farm-nvcc",
                                   "/opt/cuda/bin/nvcc"};
  farm.insert(farm.end(), flags.begin(), flags.end());
  farm.insert(farm.end(), {"-o", "farm.o"});
  auto f = host_->Run(farm, absl::Minutes(10));
  ASSERT_TRUE(f.ok()) << f.status() << FarmView("arm-cross");
  ASSERT_EQ(f->exit_code, 0) << Output(*f) << FarmView("arm-cross");

  std::vector<std::string> plain = {"env", "-C", work, "/opt/cuda/bin/nvcc"};
  plain.insert(plain.end(), flags.begin(), flags.end());
  plain.insert(plain.end(), {"-o", "plain.o"});
  auto p = host_->Run(plain, absl::Minutes(15));
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->exit_code, 0) << Output(*p);

  // The cubins of the aarch64 plan compiled by x86_64 cicc/ptxas equal the aarch64 host's own.
  ExpectSamePayloads(host_->Outside(work + "/plain.o"), host_->Outside(work + "/farm.o"));
  EXPECT_THAT(Keys(DevicePayloads(host_->Outside(work + "/farm.o"))),
              ::testing::Contains(HasSubstr("sm_90")));
  const auto cpus = ShardCpus("arm-cross");
  ASSERT_FALSE(cpus.empty()) << Farmctl({"build", "arm-cross"}).stdout_text;
  for (const auto& [worker, cpu] : cpus) EXPECT_EQ(cpu, "x86_64") << worker;
  CommandResult shown = Farmctl({"build", "arm-cross"});
  EXPECT_THAT(shown.stdout_text, HasSubstr("1 of 1 calls split; none ran plain nvcc"))
      << Output(shown);
  EXPECT_THAT(shown.stdout_text, HasSubstr("(x86_64)")) << Output(shown);
}

TEST_F(Arm64Test, AnEmulatedWorkerRegistersWithItsRootsFacts) {
  StartArmWorker();
  nlohmann::json ws = farm_->ListWorkers();
  nlohmann::json arm;
  for (const auto& w : ws) {
    if (w.value("name", "") == "arm1") arm = w;
  }
  ASSERT_TRUE(arm.is_object()) << ws.dump(2);
  const nlohmann::json& caps = arm;  // `farmctl workers --json` flattens the capabilities
  EXPECT_EQ(caps.value("cpu_arch", ""), "aarch64") << arm.dump(2);
  EXPECT_EQ(caps.value("glibc", ""), "2.36") << arm.dump(2);  // Debian 12's
  ASSERT_TRUE(caps.contains("cuda")) << arm.dump(2);
  EXPECT_EQ(caps["cuda"][0].value("path", ""), "/opt/cuda");
  EXPECT_EQ(caps["cuda"][0].value("release", ""), absl::StrCat("V", kArm64ToolkitRelease));
  bool python311 = false;
  for (const auto& py : caps.value("python", nlohmann::json::array())) {
    python311 |= py.value("version", "") == "3.11";
  }
  EXPECT_TRUE(python311) << arm.dump(2);
  CommandResult table = Farmctl({"workers"});
  EXPECT_THAT(table.stdout_text, HasSubstr("linux/aarch64")) << Output(table);
}

TEST_F(Arm64Test, TheDemosAarch64WheelIsBuiltVerifiedPublishedAndRunsOnArm) {
  StartArmWorker();
  // The build host is emulated: CMake, cudafe++ and g++ run under qemu (minutes, more than
  // the 2 minutes RunFarmctl allows).
  auto submitted = RunCommand({FarmBinary("farmctl"), "--coordinator", farm_->address(),
                               "--token-file", farm_->admin_token_file(), "submit", "demo-0.1.0",
                               "--archs", "7.5;9.0;12.1", "--cpu-arch", "aarch64", "--wait"},
                              absl::Minutes(20));
  ASSERT_TRUE(submitted.ok()) << submitted.status() << ReadFile(arm_worker_->log_path());
  const CommandResult& r = *submitted;
  ASSERT_EQ(r.exit_code, 0) << Output(r) << ReadFile(arm_worker_->log_path());
  EXPECT_THAT(r.stdout_text, HasSubstr("verification passed"));
  EXPECT_THAT(r.stdout_text, HasSubstr("none ran plain nvcc"));
  const std::string id = SubmittedBuildId(r);
  ASSERT_FALSE(id.empty()) << Output(r);
  nlohmann::json build = Json(Farmctl({"--json", "build", id}));
  EXPECT_EQ(build.value("build_host", ""), "arm1") << build.dump(2);
  const std::string filename = build["wheel"].value("filename", "");
  EXPECT_THAT(
      filename,
      ::testing::MatchesRegex(
          "demo_cuda_ext-0\\.1\\.0\\+cu130\\.sm75\\.sm90\\.sm121-py3-none-manylinux_2_[0-9]+_"
          "aarch64\\.whl"));
  // Device compiles ran on both CPU kinds' workers (3 shards, x86 and arm slots).
  std::set<std::string> cpus;
  for (const auto& [worker, cpu] : ShardCpus(id)) cpus.insert(cpu);
  EXPECT_TRUE(cpus.count("x86_64")) << build.dump(2);

  // pip installs it inside the arm64 root from the built-in index and the module runs.
  const std::string index = "http://" + farm_->coordinator().http_address() + "/simple/";
  auto installed = host_->Run(
      {"sh", "-c",
       "python3 -m venv /host/venv && /host/venv/bin/pip install -q --disable-pip-version-check "
       "--index-url " +
           index +
           " demo-cuda-ext==0.1.0+cu130.sm75.sm90.sm121 && /host/venv/bin/python -c "
           "'import platform, demo_cuda_ext as d; print(platform.machine(), d.compiled_archs())'"},
      absl::Minutes(10));
  ASSERT_TRUE(installed.ok()) << installed.status();
  ASSERT_EQ(installed->exit_code, 0) << Output(*installed);
  EXPECT_EQ(installed->stdout_text, "aarch64 ['sm_75', 'sm_90', 'sm_121']\n");
}

TEST_F(Arm64Test, PytorchPlansOnTheMixedFleetOnceTheSubmitRaisesTheGlibcCeiling) {
  StartArmWorker();
  CommandResult refused =
      Farmctl({"submit", "pytorch-2.9.1", "--archs", "7.5;9.0;12.1", "--dry-run"});
  EXPECT_NE(refused.exit_code, 0) << Output(refused);
  EXPECT_THAT(refused.stderr_text, HasSubstr("glibc <= 2.35")) << Output(refused);
  EXPECT_THAT(refused.stderr_text, HasSubstr("arm1: needs glibc <= 2.35, has 2.36"))
      << Output(refused);
  EXPECT_THAT(refused.stderr_text, HasSubstr("--glibc-max")) << Output(refused);

  CommandResult planned = Farmctl({"submit", "pytorch-2.9.1", "--archs", "7.5;9.0;12.1",
                                   "--dry-run", "--glibc-max", "2.36", "--python", "3.11"});
  ASSERT_EQ(planned.exit_code, 0) << Output(planned);
  EXPECT_THAT(planned.stdout_text,
              HasSubstr("build host linux aarch64, glibc <= 2.36 (--glibc-max; the recipe says "
                        "2.35): arm1"))
      << planned.stdout_text;
  // Every shard is eligible on both CPU kinds.
  for (const std::string shard : {"sm_75", "sm_90", "sm_121"}) {
    EXPECT_THAT(planned.stdout_text, ::testing::ContainsRegex(shard + " +arm1, x1, x2"))
        << planned.stdout_text;
  }
}

// A real package on the users' platform (issue 44 item 6): bitsandbytes, which links cuBLAS
// and needs no torch, built on the emulated aarch64 host with its device shards on x86_64
// workers, then on x86_64 from the same checkout. The two wheels' libraries carry the same
// device code per SM and kind, not the same bytes: nvcc compiles device code for the host's
// ABI (`char` is unsigned on aarch64; docs/packages.md), which is why the byte-identity test
// above compares an aarch64 host's split against that host's own nvcc.
TEST_F(Arm64Test, BitsandbytesBuildsOnTheArm64HostAsAManylinuxAarch64Wheel) {
  StartArmWorker();
  // A checkout of its tag: an archive source is unpacked without network, which takes a
  // sandboxed build host, and arm1 runs without one.
  const std::string source = *dir_ / "bnb-source";
  fs::create_directories(source);
  CommandResult unpacked =
      Tool({"tar", "-C", source, "-xzf",
            FARM_SOURCE_DIR "/tests/data/sources/bitsandbytes-0.50.1-src.tar.gz"});
  ASSERT_EQ(unpacked.exit_code, 0) << Output(unpacked);
  std::map<std::string, std::map<std::string, std::string>> payloads;  // by CPU
  for (const std::string cpu : {"aarch64", "x86_64"}) {
    // Debian 12's glibc and Python on every host (the recipe asks 2.35 and 3.10). The
    // emulated build host runs CMake, cicc for its own shard, g++ and pip under qemu.
    auto submitted =
        RunCommand({FarmBinary("farmctl"), "--coordinator", farm_->address(), "--token-file",
                    farm_->admin_token_file(), "submit", "bitsandbytes-0.50.1", "--archs",
                    "7.5;9.0;12.1", "--cpu-arch", cpu, "--glibc-max", "2.36", "--python", "3.11",
                    "--source", "bitsandbytes=" + source + "/bitsandbytes-0.50.1", "--wait"},
                   absl::Minutes(30));
    ASSERT_TRUE(submitted.ok()) << submitted.status();
    const CommandResult& r = *submitted;
    const std::string id = SubmittedBuildId(r);
    ASSERT_EQ(r.exit_code, 0) << Output(r) << FarmView(id) << Farmctl({"logs", id}).stdout_text;
    EXPECT_THAT(r.stdout_text, HasSubstr("verification passed")) << Output(r);
    nlohmann::json build = Json(Farmctl({"--json", "build", id}));
    if (cpu == "aarch64") {
      EXPECT_EQ(build.value("build_host", ""), "arm1") << build.dump(2);
    }
    const std::string filename = build["wheel"].value("filename", "");
    EXPECT_THAT(filename, ::testing::MatchesRegex(
                              "bitsandbytes-0\\.50\\.1\\+cu130\\.sm75\\.sm90\\.sm121-cp311-"
                              "cp311-manylinux_2_[0-9]+_" +
                              cpu + "\\.whl"))
        << build.dump(2);
    CommandResult shown = Farmctl({"build", id});
    EXPECT_THAT(shown.stdout_text, HasSubstr("7 of 7 calls split; none ran plain nvcc"))
        << Output(shown);
    // The device shards went to the x86_64 workers too, whatever the build host's CPU.
    std::set<std::string> cpus;
    for (const auto& [worker, shard_cpu] : ShardCpus(id)) cpus.insert(shard_cpu);
    EXPECT_TRUE(cpus.count("x86_64")) << build.dump(2);
    // Repaired by the field's tool: auditwheel carried what it had to, or found nothing to.
    const std::string log = Farmctl({"logs", id}).stdout_text;
    EXPECT_THAT(log,
                ::testing::ContainsRegex(
                    "wheelfarm: (repaired by auditwheel|auditwheel [0-9.]+: nothing to carry)"))
        << log;

    // The wheel as published, its CUDA library unpacked.
    const std::string wheel = *dir_ / ("bnb-" + cpu + ".whl");
    CommandResult got = Farmctl({"cas", "get", build["wheel"].value("sha256", ""), "-o", wheel});
    ASSERT_EQ(got.exit_code, 0) << Output(got);
    const std::string unzipped = *dir_ / ("bnb-" + cpu);
    CommandResult unzip = Tool({"python3", "-m", "zipfile", "-e", wheel, unzipped});
    ASSERT_EQ(unzip.exit_code, 0) << Output(unzip);
    const std::string library = unzipped + "/bitsandbytes/libbitsandbytes_cuda130.so";
    ASSERT_TRUE(fs::exists(library)) << library;
    CommandResult elf = Tool({"readelf", "-h", library});
    EXPECT_THAT(elf.stdout_text, HasSubstr(cpu == "aarch64" ? "AArch64" : "X86-64")) << Output(elf);
    payloads[cpu] = DevicePayloads(library);
  }
  const std::vector<std::string> keys = Keys(payloads["aarch64"]);
  EXPECT_EQ(keys, Keys(payloads["x86_64"]));
  for (const std::string sm : {"sm_75", "sm_90", "sm_121"}) {
    EXPECT_THAT(keys, ::testing::Contains(HasSubstr("cubin " + sm)))
        << ::testing::PrintToString(keys);
  }
}

// Last in the suite: it adds a sandboxed aarch64 worker, which the build-host choice and the
// plans of the tests above do not expect.
TEST_F(Arm64Test, HostCompilesOfAnArm64BuildHostRunOnlyOnSandboxedArm64Workers) {
  StartArmWorker();  // aarch64 but --no-sandbox: takes no filesystem image action
  const std::string work = "/host/cc";
  fs::create_directories(host_->Outside(work + "/sys"));
  for (const std::string file : {"shapes.cc", "shapes.h", "sys/shapes_sys.h"}) {
    fs::copy_file(FARM_SOURCE_DIR "/tests/data/cc/" + file, host_->Outside(work + "/" + file),
                  fs::copy_options::overwrite_existing);
  }
  auto token = host_->CopyIn(farm_->admin_token_file(), "cc.token");
  ASSERT_TRUE(token.ok()) << token.status();
  const std::vector<std::string> flags = {"-DSHAPES_SCALE=3", "-isystem", "sys", "-O2", "-c",
                                          "shapes.cc"};
  auto farm_cc = [&](const std::string& build_id) {
    std::vector<std::string> argv = {"env",
                                     "-C",
                                     work,
                                     "FARM_COORDINATOR=" + farm_->address(),
                                     "FARM_TOKEN_FILE=" + *token,
                                     "FARM_BUILD_ID=" + build_id,
                                     "FARM_CC_STRICT=1",
                                     "/opt/wheelfarm/bin/farm-cc",
                                     "g++"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"-o", "farm.o"});
    return argv;
  };

  // No aarch64 worker sandboxes its actions: the x86_64 workers cannot run the toolchain and
  // arm1 takes no image action, so strict mode refuses, saying why and what to change.
  auto refused = host_->Run(farm_cc("arm-cc-none"), absl::Minutes(10));
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->exit_code, 3) << Output(*refused);
  EXPECT_THAT(refused->stderr_text,
              HasSubstr("shapes.cc would compile on this host: no online aarch64 worker with a "
                        "sandbox to run this aarch64 toolchain: "))
      << Output(*refused);
  EXPECT_THAT(refused->stderr_text, HasSubstr("x1 needs cpu_arch aarch64, has x86_64"));
  EXPECT_THAT(refused->stderr_text, HasSubstr("arm1 needs a sandboxed worker"));
  EXPECT_THAT(refused->stderr_text,
              HasSubstr("Fix: start farm-worker on an aarch64 machine with bubblewrap installed "
                        "and without --no-sandbox"));
  EXPECT_FALSE(fs::exists(host_->Outside(work + "/farm.o")));
  CommandResult counted = Farmctl({"build", "arm-cc-none"});
  // Counted by its code, the text under it.
  EXPECT_THAT(counted.stdout_text,
              HasSubstr("1 ran locally: no_worker × 1\n"
                        "           no_worker: no online aarch64 worker with a sandbox to run "
                        "this aarch64 toolchain: "))
      << Output(counted);

  // An aarch64 worker that sandboxes its actions (arm64-host.sh --nested-sandbox) takes them.
  absl::Status started = StartEmulatedWorker("arm2", /*sandboxed=*/true);
  ASSERT_TRUE(started.ok()) << started;
  absl::Status online = farm_->WaitUntilOnline({"arm2"}, absl::Minutes(3));
  ASSERT_TRUE(online.ok()) << online;

  auto f = host_->Run(farm_cc("arm-cc"), absl::Minutes(10));
  ASSERT_TRUE(f.ok()) << f.status() << FarmView("arm-cc");
  ASSERT_EQ(f->exit_code, 0) << Output(*f) << FarmView("arm-cc");
  std::vector<std::string> plain = {"env", "-C", work, "g++"};
  plain.insert(plain.end(), flags.begin(), flags.end());
  plain.insert(plain.end(), {"-o", "plain.o"});
  auto p = host_->Run(plain, absl::Minutes(10));
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->exit_code, 0) << Output(*p);
  const std::string farm_object = ReadFile(host_->Outside(work + "/farm.o"));
  ASSERT_FALSE(farm_object.empty());
  EXPECT_TRUE(farm_object == ReadFile(host_->Outside(work + "/plain.o")))
      << "farm.o and plain.o differ";

  // Its one action, the "host" shard, ran on arm2 alone.
  nlohmann::json build = Json(Farmctl({"--json", "build", "arm-cc"}));
  nlohmann::json host_shard;
  for (const auto& s : build.value("shards", nlohmann::json::array())) {
    if (s.value("name", "") == "host") host_shard = s;
  }
  ASSERT_TRUE(host_shard.is_object()) << build.dump(2);
  EXPECT_EQ(host_shard["worker_cpu_archs"], (nlohmann::json{{"arm2", "aarch64"}})) << build.dump(2);
  CommandResult shown = Farmctl({"build", "arm-cc"});
  EXPECT_THAT(shown.stdout_text, HasSubstr("1 compile: 1 on workers; none ran locally"))
      << Output(shown);
  // No x86_64 worker ever laid out an aarch64 toolchain (bitsandbytes' x86_64 build above
  // sent them its own).
  for (const std::string x86 : {"x1", "x2"}) {
    EXPECT_THAT(Aarch64ElfFilesUnder(dir_->path() / x86 / "toolchains"), ::testing::IsEmpty());
  }
}

}  // namespace
}  // namespace farm::testing
