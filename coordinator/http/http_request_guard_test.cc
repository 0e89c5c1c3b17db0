#include "coordinator/http/http_request_guard.h"

#include <httplib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::coordinator {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

httplib::Request Req(const std::string& method, const std::string& path,
                     const httplib::Headers& headers) {
  httplib::Request r;
  r.method = method;
  r.path = path;
  r.headers = headers;
  return r;
}

const std::vector<BodyLimit> kUpload = {{"POST", "/legacy/", 1000}};

TEST(HostNameTest, IsTheLowercasedNameWithoutThePort) {
  EXPECT_THAT(HostName("LocalHost:8080"), Optional(std::string("localhost")));
  EXPECT_THAT(HostName("127.0.0.1"), Optional(std::string("127.0.0.1")));
  EXPECT_THAT(HostName("[::1]:7421"), Optional(std::string("[::1]")));
  EXPECT_THAT(HostName(" farm.example "), Optional(std::string("farm.example")));
  for (const char* bad :
       {"", ":80", "a:", "a:x", "a:99999", "[::1", "[::1]x", "a b", "a/b", "a@b", "evil\r\nX: y"}) {
    EXPECT_EQ(HostName(bad), std::nullopt) << bad;
  }
}

TEST(RequestGuardTest, LoopbackAnswersOnlyLoopbackNamesAndTheAllowedOnes) {
  const RequestGuard guard(/*loopback=*/true, {"Build-Box.local:7421"}, {});
  for (const char* host :
       {"127.0.0.1:7421", "localhost:9000", "LOCALHOST", "[::1]:7421", "build-box.local:80"}) {
    EXPECT_EQ(guard.Check(Req("GET", "/simple/", {{"Host", host}})), std::nullopt) << host;
  }
  for (const char* host : {"attacker.example", "attacker.example:7421", "127.0.0.1.nip.io:7421",
                           "localhost.attacker.example", "0.0.0.0:7421", "127.0.0.2"}) {
    auto refused = guard.Check(Req("GET", "/api/v1/status", {{"Host", host}}));
    ASSERT_TRUE(refused.has_value()) << host;
    EXPECT_EQ(refused->status, 421);
    EXPECT_THAT(refused->message, HasSubstr("--http-allow-host"));
  }
  auto missing = guard.Check(Req("GET", "/", {}));
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->status, 400);
  auto twice = guard.Check(Req("GET", "/", {{"Host", "127.0.0.1"}, {"Host", "evil.example"}}));
  ASSERT_TRUE(twice.has_value());
  EXPECT_EQ(twice->status, 400);
}

TEST(RequestGuardTest, BeyondLoopbackTheHostIsNotChecked) {
  const RequestGuard guard(/*loopback=*/false, {}, {});
  EXPECT_EQ(guard.Check(Req("GET", "/", {{"Host", "farm.example:7421"}})), std::nullopt);
}

TEST(RequestGuardTest, OnlyDeclaredRoutesTakeABodyAndOnlyUpToTheirLimit) {
  const RequestGuard guard(/*loopback=*/false, {}, kUpload);
  const httplib::Headers big = {{"Content-Length", "536870912"}};
  auto healthz = guard.Check(Req("GET", "/healthz", big));
  ASSERT_TRUE(healthz.has_value());
  EXPECT_EQ(healthz->status, 413);
  EXPECT_THAT(healthz->message, HasSubstr("takes no request body"));
  EXPECT_EQ(guard.Check(Req("GET", "/healthz", {{"Content-Length", "0"}})), std::nullopt);
  auto chunked = guard.Check(Req("POST", "/api/v1/status", {{"Transfer-Encoding", "chunked"}}));
  ASSERT_TRUE(chunked.has_value());
  EXPECT_EQ(chunked->status, 413);

  EXPECT_EQ(guard.Check(Req("POST", "/legacy/", {{"Content-Length", "1000"}})), std::nullopt);
  EXPECT_EQ(guard.Check(Req("POST", "/legacy/", {{"Transfer-Encoding", "chunked"}})), std::nullopt);
  auto over = guard.Check(Req("POST", "/legacy/", {{"Content-Length", "1001"}}));
  ASSERT_TRUE(over.has_value());
  EXPECT_EQ(over->status, 413);
  // Same path, another method: no body.
  EXPECT_TRUE(guard.Check(Req("PUT", "/legacy/", {{"Content-Length", "10"}})).has_value());
  EXPECT_EQ(guard.BodyLimitFor(Req("POST", "/legacy/", {})), 1000u);
  EXPECT_EQ(guard.BodyLimitFor(Req("POST", "/legacy", {})), 0u);
}

TEST(RequestGuardTest, AsksTheRouteWhoMaySendABodyAfterItsSize) {
  std::vector<std::string> asked;
  const RequestGuard guard(
      /*loopback=*/false, {}, {{"POST", "/legacy/", 1000, [&](const httplib::Request& req) {
                                  asked.push_back(req.get_header_value("Content-Length"));
                                  return std::optional<RequestRefusal>(RequestRefusal{
                                      401, "401 no token", {{"WWW-Authenticate", "Basic"}}});
                                }}});
  auto refused = guard.Check(Req("POST", "/legacy/", {{"Content-Length", "900"}}));
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 401);
  EXPECT_EQ(refused->headers,
            (std::vector<std::pair<std::string, std::string>>{{"WWW-Authenticate", "Basic"}}));
  // Too large is refused as such, without asking; other routes never ask.
  EXPECT_EQ(guard.Check(Req("POST", "/legacy/", {{"Content-Length", "1001"}}))->status, 413);
  EXPECT_EQ(guard.Check(Req("GET", "/healthz", {})), std::nullopt);
  EXPECT_EQ(asked, std::vector<std::string>{"900"});
}

TEST(RequestGuardTest, RefusesAmbiguousBodyFraming) {
  const RequestGuard guard(/*loopback=*/false, {}, kUpload);
  for (const httplib::Headers& headers :
       std::vector<httplib::Headers>{{{"Content-Length", "5"}, {"Transfer-Encoding", "chunked"}},
                                     {{"Content-Length", "5"}, {"Content-Length", "6"}},
                                     {{"Content-Length", "-1"}},
                                     {{"Content-Length", "5x"}},
                                     {{"Content-Length", "99999999999999999999999"}},
                                     {{"Transfer-Encoding", "gzip, chunked"}}}) {
    auto refused = guard.Check(Req("POST", "/legacy/", headers));
    ASSERT_TRUE(refused.has_value());
    EXPECT_GE(refused->status, 400);
    EXPECT_NE(refused->status, 413);
  }
}

}  // namespace
}  // namespace farm::coordinator
