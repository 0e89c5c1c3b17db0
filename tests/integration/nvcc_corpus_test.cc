// The nvcc command lines of real projects (tests/data/nvcc_corpus.txt: PyTorch, its
// cpp_extension, flash-attn, xformers, vLLM, bitsandbytes, DeepSpeed, ...), each compiled
// through farm-nvcc on a real farm (coordinator + 2 workers) and with plain nvcc: every call
// must split (no fallback) and give byte-identical device code and the same dependency file.
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/nvcc/shell_words.h"
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

std::string CorpusFile() { return std::string(FARM_SOURCE_DIR) + "/tests/data/nvcc_corpus.txt"; }

struct CorpusCase {
  int line = 0;
  std::string project;  // "pytorch 2.9.1"
  std::string where;    // the build file the flags come from
  std::string flags;    // shell words with {src}, {out} and {dir}
  std::string error;    // set when the corpus itself could not be read
};

// gtest lists each case by this, and ctest shows it.
void PrintTo(const CorpusCase& c, std::ostream* os) {
  *os << c.project << " (" << CorpusFile() << ":" << c.line << ")";
}

// One case per non-comment line: "PROJECT VERSION | WHERE | FLAGS".
std::vector<CorpusCase> LoadCorpus() {
  std::ifstream in(CorpusFile());
  if (!in) return {CorpusCase{.error = "cannot read " + CorpusFile()}};
  std::vector<CorpusCase> cases;
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    absl::string_view line = absl::StripAsciiWhitespace(text);
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> fields = absl::StrSplit(line, absl::MaxSplits(" | ", 2));
    CorpusCase c{.line = n};
    if (fields.size() != 3) {
      c.error = absl::StrCat(CorpusFile(), ":", n, ": not 'PROJECT VERSION | WHERE | FLAGS'");
    } else {
      c.project = fields[0];
      c.where = fields[1];
      c.flags = fields[2];
    }
    cases.push_back(std::move(c));
  }
  if (cases.empty()) return {CorpusCase{.error = CorpusFile() + " holds no case"}};
  return cases;
}

std::string CaseName(const ::testing::TestParamInfo<CorpusCase>& info) {
  std::string name = absl::StrCat("L", info.param.line, "_", info.param.project);
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

class NvccCorpusTest : public SuiteFixture<NvccCorpusTest, ::testing::TestWithParam<CorpusCase>> {
 protected:
  static void SetUpSuite() {
    dir_ = std::make_unique<TempDir>("nvcc-corpus-test");
    auto farm = TestFarm::Start(dir_->path());
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }
  static void TearDownSuite() {
    farm_.reset();
    dir_.reset();
  }

  // The case's words with its placeholders filled in, or a test failure.
  static std::vector<std::string> Words(const CorpusCase& c, const std::string& work,
                                        const std::string& object) {
    const std::string text = absl::StrReplaceAll(
        c.flags, {{"{src}", work + "/corpus_kernel.cu"}, {"{out}", object}, {"{dir}", work}});
    auto words = SplitShellWords(text);
    EXPECT_TRUE(words.ok()) << words.status();
    return words.ok() ? *words : std::vector<std::string>{};
  }

  CommandResult Run(std::vector<std::string> argv, const std::string& cwd, int line) {
    argv.insert(argv.begin(), {"env", "-C", cwd});
    std::vector<std::string> env = farm_->ClientEnvironment();
    env.insert(env.end(),
               {"FARM_NVCC_LOG=debug", absl::StrCat("FARM_BUILD_ID=nvcc-corpus-", line)});
    auto r = RunCommand(argv, absl::Minutes(5), env);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<TestFarm> farm_;
};

TEST_P(NvccCorpusTest, SplitsWithNoFallbackAndTheSameDeviceCode) {
  const CorpusCase& c = GetParam();
  ASSERT_TRUE(c.error.empty()) << c.error;
  SCOPED_TRACE(absl::StrCat(c.project, " | ", c.where, " (", CorpusFile(), ":", c.line, ")"));
  const std::string work = *dir_ / absl::StrCat("case-", c.line);
  fs::create_directories(work);
  fs::copy_file(std::string(FARM_SOURCE_DIR) + "/tests/data/cuda/corpus_kernel.cu",
                work + "/corpus_kernel.cu", fs::copy_options::overwrite_existing);

  std::vector<std::string> plain = {kNvcc};
  for (std::string& w : Words(c, work, work + "/plain.o")) plain.push_back(std::move(w));
  CommandResult p = Run(plain, work, c.line);
  ASSERT_EQ(p.exit_code, 0) << "plain nvcc failed:\n" << p.stderr_text;

  std::vector<std::string> farm = {FarmBinary("farm-nvcc"), kNvcc};
  for (std::string& w : Words(c, work, work + "/farm.o")) farm.push_back(std::move(w));
  CommandResult f = Run(farm, work, c.line);
  ASSERT_EQ(f.exit_code, 0) << f.stderr_text;
  EXPECT_THAT(f.stderr_text, Not(HasSubstr("running plain nvcc"))) << f.stderr_text;
  // One debug line per device compile: "farm-nvcc: sm_90: ran on w1" or "...: action cache".
  static const std::regex kShardLine(R"(farm-nvcc: (sm|compute)_\d+[af]?: (ran on|action cache))");
  EXPECT_TRUE(std::regex_search(f.stderr_text, kShardLine)) << f.stderr_text;
  EXPECT_EQ(f.stdout_text, p.stdout_text);

  ExpectSamePayloads(work + "/plain.o", work + "/farm.o");

  // Where the flags ask for a dependency file, farm-nvcc's must be nvcc's (object renamed).
  for (const std::string& dep : {std::string(".d"), std::string(".o.d")}) {
    const std::string plain_dep = work + "/plain" + dep;
    if (!fs::exists(plain_dep)) continue;
    const std::string farm_dep = work + "/farm" + dep;
    ASSERT_TRUE(fs::exists(farm_dep)) << farm_dep;
    EXPECT_EQ(absl::StrReplaceAll(ReadFile(farm_dep), {{"/farm.o", "/plain.o"}}),
              ReadFile(plain_dep));
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, NvccCorpusTest, ::testing::ValuesIn(LoadCorpus()), CaseName);

}  // namespace
}  // namespace farm::testing
