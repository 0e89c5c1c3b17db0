#include "libfarm/testing/nvcc_fixtures.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/subprocess.h"

#ifndef FARM_TEST_FIXTURE_DIR
#error "FARM_TEST_FIXTURE_DIR must name a directory in the build tree"
#endif

namespace farm::testing {
namespace {

namespace fs = std::filesystem;

// Bump when the fixture recipes change, so stale artifacts are rebuilt.
constexpr char kFixtureVersion[] = "fixtures-v3";

std::string FindNvcc() {
  if (const std::string env = GetEnv("NVCC"); !env.empty() && fs::exists(env)) return env;
  for (const char* candidate : {"/usr/local/cuda/bin/nvcc"}) {
    if (fs::exists(candidate)) return candidate;
  }
  auto which = RunCommand({"sh", "-c", "command -v nvcc"});
  if (which.ok() && which->exit_code == 0 && !which->stdout_text.empty()) {
    std::string path = which->stdout_text;
    while (!path.empty() && path.back() == '\n') path.pop_back();
    return path;
  }
  return "";
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string Kernel(const std::string& name) {
  return absl::StrCat("__global__ void ", name, "(float* x) { x[threadIdx.x] *= 2.0f; }\n",
                      "void launch_", name, "(float* x) { ", name, "<<<1, 32>>>(x); }\n");
}

std::vector<std::string> Gencode(const std::string& arch, const std::string& code) {
  return {"-gencode", absl::StrCat("arch=", arch, ",code=", code)};
}

// Runs up to two commands at a time (the machine has two cores); the first failure wins.
absl::Status RunAll(const std::vector<std::vector<std::string>>& jobs, const std::string& dir) {
  size_t next = 0;
  std::vector<std::pair<Subprocess, size_t>> running;
  absl::Status result;
  auto reap = [&](size_t index) {
    auto& [proc, job] = running[index];
    std::optional<int> code;
    while (!(code = proc.Wait(absl::Seconds(1)))) {
    }
    if (*code != 0 && result.ok()) {
      std::ifstream log(absl::StrCat(dir, "/job", job, ".log"));
      std::stringstream text;
      text << log.rdbuf();
      result =
          absl::InternalError(absl::StrCat("fixture command failed (exit ", *code,
                                           "): ", absl::StrJoin(jobs[job], " "), "\n", text.str()));
    }
    running.erase(running.begin() + static_cast<long>(index));
  };
  while (next < jobs.size() || !running.empty()) {
    if (next < jobs.size() && running.size() < 2) {
      SpawnOptions options;
      options.log_path = absl::StrCat(dir, "/job", next, ".log");
      auto proc = Subprocess::Spawn(jobs[next], options);
      if (!proc.ok()) return proc.status();
      running.emplace_back(*std::move(proc), next);
      ++next;
      continue;
    }
    reap(0);
  }
  return result;
}

absl::Status Build(const NvccFixtures& f, const std::string& nvcc) {
  const std::string& d = f.dir;
  for (const char* name :
       {"sweep", "variants", "compress", "rdc", "lto", "tu_a", "tu_b", "tu_c", "cubin", "fatbin"}) {
    WriteFile(absl::StrCat(d, "/", name, ".cu"), Kernel(name));
  }
  WriteFile(d + "/pthread_user.c",
            "#include <pthread.h>\nstatic void* run(void* a) { return a; }\n"
            "int start(void) { pthread_t t; return pthread_create(&t, 0, run, 0); }\n");
  WriteFile(d + "/arc4random_user.c",
            "#include <stdlib.h>\nunsigned draw(void) { return arc4random(); }\n");

  auto nvcc_c = [&](const std::string& source, const std::string& out,
                    std::vector<std::string> extra) {
    std::vector<std::string> argv = {nvcc, "-c", "-Xcompiler", "-fPIC"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {absl::StrCat(d, "/", source), "-o", out});
    return argv;
  };
  auto join = [](std::initializer_list<std::vector<std::string>> parts) {
    std::vector<std::string> out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
  };
  std::vector<std::string> sweep;
  for (int sm : {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121}) {
    auto g = Gencode(absl::StrCat("compute_", sm), absl::StrCat("sm_", sm));
    sweep.insert(sweep.end(), g.begin(), g.end());
  }
  auto ptx121 = Gencode("compute_121", "compute_121");
  sweep.insert(sweep.end(), ptx121.begin(), ptx121.end());
  std::vector<std::string> variants;
  for (const char* v : {"90a", "100a", "100f", "103f", "110a", "120f", "121a"}) {
    auto g = Gencode(absl::StrCat("compute_", v), absl::StrCat("sm_", v));
    variants.insert(variants.end(), g.begin(), g.end());
  }
  for (const char* v : {"90a", "120f"}) {
    auto g = Gencode(absl::StrCat("compute_", v), absl::StrCat("compute_", v));
    variants.insert(variants.end(), g.begin(), g.end());
  }
  const auto sm90_ptx = join({Gencode("compute_90", "sm_90"), Gencode("compute_90", "compute_90")});
  const auto sm75_90 = join({Gencode("compute_75", "sm_75"), Gencode("compute_90", "sm_90")});

  std::vector<std::vector<std::string>> compiles = {
      nvcc_c("sweep.cu", f.sweep_object, sweep),
      nvcc_c("variants.cu", f.variants_object, variants),
      nvcc_c("rdc.cu", f.rdc_object,
             join({{"-rdc=true"}, sm75_90, Gencode("compute_90", "compute_90")})),
      nvcc_c("lto.cu", f.lto_object, join({{"-rdc=true"}, Gencode("compute_90", "lto_90")})),
      nvcc_c("tu_a.cu", f.tu_a_object, sm75_90),
      nvcc_c("tu_b.cu", f.tu_b_object, sm75_90),
      nvcc_c("tu_c.cu", f.tu_c_object, Gencode("compute_75", "sm_75")),
      nvcc_c("compress.cu", f.compress_all_lz4_object,
             join({{"-Xfatbin=-compress-all", "--compress-mode=speed"}, sm90_ptx})),
      {nvcc, "-cubin", "-arch=sm_90a", d + "/cubin.cu", "-o", f.bare_cubin},
      {nvcc, "-fatbin", "-gencode", "arch=compute_80,code=[sm_80,compute_80]", d + "/fatbin.cu",
       "-o", f.bare_fatbin},
      {"gcc", "-shared", "-fPIC", d + "/pthread_user.c", "-o", f.pthread_library, "-lpthread"},
      {"gcc", "-shared", "-fPIC", d + "/arc4random_user.c", "-o", f.arc4random_library},
  };
  for (const auto& [mode, object] : f.compress_objects) {
    std::vector<std::string> extra = sm90_ptx;
    if (mode != "absent") extra.insert(extra.begin(), absl::StrCat("--compress-mode=", mode));
    compiles.push_back(nvcc_c("compress.cu", object, extra));
  }
  if (absl::Status s = RunAll(compiles, d); !s.ok()) return s;
  // nvcc -shared device-links with cudadevrt: that adds the stub container verify must skip.
  return RunAll(
      {
          {nvcc, "-shared", f.tu_a_object, f.tu_b_object, "-o", f.complete_library},
          {nvcc, "-shared", f.tu_a_object, f.tu_b_object, f.tu_c_object, "-o", f.multi_tu_library},
          join({{nvcc, "-shared"}, sm75_90, {f.rdc_object, "-o", f.rdc_library}}),
          {"ar", "rcs", f.static_archive, f.tu_a_object, f.tu_c_object},
      },
      d);
}

absl::StatusOr<NvccFixtures> BuildOrReuse() {
  NvccFixtures f;
  f.dir = FARM_TEST_FIXTURE_DIR;
  std::error_code ec;
  fs::create_directories(f.dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", f.dir, ": ", ec.message()));
  const std::string& d = f.dir;
  f.sweep_object = d + "/sweep.o";
  f.variants_object = d + "/variants.o";
  for (const char* mode : {"none", "speed", "balance", "size", "default", "absent"}) {
    f.compress_objects[mode] = absl::StrCat(d, "/compress_", mode, ".o");
  }
  f.compress_all_lz4_object = d + "/compress_all_speed.o";
  f.rdc_object = d + "/rdc.o";
  f.rdc_library = d + "/librdc.so";
  f.lto_object = d + "/lto.o";
  f.tu_a_object = d + "/tu_a.o";
  f.tu_b_object = d + "/tu_b.o";
  f.tu_c_object = d + "/tu_c.o";
  f.complete_library = d + "/libcomplete.so";
  f.multi_tu_library = d + "/libmulti.so";
  f.static_archive = d + "/libtu.a";
  f.bare_cubin = d + "/k.cubin";
  f.bare_fatbin = d + "/k.fatbin";
  f.pthread_library = d + "/libpthread_user.so";
  f.arc4random_library = d + "/libarc4random_user.so";

  const std::string nvcc = FindNvcc();
  if (nvcc.empty()) {
    return absl::FailedPreconditionError(
        "nvcc not found (tried $NVCC, /usr/local/cuda/bin/nvcc, PATH): these tests need the "
        "CUDA toolkit to build real device code; install it (scripts/install-deps.sh)");
  }
  const std::string lock_path = d + "/.lock";
  const int lock = ::open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock < 0) return absl::InternalError(absl::StrCat("cannot open ", lock_path));
  ::flock(lock, LOCK_EX);
  const std::string stamp_path = d + "/.stamp";
  const std::string stamp = absl::StrCat(kFixtureVersion, " ", nvcc);
  std::ifstream stamp_in(stamp_path);
  std::string existing;
  std::getline(stamp_in, existing);
  absl::Status status;
  if (existing != stamp) {
    status = Build(f, nvcc);
    if (status.ok()) WriteFile(stamp_path, stamp + "\n");
  }
  ::flock(lock, LOCK_UN);
  ::close(lock);
  if (!status.ok()) return status;
  return f;
}

constexpr char kWheelScript[] = R"PY(
import base64, hashlib, json, sys, zipfile
spec = json.load(open(sys.argv[1]))
def content(m):
    return open(m["source_path"], "rb").read() if m["source_path"] else m["text"].encode()
members = [(m["name"], content(m)) for m in spec["members"]]
wheel = "Wheel-Version: 1.0\nGenerator: wheelfarm-test\nRoot-Is-Purelib: false\n"
wheel += "".join("Tag: %s\n" % t for t in spec["tags"])
members.append((spec["dist_info"] + "/WHEEL", wheel.encode()))
members.append((spec["dist_info"] + "/METADATA",
                b"Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n"))
record = ""
for name, data in members:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record += "%s,sha256=%s,%d\n" % (name, digest, len(data))
record += spec["dist_info"] + "/RECORD,,\n"
members.append((spec["dist_info"] + "/RECORD", record.encode()))
with zipfile.ZipFile(spec["path"], "w", zipfile.ZIP_DEFLATED) as z:
    for name, data in members:
        if name == spec["tamper_member"]:
            data = spec["tamper_text"].encode()
        z.writestr(name, data)
)PY";

}  // namespace

absl::StatusOr<const NvccFixtures*> GetNvccFixtures() {
  static const absl::StatusOr<NvccFixtures>* fixtures =
      new absl::StatusOr<NvccFixtures>(BuildOrReuse());
  if (!fixtures->ok()) return fixtures->status();
  return &**fixtures;
}

absl::Status BuildWheel(const WheelSpec& spec) {
  nlohmann::json json = {{"path", spec.path},
                         {"dist_info", spec.dist_info},
                         {"tags", spec.tags},
                         {"tamper_member", spec.tamper_member},
                         {"tamper_text", spec.tamper_text}};
  json["members"] = nlohmann::json::array();
  for (const WheelMember& m : spec.members) {
    json["members"].push_back({{"name", m.name}, {"source_path", m.source_path}, {"text", m.text}});
  }
  const std::string spec_path = spec.path + ".json";
  const std::string script_path = spec.path + ".py";
  WriteFile(spec_path, json.dump());
  WriteFile(script_path, kWheelScript);
  auto result = RunCommand({"python3", script_path, spec_path});
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return absl::InternalError(
        absl::StrCat("building ", spec.path, " failed: ", result->stderr_text));
  }
  return absl::OkStatus();
}

}  // namespace farm::testing
