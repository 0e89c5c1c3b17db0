#include "worker/coordinator_relay.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "libfarm/logging/logger.h"
#include "libfarm/net/address.h"

namespace farm::worker {
namespace {

// Writes all of `data`, or fails (the peer is gone).
bool SendAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CoordinatorRelay>> CoordinatorRelay::Start(
    const std::string& socket_path, const std::string& coordinator) {
  auto hp = ParseHostPort(coordinator);
  if (!hp.ok()) return hp.status();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the relay socket path ", socket_path, " is longer than ", sizeof(addr.sun_path) - 1,
        " bytes. Fix: give the worker a shorter --builds-dir"));
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  ::unlink(socket_path.c_str());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  // Owner-only: the sandbox's uid outside is the worker's.
  const mode_t old_mask = ::umask(0077);
  const int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  ::umask(old_mask);
  if (bound != 0 || ::listen(fd, 64) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot listen on ", socket_path, ": ", why,
                     ". Fix: give the worker a writable --builds-dir"));
  }
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC) != 0) {
    ::close(fd);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  std::unique_ptr<CoordinatorRelay> relay(
      new CoordinatorRelay(socket_path, hp->host, std::to_string(hp->port), fd, wake[0], wake[1]));
  relay->acceptor_ = std::thread([r = relay.get()] { r->AcceptLoop(); });
  return relay;
}

CoordinatorRelay::CoordinatorRelay(std::string socket_path, std::string host, std::string port,
                                   int listen_fd, int wake_read, int wake_write)
    : socket_path_(std::move(socket_path)),
      host_(std::move(host)),
      port_(std::move(port)),
      listen_fd_(listen_fd),
      wake_read_(wake_read),
      wake_write_(wake_write) {}

CoordinatorRelay::~CoordinatorRelay() {
  const char byte = 0;
  while (::write(wake_write_, &byte, 1) < 0 && errno == EINTR) {
  }
  acceptor_.join();
  std::vector<RelayThread> relays;
  {
    absl::MutexLock lock(&mu_);
    // A relay blocked in send() wakes with an error.
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    relays.swap(relays_);
  }
  for (auto& r : relays) r.thread.join();
  ::close(listen_fd_);
  ::close(wake_read_);
  ::close(wake_write_);
  ::unlink(socket_path_.c_str());
}

void CoordinatorRelay::Track(int fd) {
  absl::MutexLock lock(&mu_);
  open_fds_.push_back(fd);
}

void CoordinatorRelay::Close(int fd) {
  // Under the lock, so the destructor never shuts down a reused descriptor.
  absl::MutexLock lock(&mu_);
  open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
  ::close(fd);
}

void CoordinatorRelay::JoinEnded() {
  for (auto it = relays_.begin(); it != relays_.end();) {
    if (!it->ended->load()) {
      ++it;
      continue;
    }
    it->thread.join();
    it = relays_.erase(it);
  }
}

void CoordinatorRelay::AcceptLoop() {
  auto log = ComponentLogger("worker");
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      log->error("coordinator relay {}: poll: {}", socket_path_, std::strerror(errno));
      return;
    }
    if (fds[1].revents != 0) return;
    const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    Track(client);
    connections_.fetch_add(1);
    absl::MutexLock lock(&mu_);
    JoinEnded();
    auto ended = std::make_shared<std::atomic<bool>>(false);
    relays_.push_back({std::thread([this, client, ended] {
                         Relay(client);
                         ended->store(true);
                       }),
                       ended});
  }
}

int CoordinatorRelay::DialCoordinator() const {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host_.c_str(), port_.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

void CoordinatorRelay::Relay(int client) {
  const int upstream = DialCoordinator();
  if (upstream < 0) {
    ComponentLogger("worker")->warn("coordinator relay {}: cannot reach {}:{}", socket_path_, host_,
                                    port_);
    Close(client);
    return;
  }
  Track(upstream);
  // open[i]: whether side i still sends; a side that ends has its peer's write half closed.
  const int ends[2] = {client, upstream};
  bool open[2] = {true, true};
  char buffer[64 * 1024];
  while (open[0] || open[1]) {
    pollfd fds[3] = {{open[0] ? ends[0] : -1, POLLIN, 0},
                     {open[1] ? ends[1] : -1, POLLIN, 0},
                     {wake_read_, POLLIN, 0}};
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[2].revents != 0) break;
    for (int i = 0; i < 2; ++i) {
      if (!open[i] || fds[i].revents == 0) continue;
      const ssize_t n = ::recv(ends[i], buffer, sizeof(buffer), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || !SendAll(ends[1 - i], buffer, static_cast<size_t>(n))) {
        open[i] = false;
        ::shutdown(ends[1 - i], SHUT_WR);
        if (n < 0) open[1 - i] = false;
      }
    }
  }
  Close(client);
  Close(upstream);
}

}  // namespace farm::worker
