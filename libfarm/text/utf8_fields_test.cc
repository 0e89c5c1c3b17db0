#include "libfarm/text/utf8_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "farm/v1/builds.pb.h"
#include "farm/v1/worker_service.pb.h"

using ::testing::ElementsAre;
using ::testing::FieldsAre;

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

// Which fields are not UTF-8, by their path from the message and with their value escaped:
// what a refusal names, whether the message was built here or arrived as bytes that
// ParseFromString refuses.
TEST(Utf8FieldsTest, NamesTheFieldsThatAreNotUtf8ByTheirPath) {
  farm::v1::RegisterRequest req;
  req.set_name("w1");
  auto* caps = req.mutable_capabilities();
  caps->set_hostname("ho\xffst");
  caps->set_slots(2);
  caps->add_cuda()->set_path("/usr/local/cuda");
  caps->add_cuda()->set_path("/opt/cuda-\xe9");
  (*caps->mutable_labels())["zone"] = "caf\xe9";
  (*caps->mutable_labels())["rack"] = "r1";
  const auto expected = ElementsAre(FieldsAre("capabilities.cuda[1].path", "/opt/cuda-\\xe9"),
                                    FieldsAre("capabilities.labels[\"zone\"]", "caf\\xe9"),
                                    FieldsAre("capabilities.hostname", "ho\\xffst"));
  EXPECT_THAT(InvalidUtf8Fields(req), expected);
  const std::string bytes = req.SerializeAsString();
  ASSERT_FALSE(farm::v1::RegisterRequest().ParseFromString(bytes));
  EXPECT_THAT(InvalidUtf8FieldsOf(bytes, *farm::v1::RegisterRequest::descriptor()), expected);

  // At most `max`; a key that is not UTF-8 is named as one; valid text names nothing.
  EXPECT_EQ(InvalidUtf8Fields(req, 2).size(), 2u);
  farm::v1::WorkerCapabilities keyed;
  (*keyed.mutable_labels())["\xfe"] = "v";
  EXPECT_THAT(InvalidUtf8Fields(keyed), ElementsAre(FieldsAre("labels key", "\\xfe")));
  caps->set_hostname("host");
  caps->mutable_cuda(1)->set_path("/opt/cuda");
  (*caps->mutable_labels())["zone"] = "café";
  EXPECT_TRUE(InvalidUtf8Fields(req).empty());
  EXPECT_TRUE(InvalidUtf8FieldsOf(req.SerializeAsString(), *req.GetDescriptor()).empty());
  EXPECT_TRUE(InvalidUtf8FieldsOf("\xff\xff\xff", *req.GetDescriptor()).empty());  // no message
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
