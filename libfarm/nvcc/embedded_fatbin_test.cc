#include "libfarm/nvcc/embedded_fatbin.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(EmbeddedFatbinTest, FrameDropsTheDataAndTheBoundBytesAreLittleEndian) {
  const std::string placeholder = PlaceholderFatbinC();
  auto parsed = ParseEmbeddedFatbin(placeholder);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->bytes, std::string(8, '\0'));

  // The same frame around other data, as fatbinary writes it (its last line uses ", ").
  std::string real = placeholder;
  const std::string quad = "\".quad 0x0000000000000000\\n\"\n";
  real.replace(real.find(quad), quad.size(),
               "\".quad 0x0102030405060708,0x1112131415161718\\n\"\n"
               "\".quad 0x2122232425262728, 0x3132333435363738\\n\"\n");
  const std::string bound = "fatbinData[1]";
  real.replace(real.find(bound), bound.size(), "fatbinData[4]");
  auto other = ParseEmbeddedFatbin(real);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->frame, parsed->frame);
  EXPECT_EQ(other->bytes.size(), 32u);
  EXPECT_EQ(other->bytes.substr(0, 8), "\x08\x07\x06\x05\x04\x03\x02\x01");
  EXPECT_EQ(other->bytes.substr(24, 8), "\x38\x37\x36\x35\x34\x33\x32\x31");
}

TEST(EmbeddedFatbinTest, AnRdcFrameIsNotTheWholeProgramOne) {
  std::string rdc = PlaceholderFatbinC();
  const std::string section = ".nv_fatbin, ";
  rdc.replace(rdc.find(section), section.size(), "__nv_relfatbin, ");
  auto parsed = ParseEmbeddedFatbin(rdc);
  ASSERT_TRUE(parsed.ok());
  EXPECT_NE(parsed->frame, ParseEmbeddedFatbin(PlaceholderFatbinC())->frame);
}

TEST(EmbeddedFatbinTest, MalformedDataIsRefused) {
  EXPECT_FALSE(ParseEmbeddedFatbin("asm(\"\");\n").ok());
  EXPECT_FALSE(ParseEmbeddedFatbin("\".quad 0x12\\n\"\n").ok());
  EXPECT_FALSE(ParseEmbeddedFatbin("\".quad 0x0000000000000000\n").ok());
}

}  // namespace
}  // namespace farm
