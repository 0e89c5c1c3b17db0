#include "libfarm/coverage/binary_inspector.h"

#include <gtest/gtest.h>

#include "absl/strings/str_join.h"
#include "libfarm/coverage/report_format.h"
#include "libfarm/testing/nvcc_fixtures.h"

namespace farm {
namespace {

class BinaryInspectorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto f = testing::GetNvccFixtures();
    if (f.ok())
      fixtures_ = *f;
    else
      error_ = std::string(f.status().message());
  }
  void SetUp() override { ASSERT_NE(fixtures_, nullptr) << error_; }

  // "container: entry entry | container: ..." for one file.
  static std::string Listing(const InspectedFile& file) {
    std::vector<std::string> containers;
    for (const InspectedContainer& c : file.containers) {
      std::vector<std::string> entries;
      for (const InspectedEntry& e : c.entries) {
        entries.push_back(absl::StrCat(FatbinEntryKindName(e.kind), ":", e.arch,
                                       e.compression == PayloadCompression::kNone
                                           ? ""
                                           : ":" + PayloadCompressionName(e.compression)));
      }
      containers.push_back(
          absl::StrCat(ContainerOriginName(c.origin), "[", absl::StrJoin(entries, " "), "]"));
    }
    return absl::StrJoin(containers, " ");
  }

  static const testing::NvccFixtures* fixtures_;
  static std::string error_;
};

const testing::NvccFixtures* BinaryInspectorTest::fixtures_ = nullptr;
std::string BinaryInspectorTest::error_;

TEST_F(BinaryInspectorTest, StaticArchiveMembersAreNamedOuterBangMember) {
  auto inspection = InspectPath(fixtures_->static_archive);
  ASSERT_TRUE(inspection.ok()) << inspection.status();
  ASSERT_EQ(inspection->files.size(), 2u);
  EXPECT_EQ(inspection->files[0].path, fixtures_->static_archive + "!tu_a.o");
  EXPECT_EQ(Listing(inspection->files[0]), "translation-unit[cubin:sm_75 cubin:sm_90]");
  EXPECT_EQ(inspection->files[1].path, fixtures_->static_archive + "!tu_c.o");
  EXPECT_EQ(Listing(inspection->files[1]), "translation-unit[cubin:sm_75]");
  EXPECT_FALSE(inspection->files[0].glibc.has_value());
}

TEST_F(BinaryInspectorTest, SharedLibraryListingAndJson) {
  auto inspection = InspectPath(fixtures_->multi_tu_library);
  ASSERT_TRUE(inspection.ok()) << inspection.status();
  ASSERT_EQ(inspection->files.size(), 1u);
  const InspectedFile& file = inspection->files[0];
  EXPECT_EQ(Listing(file),
            "device-link-stub[cubin:sm_75] translation-unit[cubin:sm_75 cubin:sm_90] "
            "translation-unit[cubin:sm_75 cubin:sm_90] translation-unit[cubin:sm_75]");
  EXPECT_EQ(file.glibc->ToString(), "2.34");

  const nlohmann::json json = InspectionToJson(*inspection);
  ASSERT_EQ(json["files"].size(), 1u);
  EXPECT_EQ(json["files"][0]["path"], fixtures_->multi_tu_library);
  EXPECT_EQ(json["files"][0]["glibc"], "2.34");
  ASSERT_EQ(json["files"][0]["entries"].size(), 6u);
  const nlohmann::json& first = json["files"][0]["entries"][1];
  EXPECT_EQ(first["kind"], "cubin");
  EXPECT_EQ(first["arch"], "sm_75");
  EXPECT_EQ(first["compressed"], "");
  EXPECT_EQ(first["size"], file.containers[1].entries[0].size);
  uint64_t sm90 = 0;
  for (const auto& e : json["files"][0]["entries"]) {
    if (e["arch"] == "sm_90") sm90 += e["size"].get<uint64_t>();
  }
  EXPECT_EQ(json["archs"]["sm_90"], sm90);
  EXPECT_EQ(json["archs"].size(), 2u);

  const std::string text = FormatInspection(*inspection);
  EXPECT_NE(text.find("(ELF shared library, glibc 2.34, needs CXXABI_1.3, GCC_3.0)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ELF file    1: libmulti.so.1.sm_75.cubin"), std::string::npos) << text;
  EXPECT_NE(text.find("ELF file    6: libmulti.so.4.sm_75.cubin"), std::string::npos) << text;
  EXPECT_NE(text.find("container 1  .nv_fatbin  device-link-stub"), std::string::npos) << text;
}

TEST_F(BinaryInspectorTest, CompressedPtxListing) {
  auto inspection = InspectPath(fixtures_->compress_objects.at("size"));
  ASSERT_TRUE(inspection.ok());
  EXPECT_EQ(Listing(inspection->files[0]),
            "translation-unit[ptx:compute_90:zstd cubin:sm_90:zstd]");
  const InspectedEntry& ptx = inspection->files[0].containers[0].entries[0];
  EXPECT_GT(ptx.uncompressed_size, ptx.size);
  const std::string text = FormatInspection(*inspection);
  EXPECT_NE(text.find("PTX file    1: compress_size.o.1.sm_90.ptx"), std::string::npos) << text;
}

TEST_F(BinaryInspectorTest, BareCubinAndFatbinFiles) {
  auto cubin = InspectPath(fixtures_->bare_cubin);
  ASSERT_TRUE(cubin.ok());
  EXPECT_EQ(Listing(cubin->files[0]), "translation-unit[cubin:sm_90a]");
  EXPECT_EQ(cubin->files[0].format, BinaryFormat::kCubin);
  auto fatbin = InspectPath(fixtures_->bare_fatbin);
  ASSERT_TRUE(fatbin.ok());
  EXPECT_EQ(Listing(fatbin->files[0]), "translation-unit[cubin:sm_80 ptx:compute_80:zstd]");
}

TEST_F(BinaryInspectorTest, WheelMembersAndTotals) {
  const std::string wheel =
      fixtures_->dir + "/inspect_demo-1.0-cp311-cp311-manylinux_2_35_x86_64.whl";
  ASSERT_TRUE(
      testing::BuildWheel(
          {.path = wheel,
           .dist_info = "inspect_demo-1.0.dist-info",
           .tags = {"cp311-cp311-manylinux_2_35_x86_64"},
           .members = {{"inspect_demo/__init__.py", "", "x = 1\n"},
                       {"inspect_demo/libmulti.so", fixtures_->multi_tu_library, ""},
                       {"inspect_demo/libtu.a", fixtures_->static_archive, ""},
                       {"inspect_demo/libpthread_user.so", fixtures_->pthread_library, ""}}})
          .ok());
  auto inspection = InspectPath(wheel);
  ASSERT_TRUE(inspection.ok()) << inspection.status();
  std::vector<std::string> paths;
  for (const InspectedFile& f : inspection->files) paths.push_back(f.path);
  EXPECT_EQ(paths, (std::vector<std::string>{wheel + "!inspect_demo/libmulti.so",
                                             wheel + "!inspect_demo/libtu.a!tu_a.o",
                                             wheel + "!inspect_demo/libtu.a!tu_c.o",
                                             wheel + "!inspect_demo/libpthread_user.so"}));
  EXPECT_EQ(inspection->files[3].glibc->ToString(), "2.34");
  EXPECT_FALSE(inspection->files[3].HasDeviceCode());
  const auto totals = inspection->ArchTotals();
  const auto multi = FileArchTotals(inspection->files[0]);
  EXPECT_EQ(totals.at("sm_90"),
            multi.at("sm_90") + FileArchTotals(inspection->files[1]).at("sm_90"));
  EXPECT_NE(FormatInspection(*inspection).find("Totals per arch over 4 files:"), std::string::npos);
}

// An -rdc library holds the device-linked image the runtime loads and the relocatable code
// it was linked from; the totals count what is loaded, the link-time inputs apart.
TEST_F(BinaryInspectorTest, LinkTimeInputsAreLabelledAndCountedApart) {
  auto inspection = InspectPath(fixtures_->rdc_library);
  ASSERT_TRUE(inspection.ok()) << inspection.status();
  ASSERT_EQ(inspection->files.size(), 1u);
  const InspectedFile& file = inspection->files[0];
  uint64_t loaded_ptx = 0, link_time_ptx = 0;
  for (const InspectedContainer& c : file.containers) {
    for (const InspectedEntry& e : c.entries) {
      if (e.kind == FatbinEntryKind::kPtx) (c.Loadable() ? loaded_ptx : link_time_ptx) += e.size;
    }
  }
  EXPECT_EQ(loaded_ptx, 0u) << "nvlink keeps no PTX in the device-linked image";
  ASSERT_GT(link_time_ptx, 0u);
  EXPECT_EQ(inspection->ArchTotals().count("compute_90"), 0u);
  EXPECT_EQ(inspection->LinkTimeArchTotals().at("compute_90"), link_time_ptx);

  const nlohmann::json json = InspectionToJson(*inspection);
  EXPECT_FALSE(json["archs"].contains("compute_90")) << json.dump(2);
  EXPECT_EQ(json["link_time_archs"]["compute_90"], link_time_ptx);
  bool saw_link_time = false;
  for (const auto& c : json["files"][0]["containers"]) {
    if (c["section"] == "__nv_relfatbin") {
      EXPECT_EQ(c["loadable"], false);
      saw_link_time = true;
    }
  }
  EXPECT_TRUE(saw_link_time) << json.dump(2);
  const std::string text = FormatInspection(*inspection);
  EXPECT_NE(text.find("__nv_relfatbin  translation-unit  (link-time input: never loaded)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("link-time inputs per arch (not loaded, not counted above): compute_90"),
            std::string::npos)
      << text;
}

TEST_F(BinaryInspectorTest, RefusesWhatItCannotRead) {
  auto missing = InspectPath(fixtures_->dir + "/does-not-exist.so");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  auto text = InspectPath(fixtures_->dir + "/tu_a.cu");
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(text.status().message().find("not an ELF file, static archive, fat binary or wheel"),
            absl::string_view::npos);
}

}  // namespace
}  // namespace farm
