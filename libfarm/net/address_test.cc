#include "libfarm/net/address.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(AddressTest, ParsesHostPortForms) {
  auto a = ParseHostPort("127.0.0.1:7420");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 7420);
  auto b = ParseHostPort("[::1]:0");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(FormatHostPort(*b), "[::1]:0");
}

TEST(AddressTest, RejectsMalformedAddressesWithExample) {
  for (const char* bad : {"7420", ":7420", "host:", "host:99999", "::1:80", "[::1", "h:x"}) {
    auto r = ParseHostPort(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("127.0.0.1:7420"), std::string::npos);
  }
}

TEST(AddressTest, KnowsLoopback) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
}

}  // namespace
}  // namespace farm
