#include "libfarm/zip/zip_extract.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "libfarm/process/subprocess.h"

namespace farm {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ZipExtractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("farm_zip_extract_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A zip written by Python's zipfile: `script` sees `z` (the open ZipFile) and `zipfile`.
  std::string PythonZip(const std::string& name, const std::string& script) {
    const std::string path = (dir_ / name).string();
    auto r = RunCommand({"python3", "-c",
                         "import sys, zipfile, warnings\nwarnings.simplefilter('ignore')\n"
                         "with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n" +
                             script,
                         path});
    EXPECT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->stderr_text : r.status().ToString());
    return path;
  }
  std::string Read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
};

TEST_F(ZipExtractTest, UnpacksOneFolderWithoutItsPrefix) {
  const std::string wheel =
      PythonZip("w.whl",
                "  z.writestr('nvidia/cu13/bin/nvcc', 'ELF')\n"
                "  z.writestr('nvidia/cu13/include/crt/host_config.h', 'h')\n"
                "  z.writestr('nvidia/cu13/nvvm/libdevice/', '')\n"
                "  z.writestr('nvidia_cuda_nvcc-13.0.88.dist-info/RECORD', '')\n"
                "  z.writestr('nvidia/other/x', 'x')\n");
  const fs::path dest = dir_ / "root";
  auto written = ExtractZipFolder(wheel, "nvidia/cu13/", dest.string());
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_THAT(*written, ElementsAre("bin/nvcc", "include/crt/host_config.h"));
  EXPECT_EQ(Read(dest / "bin/nvcc"), "ELF");
  EXPECT_TRUE(fs::is_directory(dest / "nvvm/libdevice"));
  EXPECT_FALSE(fs::exists(dest / "nvidia_cuda_nvcc-13.0.88.dist-info"));
  EXPECT_FALSE(fs::exists(dest / "x"));
  struct stat st {};
  ASSERT_EQ(::stat((dest / "bin/nvcc").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u) << "the caller decides what is executable";
}

TEST_F(ZipExtractTest, TwoArchivesNeverOverwriteEachOther) {
  const std::string a = PythonZip("a.whl", "  z.writestr('p/include/x.h', 'a')\n");
  const std::string b = PythonZip("b.whl", "  z.writestr('p/include/x.h', 'b')\n");
  const std::string dest = (dir_ / "root").string();
  ASSERT_TRUE(ExtractZipFolder(a, "p/", dest).ok());
  auto second = ExtractZipFolder(b, "p/", dest);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(), HasSubstr("include/x.h"));
  EXPECT_EQ(Read(dest + "/include/x.h"), "a");
}

TEST_F(ZipExtractTest, RefusesHostileArchivesBeforeWritingAnything) {
  struct Case {
    const char* name;
    const char* script;
    const char* why;
  };
  const Case cases[] = {
      {"dotdot.whl", "  z.writestr('p/ok', 'x')\n  z.writestr('p/../../escape', 'x')\n",
       "leaves the install directory"},
      {"absolute.whl", "  z.writestr('p/ok', 'x')\n  z.writestr('/p/abs', 'x')\n", ""},
      {"symlink.whl",
       "  z.writestr('p/ok', 'x')\n"
       "  i = zipfile.ZipInfo('p/link')\n  i.create_system = 3\n"
       "  i.external_attr = 0o120777 << 16\n  z.writestr(i, '/etc/passwd')\n",
       "is a symlink"},
      {"big.whl", "  z.writestr('p/ok', 'x')\n  z.writestr('p/big', b'\\0' * 4096)\n",
       "over the limit of 1024"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string zip = PythonZip(c.name, c.script);
    const fs::path dest = dir_ / (std::string(c.name) + ".root");
    // A member outside the prefix is refused too when it is unsafe: "" selects everything.
    auto r = ExtractZipFolder(zip, std::string(c.name) == "absolute.whl" ? "" : "p/", dest.string(),
                              {.max_member_bytes = 1024});
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(), HasSubstr(c.why));
    EXPECT_FALSE(fs::exists(dest / "ok")) << "nothing is written from a refused archive";
  }
}

}  // namespace
}  // namespace farm
