#include "libfarm/text/utf8_fields.h"

#include <gtest/gtest.h>

#include "farm/v1/builds.pb.h"
#include "farm/v1/worker_service.pb.h"

namespace farm {
namespace {

TEST(Utf8FieldsTest, EscapesEveryStringFieldThatIsNotUtf8AndNothingElse) {
  farm::v1::Completion completion;
  completion.set_lease_id("lease-1");
  completion.set_infra_error("input 'caf\xe9.cu': missing");
  completion.mutable_result()->set_stderr_tail("\xff");
  completion.mutable_result()->set_stdout_tail("\xe2\x80\x98ok\xe2\x80\x99");
  completion.mutable_result()->add_outputs()->set_path("out/\xe9");
  EXPECT_EQ(EscapeInvalidUtf8Fields(&completion), 3);
  EXPECT_EQ(completion.lease_id(), "lease-1");
  EXPECT_EQ(completion.infra_error(), "input 'caf\\xe9.cu': missing");
  EXPECT_EQ(completion.result().stderr_tail(), "\\xff");
  EXPECT_EQ(completion.result().stdout_tail(), "\xe2\x80\x98ok\xe2\x80\x99");
  EXPECT_EQ(completion.result().outputs(0).path(), "out/\\xe9");
  // What the worker sends now parses on the coordinator.
  farm::v1::Completion received;
  EXPECT_TRUE(received.ParseFromString(completion.SerializeAsString()));
  EXPECT_EQ(EscapeInvalidUtf8Fields(&completion), 0);
}

TEST(Utf8FieldsTest, EscapesMapsAndRepeatedStrings) {
  farm::v1::Build build;
  build.add_archs("sm_\xff");
  (*build.mutable_nvcc()->mutable_fallback_reasons())["bad \xfe"] = 2;
  (*build.mutable_wheel()->mutable_device_code_bytes())["sm_90"] = 7;
  EXPECT_EQ(EscapeInvalidUtf8Fields(&build), 2);
  EXPECT_EQ(build.archs(0), "sm_\\xff");
  EXPECT_EQ(build.nvcc().fallback_reasons().at("bad \\xfe"), 2u);
  EXPECT_EQ(build.wheel().device_code_bytes().at("sm_90"), 7u);
}

TEST(Utf8FieldsTest, ReadsAStoredRecordThatParseFromStringRefuses) {
  // What today's coordinator stored: a build failed on a wheel member named in Latin-1.
  farm::v1::Build stored;
  stored.set_id("b1");
  stored.set_state(farm::v1::BUILD_STATE_FAILED);
  stored.set_reason("the wheel cannot be tagged: member 'pkg/caf\xe9.py' ...");
  (*stored.mutable_nvcc()->mutable_fallback_reasons())["\xff"] = 1;
  stored.mutable_verification()->add_rows()->set_note("\xfe");
  const std::string bytes = stored.SerializeAsString();
  farm::v1::Build plain;
  ASSERT_FALSE(plain.ParseFromString(bytes));

  farm::v1::Build read;
  EXPECT_EQ(ParseEscapingInvalidUtf8(bytes, &read), 3);
  EXPECT_EQ(read.id(), "b1");
  EXPECT_EQ(read.state(), farm::v1::BUILD_STATE_FAILED);
  EXPECT_EQ(read.reason(), "the wheel cannot be tagged: member 'pkg/caf\\xe9.py' ...");
  EXPECT_EQ(read.nvcc().fallback_reasons().at("\\xff"), 1u);
  EXPECT_EQ(read.verification().rows(0).note(), "\\xfe");

  // Valid bytes parse as they are; bytes that are no such message do not parse at all.
  EXPECT_EQ(ParseEscapingInvalidUtf8(read.SerializeAsString(), &plain), 0);
  EXPECT_EQ(plain.reason(), read.reason());
  EXPECT_EQ(ParseEscapingInvalidUtf8("\x0a\xff\xff\xff", &plain), -1);
}

}  // namespace
}  // namespace farm
