#include "worker/coordinator_relay.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

// A loopback TCP server that answers each connection with "echo:" and what it read until the
// client closed its write half, then closes: it shows bytes pass both ways and half-closes do.
class EchoServer {
 public:
  EchoServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    ::listen(fd_, 8);
    thread_ = std::thread([this] {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string got;
      char buf[4096];
      ssize_t n;
      while ((n = ::read(c, buf, sizeof(buf))) > 0) got.append(buf, static_cast<size_t>(n));
      const std::string reply = "echo:" + got;
      // The relay may be gone (the stop test): no SIGPIPE.
      ::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
      ::close(c);
    });
  }
  ~EchoServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

int DialUnix(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

std::string SocketPath(const std::string& name) {
  return (fs::temp_directory_path() / absl::StrCat("relay-", ::getpid(), "-", name)).string();
}

TEST(CoordinatorRelayTest, RelaysBothWaysAndHalfCloses) {
  EchoServer server;
  auto relay = CoordinatorRelay::Start(SocketPath("echo"), server.address());
  ASSERT_TRUE(relay.ok()) << relay.status();
  EXPECT_EQ((*relay)->address(), "unix:" + SocketPath("echo"));
  EXPECT_EQ(fs::status(SocketPath("echo")).permissions() & fs::perms::others_all, fs::perms::none);
  const int fd = DialUnix((*relay)->socket_path());
  ASSERT_GE(fd, 0);
  const std::string big(200000, 'x');  // more than one buffer
  ASSERT_EQ(::write(fd, big.data(), big.size()), static_cast<ssize_t>(big.size()));
  ::shutdown(fd, SHUT_WR);
  EXPECT_EQ(ReadAll(fd), "echo:" + big);
  ::close(fd);
  EXPECT_EQ((*relay)->connections(), 1);
}

TEST(CoordinatorRelayTest, AnUnreachableCoordinatorClosesTheConnection) {
  // A port nothing listens on: bound, never listening.
  const int held = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(held, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(held, reinterpret_cast<sockaddr*>(&addr), &len);
  auto relay =
      CoordinatorRelay::Start(SocketPath("dead"), absl::StrCat("127.0.0.1:", ntohs(addr.sin_port)));
  ASSERT_TRUE(relay.ok()) << relay.status();
  const int fd = DialUnix((*relay)->socket_path());
  ASSERT_GE(fd, 0);
  EXPECT_EQ(ReadAll(fd), "");  // EOF, not a hang
  ::close(fd);
  ::close(held);
}

TEST(CoordinatorRelayTest, StoppingEndsOpenConnectionsAndRemovesTheSocket) {
  EchoServer server;
  const std::string path = SocketPath("stop");
  auto relay = CoordinatorRelay::Start(path, server.address());
  ASSERT_TRUE(relay.ok()) << relay.status();
  const int fd = DialUnix(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "abc", 3), 3);  // left open: the server still waits for more
  relay->reset();                       // must not wait for the client
  EXPECT_EQ(ReadAll(fd), "");
  ::close(fd);
  EXPECT_FALSE(fs::exists(path));
}

TEST(CoordinatorRelayTest, RefusesWhatItCannotServe) {
  EXPECT_FALSE(CoordinatorRelay::Start(SocketPath("bad"), "no-port").ok());
  auto too_long = CoordinatorRelay::Start("/tmp/" + std::string(120, 'a'), "127.0.0.1:1");
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(std::string(too_long.status().message()).find("--builds-dir"), std::string::npos);
}

}  // namespace
}  // namespace farm::worker
