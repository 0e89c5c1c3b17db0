#include "libfarm/net/listen_probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(ListenProbeTest, APortWithAListenerIsTakenAndFreeOnceItCloses) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const HostPort taken{"127.0.0.1", ntohs(addr.sin_port)};
  EXPECT_FALSE(CanListenOn(taken));
  ::close(fd);
  EXPECT_TRUE(CanListenOn(taken));
}

TEST(ListenProbeTest, AHostThatDoesNotResolveCannotBeListenedOn) {
  EXPECT_FALSE(CanListenOn({"no-such-host.invalid", 7420}));
}

}  // namespace
}  // namespace farm
