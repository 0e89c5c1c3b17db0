#include "libfarm/net/listen_probe.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace farm {

bool CanListenOn(const HostPort& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(address.port);
  if (::getaddrinfo(address.host.empty() ? nullptr : address.host.c_str(), port.c_str(), &hints,
                    &found) != 0) {
    return false;
  }
  bool free = found != nullptr;
  for (addrinfo* a = found; a != nullptr && free; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0) free = false;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return free;
}

}  // namespace farm
