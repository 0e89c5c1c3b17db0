// Retags a real wheel built by the venv's pip, then has pip, `wheel unpack`, Python's
// hashlib and libfarm's verifier check the result.
#include "libfarm/retag/wheel_retag.h"

#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "libfarm/coverage/wheel_verifier.h"
#include "libfarm/elf/mapped_file.h"
#include "libfarm/host/host_probe.h"
#include "libfarm/process/subprocess.h"
#include "libfarm/zip/zip_archive.h"

// Every operator new of this test binary is counted, so a test can see the most heap a call
// held at once (malloc_usable_size: the bytes each block really takes).
namespace {
std::atomic<int64_t> g_heap_live{0};
std::atomic<int64_t> g_heap_peak{0};

void* CountedNew(size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  const int64_t live = g_heap_live += static_cast<int64_t>(malloc_usable_size(p));
  int64_t peak = g_heap_peak.load();
  while (live > peak && !g_heap_peak.compare_exchange_weak(peak, live)) {
  }
  return p;
}

void CountedDelete(void* p) noexcept {
  if (p == nullptr) return;
  g_heap_live -= static_cast<int64_t>(malloc_usable_size(p));
  std::free(p);
}
}  // namespace

void* operator new(size_t size) { return CountedNew(size); }
void* operator new[](size_t size) { return CountedNew(size); }
void operator delete(void* p) noexcept { CountedDelete(p); }
void operator delete[](void* p) noexcept { CountedDelete(p); }
void operator delete(void* p, size_t) noexcept { CountedDelete(p); }
void operator delete[](void* p, size_t) noexcept { CountedDelete(p); }

namespace farm {
namespace {

namespace fs = std::filesystem;

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

CommandResult RunTool(const std::vector<std::string>& argv,
                      const std::vector<std::string>& env = {}) {
  auto r = RunCommand(argv, absl::Seconds(120), env);
  EXPECT_TRUE(r.ok()) << argv[0] << ": " << r.status();
  if (!r.ok()) return CommandResult{};
  EXPECT_EQ(r->exit_code, 0) << absl::StrCat(argv[0], " ", argv.size() > 1 ? argv[1] : "", "\n")
                             << r->stdout_text << r->stderr_text;
  return *r;
}

// Builds tinypkg-1.0, a platform wheel holding a C library that calls pthread_create
// (GLIBC_2.34 on Debian 12), once for every test.
class WheelRetagTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new fs::path(fs::temp_directory_path() / absl::StrCat("retag_test_", ::getpid()));
    fs::remove_all(*root_);
    const fs::path src = *root_ / "src";
    WriteFile(src / "tiny.c",
              "#include <pthread.h>\n"
              "static void* run(void* p) { return p; }\n"
              "int tiny_spawn(void) { pthread_t t; if (pthread_create(&t, 0, run, 0)) return -1;"
              " return pthread_join(t, 0); }\n");
    WriteFile(src / "tinypkg" / "__init__.py",
              "import ctypes, os\n"
              "_lib = ctypes.CDLL(os.path.join(os.path.dirname(__file__), 'libtiny.so'))\n"
              "def spawn():\n    return _lib.tiny_spawn()\n");
    WriteFile(src / "setup.py",
              "from setuptools import setup, Distribution\n"
              "class Bin(Distribution):\n    def has_ext_modules(self):\n        return True\n"
              "setup(name='tinypkg', version='1.0', packages=['tinypkg'],\n"
              "      package_data={'tinypkg': ['libtiny.so']}, distclass=Bin)\n");
    RunTool({"cc", "-shared", "-fPIC", "-O2", "-o", (src / "tinypkg" / "libtiny.so").string(),
             (src / "tiny.c").string(), "-pthread"});
    RunTool({FARM_TOOLS_PYTHON, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
             "-w", (*root_ / "dist").string(), src.string()});
    for (const auto& entry : fs::directory_iterator(*root_ / "dist")) {
      wheel_ = new std::string(entry.path().string());
    }
  }
  static void TearDownTestSuite() {
    fs::remove_all(*root_);
    delete root_;
    delete wheel_;
  }

  RetagOptions Options(const std::string& out) {
    fs::create_directories(out);
    // The archs name the label only: the test's wheel holds no device code.
    return RetagOptions{
        {13, 0}, ProbeHost().cpu_arch, DottedVersion{{2, 36}}, out, *ParseArchList("9.0;7.5")};
  }

  static fs::path* root_;
  static std::string* wheel_;
};
fs::path* WheelRetagTest::root_ = nullptr;
std::string* WheelRetagTest::wheel_ = nullptr;

TEST_F(WheelRetagTest, ProducesAWheelPipAndTheVerifierAccept) {
  ASSERT_NE(wheel_, nullptr) << "pip wheel produced nothing";
  const std::string cpu = ProbeHost().cpu_arch;
  const std::string out = (*root_ / "retagged").string();
  auto result = RetagWheel(*wheel_, Options(out));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->version, "1.0+cu130.sm75.sm90");
  EXPECT_EQ(result->platform_tag, absl::StrCat("manylinux_2_34_", cpu));
  EXPECT_EQ(result->floor_member, "tinypkg/libtiny.so");
  EXPECT_EQ(result->filename,
            absl::StrCat("tinypkg-1.0+cu130.sm75.sm90-cp311-cp311-manylinux_2_34_", cpu, ".whl"));
  ASSERT_TRUE(fs::exists(result->path));

  // Every RECORD line hashes right (checked by Python, not by us) and names every member.
  RunTool({FARM_TOOLS_PYTHON, "-c",
           "import base64, csv, hashlib, io, sys, zipfile\n"
           "z = zipfile.ZipFile(sys.argv[1])\n"
           "names = set(z.namelist())\n"
           "record = [n for n in names if n.endswith('.dist-info/RECORD')]\n"
           "assert record == ['tinypkg-1.0+cu130.sm75.sm90.dist-info/RECORD'], record\n"
           "rows = list(csv.reader(io.StringIO(z.read(record[0]).decode())))\n"
           "assert {r[0] for r in rows} == names, (sorted(names), rows)\n"
           "for path, h, size in rows:\n"
           "    if path == record[0]: assert h == '' and size == ''; continue\n"
           "    data = z.read(path)\n"
           "    want = 'sha256=' + "
           "base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()\n"
           "    assert h == want and int(size) == len(data), path\n"
           "meta = z.read('tinypkg-1.0+cu130.sm75.sm90.dist-info/METADATA').decode()\n"
           "assert 'Version: 1.0+cu130.sm75.sm90\\n' in meta, meta\n"
           "wheel = z.read('tinypkg-1.0+cu130.sm75.sm90.dist-info/WHEEL').decode()\n"
           "assert 'Tag: cp311-cp311-manylinux_2_34_' in wheel and 'linux_' + sys.argv[2] not in "
           "wheel.replace('manylinux_2_34_', ''), wheel\n",
           result->path, cpu});

  // `wheel unpack` checks RECORD too; pip installs it and the library loads.
  RunTool({FARM_TOOLS_PYTHON, "-m", "wheel", "unpack", "-d", (*root_ / "unpacked").string(),
           result->path});
  EXPECT_TRUE(
      fs::exists(*root_ / "unpacked" / "tinypkg-1.0+cu130.sm75.sm90" / "tinypkg" / "libtiny.so"));
  const std::string target = (*root_ / "site").string();
  RunTool({FARM_TOOLS_PYTHON, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target",
           target, result->path});
  CommandResult imported = RunTool(
      {FARM_TOOLS_PYTHON, "-c",
       "import importlib.metadata as m, tinypkg; print(m.version('tinypkg'), tinypkg.spawn())"},
      {absl::StrCat("PYTHONPATH=", target)});
  EXPECT_EQ(imported.stdout_text, "1.0+cu130.sm75.sm90 0\n");

  auto report = VerifyWheel(result->path, VerifyPolicy{{}, DottedVersion{{2, 35}}});
  ASSERT_TRUE(report.ok()) << report.status();
  for (const VerifyFinding& f : report->failures) {
    ADD_FAILURE() << f.check << " " << f.path << ": " << f.message;
  }
}

TEST_F(WheelRetagTest, RefusesAGlibcFloorAboveTheCeiling) {
  ASSERT_NE(wheel_, nullptr);
  RetagOptions options = Options((*root_ / "low").string());
  options.glibc_ceiling = DottedVersion{{2, 28}};
  auto result = RetagWheel(*wheel_, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(result.status().message().find("tinypkg/libtiny.so needs glibc 2.34, above the "
                                           "recipe's ceiling 2.28"),
            std::string::npos)
      << result.status();
  EXPECT_TRUE(fs::is_empty(*root_ / "low"));
}

// The build host's repair step tags the wheel with auditwheel's policy, which can be above the
// GLIBC floor (libstdc++'s symbol versions): that tag is kept, and `auditwheel show` agrees.
TEST_F(WheelRetagTest, KeepsTheRepairsManylinuxTagAboveTheFloorButNeverGoesBelowIt) {
  ASSERT_NE(wheel_, nullptr);
  const std::string cpu = ProbeHost().cpu_arch;
  auto tagged = [&](const std::string& platform) {
    const fs::path dir = *root_ / ("tagged-" + platform);
    fs::create_directories(dir);
    std::string name = fs::path(*wheel_).filename().string();
    name = name.substr(0, name.rfind('-') + 1) + platform + ".whl";
    fs::copy_file(*wheel_, dir / name, fs::copy_options::overwrite_existing);
    return (dir / name).string();
  };
  auto raised = RetagWheel(tagged(absl::StrCat("manylinux_2_35_", cpu)),
                           Options((*root_ / "raised").string()));
  ASSERT_TRUE(raised.ok()) << raised.status();
  EXPECT_EQ(raised->platform_tag, absl::StrCat("manylinux_2_35_", cpu));
  EXPECT_EQ(raised->floor_member,
            absl::StrCat("the wheel's manylinux_2_35_", cpu,
                         " tag (from the build host's auditwheel repair: the symbol versions of "
                         "its libraries, libstdc++'s and libgcc's included)"));
  // A tag below what the libraries' GLIBC versions need is not believed.
  auto kept =
      RetagWheel(tagged(absl::StrCat("manylinux2014_", cpu)), Options((*root_ / "kept").string()));
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->platform_tag, absl::StrCat("manylinux_2_34_", cpu));
  EXPECT_EQ(kept->floor_member, "tinypkg/libtiny.so");
  // Above the ceiling, refused naming the tag.
  auto refused = RetagWheel(tagged(absl::StrCat("manylinux_2_39_", cpu)),
                            Options((*root_ / "refused").string()));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(absl::StrCat("the wheel's manylinux_2_39_", cpu,
                                                         " tag (from the build host's auditwheel")),
            std::string::npos)
      << refused.status();
  EXPECT_NE(refused.status().message().find("needs glibc 2.39, above the recipe's ceiling 2.36"),
            std::string::npos)
      << refused.status();
}

TEST(ManylinuxTagFloorTest, TheMostCompatibleTagOfTheArchCountsLegacyAliasesIncluded) {
  EXPECT_EQ(ManylinuxTagFloor({"manylinux_2_34_x86_64"}, "x86_64"), DottedVersion({{2, 34}}));
  EXPECT_EQ(
      ManylinuxTagFloor({"manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_28_x86_64"},
                        "x86_64"),
      DottedVersion({{2, 17}}));
  EXPECT_EQ(ManylinuxTagFloor({"manylinux1_x86_64"}, "x86_64"), DottedVersion({{2, 5}}));
  EXPECT_EQ(ManylinuxTagFloor({"manylinux2010_x86_64"}, "x86_64"), DottedVersion({{2, 12}}));
  EXPECT_EQ(ManylinuxTagFloor({"linux_x86_64"}, "x86_64"), std::nullopt);
  EXPECT_EQ(ManylinuxTagFloor({"manylinux_2_35_aarch64"}, "x86_64"), std::nullopt);
  EXPECT_EQ(ManylinuxTagFloor({"musllinux_1_2_x86_64", "any"}, "x86_64"), std::nullopt);
  EXPECT_EQ(ManylinuxTagFloor({"manylinux_2_x_x86_64", "manylinux_2_35_1_x86_64"}, "x86_64"),
            std::nullopt);
}

TEST_F(WheelRetagTest, RefusesALibraryForAnotherCpu) {
  ASSERT_NE(wheel_, nullptr);
  RetagOptions options = Options((*root_ / "other").string());
  options.cpu_arch = ProbeHost().cpu_arch == "aarch64" ? "x86_64" : "aarch64";
  auto result = RetagWheel(*wheel_, options);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("wrong CPU architecture"), std::string::npos)
      << result.status();
}

// A wheel is a build's output, so retag must not hold what it holds: here two 24 MiB members
// (one stored, one deflated) beside the library. Retag streams each once and copies it as it
// is stored; at most one piece (256 KiB) and the small library are in memory at a time.
TEST_F(WheelRetagTest, HoldsNoMemberButTheLibraryItInspects) {
  ASSERT_NE(wheel_, nullptr);
  const fs::path big_dir = *root_ / "big";
  fs::create_directories(big_dir);
  const std::string big = (big_dir / fs::path(*wheel_).filename()).string();
  RunTool({FARM_TOOLS_PYTHON, "-c",
           "import base64, hashlib, sys, zipfile\n"
           "def h(b): return 'sha256=' + "
           "base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b'=').decode()\n"
           "with zipfile.ZipFile(sys.argv[1]) as s, zipfile.ZipFile(sys.argv[2], 'w') as d:\n"
           "    record = [n for n in s.namelist() if n.endswith('.dist-info/RECORD')][0]\n"
           "    rows = []\n"
           "    for name, data, method in [\n"
           "            ('tinypkg/stored.bin', bytes(24 << 20), zipfile.ZIP_STORED),\n"
           "            ('tinypkg/deflated.bin', b'\\1' * (24 << 20), zipfile.ZIP_DEFLATED)]:\n"
           "        d.writestr(name, data, method)\n"
           "        rows.append(f'{name},{h(data)},{len(data)}')\n"
           "    for i in s.infolist():\n"
           "        if i.filename != record:\n"
           "            data = s.read(i)\n"
           "            d.writestr(i, data)\n"
           "            rows.append(f'{i.filename},{h(data)},{len(data)}')\n"
           "    d.writestr(record, '\\n'.join(rows + [record + ',,']) + '\\n')\n",
           *wheel_, big});

  const int64_t before = g_heap_live.load();
  g_heap_peak = before;
  auto result = RetagWheel(big, Options((*root_ / "big-out").string()));
  const int64_t held = g_heap_peak.load() - before;
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_LT(held, int64_t{4} << 20) << "retag held " << held << " bytes at once";

  // The large members were copied as they were stored, and the result still verifies.
  auto in_file = MappedFile::Open(big);
  auto out_file = MappedFile::Open(result->path);
  ASSERT_TRUE(in_file.ok() && out_file.ok());
  auto in = ZipArchive::Open(in_file->bytes());
  auto out = ZipArchive::Open(out_file->bytes());
  ASSERT_TRUE(in.ok() && out.ok());
  for (const char* name : {"tinypkg/stored.bin", "tinypkg/deflated.bin"}) {
    const ZipEntry* a = in->Find(name);
    const ZipEntry* b = out->Find(name);
    ASSERT_TRUE(a != nullptr && b != nullptr) << name;
    EXPECT_EQ(a->method, b->method) << name;
    EXPECT_TRUE(AsChars(in->RawBytes(*a)) == AsChars(out->RawBytes(*b))) << name;
  }
  auto report = VerifyWheel(result->path, VerifyPolicy{{}, DottedVersion{{2, 35}}});
  ASSERT_TRUE(report.ok()) << report.status();
  for (const VerifyFinding& f : report->failures) {
    ADD_FAILURE() << f.check << " " << f.path << ": " << f.message;
  }
}

TEST(WheelRetagVersionTest, LocalLabelIsReplaced) {
  EXPECT_EQ(WithCudaLocalVersion("2.9.1", {13, 0}), "2.9.1+cu130");
  EXPECT_EQ(WithCudaLocalVersion("2.9.1a0+gitd38164a", {12, 6}), "2.9.1a0+cu126");
  EXPECT_EQ(WithCudaLocalVersion("1.0+cu130", {13, 0}), "1.0+cu130");
}

}  // namespace
}  // namespace farm
