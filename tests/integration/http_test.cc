// The coordinator's HTTP side as a client sees it: /healthz and Prometheus /metrics, and
// the limits a hostile client meets (issue 15, item 5): bodies refused before they are
// read, slow or endless headers cut off, connections bounded, Host checked on loopback.
// Raw sockets, because a well-behaved client library cannot misbehave on purpose.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include <httplib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libfarm/net/address.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(HttpTest, HealthzAndMetricsFollowTheFleet) {
  TempDir dir("http");
  auto farm = TestFarm::Start(dir.path(), FarmOptions{});
  ASSERT_TRUE(farm.ok()) << farm.status();
  auto hp = ParseHostPort((*farm)->coordinator().http_address());
  ASSERT_TRUE(hp.ok());
  httplib::Client http(hp->host, hp->port);

  auto health = http.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");

  auto before = http.Get("/metrics");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->status, 200);
  EXPECT_THAT(before->get_header_value("Content-Type"), HasSubstr("text/plain; version=0.0.4"));
  EXPECT_THAT(before->body, HasSubstr("farm_workers{state=\"online\"} 0\n"));

  auto w = (*farm)->StartWorker({.name = "w1", .args = {"--cuda-path", "none"}, .slots = 3});
  ASSERT_TRUE(w.ok()) << w.status();
  std::string body;
  EXPECT_TRUE(WaitFor(
      [&] {
        auto m = http.Get("/metrics");
        body = m ? m->body : "";
        // The Register counter is bumped as the call returns, just after the worker is
        // online: wait for both, or a scrape in between sees one without the other.
        return body.find("farm_workers{state=\"online\"} 1\n") != std::string::npos &&
               body.find("method=\"Register\"} 1\n") != std::string::npos;
      },
      absl::Seconds(30)))
      << body;
  EXPECT_THAT(body, HasSubstr("farm_worker_slots_online 3\n"));
  EXPECT_THAT(body, HasSubstr("farm_rpc_requests_total{code=\"OK\",method=\"Register\"} 1\n"));
  EXPECT_THAT(body, HasSubstr("# TYPE farm_workers gauge\n"));

  auto missing = http.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

// A raw client connection to 127.0.0.1:`port`, closed on destruction.
class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  // False once the server has closed the connection.
  bool Send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }
  // What the server sends until it closes the connection or `timeout` passes.
  std::string Receive(absl::Duration timeout, bool* closed = nullptr) {
    std::string out;
    const absl::Time until = absl::Now() + timeout;
    if (closed) *closed = false;
    while (absl::Now() < until) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(until - absl::Now()))) <= 0) {
        break;
      }
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) {
        if (closed) *closed = true;
        break;
      }
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

// Resident memory of `pid`, in KiB.
int64_t ResidentKib(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      int64_t kib = 0;
      std::string digits;
      for (char ch : line) {
        if (ch >= '0' && ch <= '9') digits.push_back(ch);
      }
      if (absl::SimpleAtoi(digits, &kib)) return kib;
    }
  }
  return -1;
}

int PortOf(const std::string& address) {
  auto hp = ParseHostPort(address);
  EXPECT_TRUE(hp.ok()) << address;
  return hp.ok() ? hp->port : 0;
}

std::string Request(const std::string& method, const std::string& path, int port,
                    const std::string& extra_headers = "") {
  return absl::StrCat(method, " ", path, " HTTP/1.1\r\nHost: 127.0.0.1:", port, "\r\n",
                      extra_headers, "\r\n");
}

TEST(HttpLimitsTest, BodiesARouteDoesNotTakeAreRefusedBeforeTheyAreRead) {
  TempDir dir("http-body");
  auto farm = TestFarm::Start(dir.path(), FarmOptions{});
  ASSERT_TRUE(farm.ok()) << farm.status();
  CoordinatorProcess& c = (*farm)->coordinator();
  const int port = PortOf(c.http_address());
  const int64_t rss_before = ResidentKib(c.process().pid());
  ASSERT_GT(rss_before, 0);

  // 512 MiB announced to /healthz: answered 413 from the headers alone...
  RawConnection healthz(port);
  ASSERT_TRUE(healthz.connected());
  ASSERT_TRUE(healthz.Send(Request("GET", "/healthz", port, "Content-Length: 536870912\r\n")));
  const std::string answer = healthz.Receive(absl::Seconds(5));
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 413 "));
  EXPECT_THAT(answer, HasSubstr("takes no request body"));
  // ...and what is sent anyway is not kept: 64 MiB later the coordinator has not grown.
  const std::string mib(1 << 20, 'A');
  for (int i = 0; i < 64 && healthz.Send(mib); ++i) {
  }
  // The same for a chunked body, and for a POST to a route that takes none.
  RawConnection chunked(port);
  ASSERT_TRUE(
      chunked.Send(Request("POST", "/api/v1/status", port, "Transfer-Encoding: chunked\r\n")));
  EXPECT_THAT(chunked.Receive(absl::Seconds(5)), StartsWith("HTTP/1.1 413 "));
  for (int i = 0; i < 64 && chunked.Send("100000\r\n" + mib + "\r\n"); ++i) {
  }
  // An upload announced past --index-max-upload is refused before its bytes, and before
  // the credentials are even looked at.
  RawConnection upload(port);
  ASSERT_TRUE(upload.Send(Request("POST", "/legacy/", port,
                                  "Content-Type: multipart/form-data; boundary=x\r\n"
                                  "Content-Length: 107374182400\r\n")));
  EXPECT_THAT(upload.Receive(absl::Seconds(5)), StartsWith("HTTP/1.1 413 "));
  // A request line without an end is cut off at the head limit, not read into memory.
  RawConnection endless(port);
  ASSERT_TRUE(endless.Send("GET /"));
  bool closed = false;
  for (int i = 0; i < 64 && endless.Send(mib); ++i) {
  }
  endless.Receive(absl::Seconds(5), &closed);
  EXPECT_TRUE(closed) << "an endless request line must end the connection";

  const int64_t rss_after = ResidentKib(c.process().pid());
  EXPECT_LT(rss_after - rss_before, 48 << 10)
      << "the coordinator grew from " << rss_before << " to " << rss_after << " KiB";
  // And it still answers.
  httplib::Client http("127.0.0.1", port);
  auto health = http.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST(HttpLimitsTest, BeyondLoopbackALargeBodyIsRefusedBeforeTheTokenCheck) {
  TempDir dir("http-public");
  auto farm = TestFarm::Start(dir.path(), {.http_listen = "0.0.0.0:0"});
  ASSERT_TRUE(farm.ok()) << farm.status();
  CoordinatorProcess& c = (*farm)->coordinator();
  const int port = PortOf(c.http_address());
  const int64_t rss_before = ResidentKib(c.process().pid());
  RawConnection status(port);
  ASSERT_TRUE(status.Send(Request("GET", "/api/v1/status", port, "Content-Length: 536870912\r\n")));
  const absl::Time start = absl::Now();
  EXPECT_THAT(status.Receive(absl::Seconds(5)), StartsWith("HTTP/1.1 413 "));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  const std::string mib(1 << 20, 'A');
  for (int i = 0; i < 64 && status.Send(mib); ++i) {
  }
  EXPECT_LT(ResidentKib(c.process().pid()) - rss_before, 48 << 10);
  // Without a body, the token is what is missing.
  httplib::Client http("127.0.0.1", port);
  auto unauthenticated = http.Get("/api/v1/status");
  ASSERT_TRUE(unauthenticated);
  EXPECT_EQ(unauthenticated->status, 401);
}

TEST(HttpLimitsTest, SlowHeadersDoNotStarveOtherClientsAndAreCutOff) {
  TempDir dir("http-slow");
  auto farm = TestFarm::Start(dir.path(), FarmOptions{});
  ASSERT_TRUE(farm.ok()) << farm.status();
  CoordinatorProcess& c = (*farm)->coordinator();
  const int port = PortOf(c.http_address());
  // 12 clients drip a header byte every 300 ms: each read arrives in time, the headers never.
  std::vector<std::unique_ptr<RawConnection>> drips;
  for (int i = 0; i < 12; ++i) {
    drips.push_back(std::make_unique<RawConnection>(port));
    ASSERT_TRUE(drips.back()->Send("GET /simple/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "))
        << "coordinator log:\n"
        << ReadFile(c.log_path());
  }
  std::atomic<bool> stop{false};
  std::atomic<int> cut_off{0};
  std::thread dripper([&] {
    std::vector<bool> open(drips.size(), true);
    while (!stop) {
      for (size_t i = 0; i < drips.size(); ++i) {
        if (open[i] && !drips[i]->Send("a")) {
          open[i] = false;
          ++cut_off;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  });
  // Meanwhile the index answers at once.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  httplib::Client http("127.0.0.1", port);
  http.set_read_timeout(std::chrono::seconds(3));
  for (int i = 0; i < 5; ++i) {
    const absl::Time start = absl::Now();
    auto simple = http.Get("/simple/");
    ASSERT_TRUE(simple) << "the index did not answer while slow clients held connections";
    EXPECT_EQ(simple->status, 200) << "coordinator log:\n" << ReadFile(c.log_path());
    EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  }
  // The drippers are cut off once their headers take longer than 10 s.
  const bool all_cut =
      WaitFor([&] { return cut_off == static_cast<int>(drips.size()); }, absl::Seconds(20));
  stop = true;
  dripper.join();
  EXPECT_TRUE(all_cut) << cut_off << " of " << drips.size() << " slow clients were cut off";
}

// Holds `held` connections to `port`, then opens one more: true when that one is answered
// 503. The server admits connections on its pool's threads, so a probe can overtake a held
// connection and take its place (then the held one is refused): each try opens all anew.
bool OneOverTheBoundIsRefused(int port, int held, std::string& answer) {
  return WaitFor(
      [&] {
        std::vector<std::unique_ptr<RawConnection>> open;
        for (int i = 0; i < held; ++i) open.push_back(std::make_unique<RawConnection>(port));
        absl::SleepFor(absl::Milliseconds(200));
        RawConnection extra(port);
        extra.Send(Request("GET", "/healthz", port));
        // Generous: on a loaded CI machine (nvcc and qemu on both cores) an answer can be slow.
        answer = extra.Receive(absl::Seconds(5));
        return absl::StartsWith(answer, "HTTP/1.1 503 ");
      },
      absl::Seconds(60));
}

TEST(HttpLimitsTest, ConnectionsAreBoundedPerClientAndOverall) {
  TempDir dir("http-conns");
  auto farm =
      TestFarm::Start(dir.path(), {.coordinator_args = {"--http-max-connections-per-client", "3"}});
  ASSERT_TRUE(farm.ok()) << farm.status();
  CoordinatorProcess& c = (*farm)->coordinator();
  const int port = PortOf(c.http_address());
  std::string answer;
  EXPECT_TRUE(OneOverTheBoundIsRefused(port, 3, answer)) << answer << "\ncoordinator log:\n"
                                                         << ReadFile(c.log_path());
  // Once they go, there is room again.
  EXPECT_TRUE(WaitFor(
      [&] {
        RawConnection again(port);
        again.Send(Request("GET", "/healthz", port));
        return absl::StartsWith(again.Receive(absl::Seconds(5)), "HTTP/1.1 200 ");
      },
      absl::Seconds(30)))
      << "coordinator log:\n"
      << ReadFile(c.log_path());
  c.Stop();

  // The overall bound, the same way.
  auto second = TestFarm::Start(
      dir.path(), {.coordinator_args = {"--http-max-connections", "2"}, .data_dir = "data2"});
  ASSERT_TRUE(second.ok()) << second.status();
  CoordinatorProcess& d = (*second)->coordinator();
  EXPECT_TRUE(OneOverTheBoundIsRefused(PortOf(d.http_address()), 2, answer)) << answer;
}

TEST(HttpLimitsTest, LoopbackAnswersOnlyToLoopbackHostNames) {
  TempDir dir("http-host");
  auto farm = TestFarm::Start(dir.path(), {.coordinator_args = {"--http-allow-host", "farm.test"}});
  ASSERT_TRUE(farm.ok()) << farm.status();
  CoordinatorProcess& c = (*farm)->coordinator();
  const int port = PortOf(c.http_address());
  auto get = [&](const std::string& host) {
    RawConnection conn(port);
    conn.Send(
        absl::StrCat("GET /simple/ HTTP/1.1\r\nHost: ", host, "\r\nConnection: close\r\n\r\n"));
    return conn.Receive(absl::Seconds(5));
  };
  // DNS rebinding: a page from attacker.example whose name now points at 127.0.0.1.
  const std::string rebound = get("attacker.example:" + std::to_string(port));
  EXPECT_THAT(rebound, StartsWith("HTTP/1.1 421 "));
  EXPECT_THAT(rebound, HasSubstr("--http-allow-host"));
  EXPECT_THAT(get("attacker.example"), StartsWith("HTTP/1.1 421 "));
  for (const std::string& host :
       {absl::StrCat("127.0.0.1:", port), absl::StrCat("localhost:", port),
        std::string("localhost:9000"),  // an SSH tunnel's port
        absl::StrCat("[::1]:", port), std::string("FARM.test:8080")}) {
    EXPECT_THAT(get(host), StartsWith("HTTP/1.1 200 ")) << host;
  }
  RawConnection no_host(port);
  no_host.Send("GET /simple/ HTTP/1.0\r\n\r\n");
  EXPECT_THAT(no_host.Receive(absl::Seconds(5)), StartsWith("HTTP/1.1 400 "));
  c.Stop();

  // A name that is not one is a configuration error.
  auto bad = TestFarm::Start(
      dir.path(), {.coordinator_args = {"--http-allow-host", "a/b"}, .data_dir = "data2"});
  EXPECT_FALSE(bad.ok());
}

// The headers of an upload to the index of `port`; `token` empty: without credentials.
std::string UploadHead(int port, uint64_t length, const std::string& token) {
  return Request(
      "POST", "/legacy/", port,
      absl::StrCat("Content-Type: multipart/form-data; boundary=x\r\n",
                   token.empty() ? ""
                                 : absl::StrCat("Authorization: Basic ",
                                                absl::Base64Escape("__token__:" + token), "\r\n"),
                   "Content-Length: ", length, "\r\n"));
}

// Issue 24, hole 8: an upload without a token used to have up to 64 MiB of its body read
// (drained, a byte every 10 s if the client liked) before the 401.
TEST(HttpLimitsTest, AnUploadWithoutATokenIsRefusedFromItsHeaders) {
  TempDir dir("http-upload-401");
  auto farm = TestFarm::Start(dir.path(), FarmOptions{});
  ASSERT_TRUE(farm.ok()) << farm.status();
  CoordinatorProcess& c = (*farm)->coordinator();
  const int port = PortOf(c.http_address());
  for (const std::string& token : {std::string(), std::string("not-a-farm-token")}) {
    // 60 MiB announced, not a byte of it sent: the answer comes from the headers alone, and
    // the connection is closed rather than read on.
    RawConnection upload(port);
    ASSERT_TRUE(upload.Send(UploadHead(port, 60 << 20, token)));
    bool closed = false;
    const std::string answer = upload.Receive(absl::Seconds(10), &closed);
    EXPECT_THAT(answer, StartsWith("HTTP/1.1 401 ")) << "coordinator log:\n"
                                                     << ReadFile(c.log_path());
    EXPECT_THAT(answer, HasSubstr("WWW-Authenticate: Basic realm=\"wheelfarm\""));
    EXPECT_THAT(answer, HasSubstr("twine upload -u __token__"));
    EXPECT_TRUE(closed) << "a refused upload's connection must be closed, not drained";
  }
}

// Sends one byte a second on `conn` until it fails or `stop` is set.
std::thread Drip(RawConnection& conn, std::atomic<bool>& stop) {
  return std::thread([&conn, &stop] {
    while (!stop && conn.Send("a")) std::this_thread::sleep_for(std::chrono::seconds(1));
  });
}

// Issue 24, hole 8: a body had 30 s per read and no deadline, so a byte every 10 s held a
// connection for as long as the client liked. Now it must keep up 64 KiB/s after a 10 s grace.
TEST(HttpLimitsTest, AnUploadBodyDrippingInIsCutOffAtTheMinimumRate) {
  TempDir dir("http-upload-slow");
  auto farm = TestFarm::Start(dir.path(), FarmOptions{});
  ASSERT_TRUE(farm.ok()) << farm.status();
  CoordinatorProcess& c = (*farm)->coordinator();
  const int port = PortOf(c.http_address());
  RawConnection upload(port);
  ASSERT_TRUE(upload.Send(UploadHead(port, 100000, (*farm)->AdminToken())));
  std::atomic<bool> stop{false};
  std::thread dripper = Drip(upload, stop);
  bool closed = false;
  // Each byte comes well within the 30 s a read may wait; the rate is what ends it.
  const std::string answer = upload.Receive(absl::Seconds(25), &closed);
  stop = true;
  dripper.join();
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 408 ")) << "coordinator log:\n"
                                                   << ReadFile(c.log_path());
  EXPECT_THAT(answer,
              HasSubstr("the request body arrived slower than 64.0 KiB/s after its first 10s"));
  EXPECT_TRUE(closed);
}

// Slow bodies may hold half of a client's connections; the rest answer at once. All loopback
// clients share 127.0.0.1, so without that, 16 slow uploads from any local process made every
// local client's /healthz, /metrics and index requests 503.
TEST(HttpLimitsTest, HealthzAnswersWhileSlowBodiesAreInFlight) {
  TempDir dir("http-upload-reserve");
  auto farm = TestFarm::Start(dir.path(), FarmOptions{});
  ASSERT_TRUE(farm.ok()) << farm.status();
  CoordinatorProcess& c = (*farm)->coordinator();
  const int port = PortOf(c.http_address());
  const std::string token = (*farm)->AdminToken();
  constexpr int kSlow = 16;  // --http-max-connections-per-client's default
  std::vector<std::unique_ptr<RawConnection>> uploads;
  std::atomic<bool> stop{false};
  std::vector<std::thread> drippers;
  for (int i = 0; i < kSlow; ++i) {
    uploads.push_back(std::make_unique<RawConnection>(port));
    if (uploads.back()->Send(UploadHead(port, 100000, token))) {
      drippers.push_back(Drip(*uploads.back(), stop));
    }
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  httplib::Client http("127.0.0.1", port);
  http.set_read_timeout(std::chrono::seconds(5));
  for (int i = 0; i < 5; ++i) {
    auto health = http.Get("/healthz");
    ASSERT_TRUE(health) << "/healthz did not answer while slow uploads were in flight";
    EXPECT_EQ(health->status, 200) << "coordinator log:\n" << ReadFile(c.log_path());
    auto metrics = http.Get("/metrics");
    ASSERT_TRUE(metrics);
    EXPECT_EQ(metrics->status, 200);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  // The uploads beyond half of the client's connections were told so before their bodies.
  int refused = 0;
  for (auto& upload : uploads) {
    if (absl::StartsWith(upload->Receive(absl::Milliseconds(100)), "HTTP/1.1 503 ")) ++refused;
  }
  EXPECT_EQ(refused, kSlow / 2);
  stop = true;
  for (std::thread& t : drippers) t.join();
}

}  // namespace
}  // namespace farm::testing
