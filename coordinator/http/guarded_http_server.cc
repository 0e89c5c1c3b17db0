#include "coordinator/http/guarded_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "libfarm/logging/logger.h"
#include "libfarm/units/byte_size.h"

namespace farm::coordinator {
namespace {

// Threads beyond max_connections, so refusing a connection over the limit never waits
// for a slot held by one that is being served.
constexpr int kSpareThreads = 4;
// Bytes and time spent reading what a refused client still sends, so it sees our answer
// instead of a reset connection.
constexpr size_t kLingerBytes = 256 << 10;
constexpr absl::Duration kLingerTime = absl::Milliseconds(500);

int PollMillis(absl::Duration d) {
  return static_cast<int>(std::clamp<int64_t>(absl::ToInt64Milliseconds(d), 0, 60000));
}

bool WaitFor(int fd, short events, absl::Duration timeout) {
  pollfd p{.fd = fd, .events = events, .revents = 0};
  while (true) {
    const int n = ::poll(&p, 1, PollMillis(timeout));
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

void Address(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    port = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    port = ntohs(in6->sin6_port);
  } else {
    port = 0;
  }
  ip = text;
}

// Where the connection this thread serves is in its current request.
struct ConnectionState {
  ConnectionState(const HttpLimits& limits, ConnectionSlots& slots, std::string client)
      : limits(limits), slots(slots), client(std::move(client)) {}
  ~ConnectionState() { StopWaiting(); }

  const HttpLimits& limits;
  ConnectionSlots& slots;
  const std::string client;
  bool in_head = true;
  absl::Time head_deadline;
  absl::Time prompt_deadline;  // past it, a head still arriving waits on its client
  absl::Time body_start;
  absl::Time last_bytes;  // when bytes last came, or the request or body started
  uint64_t head_bytes = 0;
  uint64_t body_bytes = 0;
  uint64_t body_budget = 0;
  bool waiting = false;  // holds one of the client's waiting slots (ConnectionSlots)
  bool close_after_response = false;
  int cut_status = 0;   // what a request the stream cut off is answered (408, 413, 431)
  std::string problem;  // why a read was cut off, for the log and that answer

  void StartRequest() {
    const absl::Time now = absl::Now();
    in_head = true;
    head_deadline = now + limits.head_timeout;
    prompt_deadline = now + limits.prompt_time;
    last_bytes = now;
    head_bytes = body_bytes = body_budget = 0;
  }
  void StartBody() {
    in_head = false;
    body_start = last_bytes = absl::Now();
  }
  // The body must have arrived at the minimum rate, after the grace, by then.
  absl::Time BodyDeadline() const {
    if (limits.body_min_rate == 0) return absl::InfiniteFuture();
    return body_start + limits.body_grace +
           absl::Seconds(static_cast<double>(body_bytes) / limits.body_min_rate);
  }
  // Takes a waiting slot unless it holds one: false when its client has none left.
  bool Wait() {
    if (!waiting) waiting = slots.StartWaiting(client);
    return waiting;
  }
  void StopWaiting() {
    if (waiting) slots.StopWaiting(client);
    waiting = false;
  }
};

// The pre-routing, 100-continue and error handlers run on the thread serving the connection.
thread_local ConnectionState* t_connection = nullptr;

// A socket stream that enforces the limits (httplib's own SocketStream is internal). It
// reads and writes through `io`: the socket, or TLS over it.
class LimitedStream final : public httplib::Stream {
 public:
  LimitedStream(int fd, ConnectionIo& io, const HttpLimits& limits, ConnectionState& state)
      : fd_(fd), io_(io), limits_(limits), state_(state) {}

  bool is_readable() const override {
    return has_buffered() || WaitFor(fd_, POLLIN, limits_.io_timeout);
  }
  bool is_writable() const override { return WaitFor(fd_, POLLOUT, limits_.io_timeout); }
  bool has_buffered() const { return offset_ < size_ || io_.HasPending(); }

  ssize_t read(char* ptr, size_t size) override {
    while (offset_ == size_) {
      const std::optional<absl::Duration> wait = NextWait();
      if (!wait) return -1;
      const ssize_t n = io_.Receive(buffer_, sizeof(buffer_), *wait);
      if (n == ConnectionIo::kTimedOut) continue;  // NextWait says whether time is up
      if (n <= 0) return n;
      offset_ = 0;
      size_ = static_cast<size_t>(n);
      state_.last_bytes = absl::Now();
    }
    const size_t n = std::min(size, size_ - offset_);
    if (state_.in_head) {
      state_.head_bytes += n;
      if (state_.head_bytes > limits_.max_head_bytes) {
        Cut(431,
            absl::StrCat("the request line and headers exceed ", limits_.max_head_bytes, " bytes"));
        return -1;
      }
    } else {
      state_.body_bytes += n;
      if (state_.body_bytes > state_.body_budget) {
        Cut(413, "the request body exceeds what the route accepts");
        return -1;
      }
    }
    std::memcpy(ptr, buffer_ + offset_, n);
    offset_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    return io_.Send(ptr, size, limits_.io_timeout);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) Address(addr, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) Address(addr, ip, port);
  }
  socket_t socket() const override { return fd_; }

 private:
  // How long the next receive may wait for bytes: until the request's next deadline. Nullopt
  // once one has passed (the request is cut off), or when a head arriving slowly finds no
  // waiting slot left for its client.
  std::optional<absl::Duration> NextWait() {
    const absl::Time now = absl::Now();
    if (now >= state_.last_bytes + limits_.io_timeout) {
      Cut(408, "the client stopped sending");
      return std::nullopt;
    }
    absl::Time until = state_.last_bytes + limits_.io_timeout;
    if (state_.in_head) {
      if (now >= state_.head_deadline) {
        Cut(408, "the request headers took too long");
        return std::nullopt;
      }
      until = std::min(until, state_.head_deadline);
      if (!state_.waiting && now < state_.prompt_deadline) {
        until = std::min(until, state_.prompt_deadline);
      } else if (!state_.Wait()) {
        Cut(408, "too many of this client's requests are arriving slowly at once");
        return std::nullopt;
      }
    } else {
      const absl::Time deadline = state_.BodyDeadline();
      if (now >= deadline) {
        Cut(408, absl::StrCat("the request body arrived slower than ",
                              FormatByteSize(limits_.body_min_rate), "/s after its first ",
                              absl::FormatDuration(limits_.body_grace),
                              ", the least this server waits for"));
        return std::nullopt;
      }
      until = std::min(until, deadline);
    }
    return until - now;
  }

  void Cut(int status, std::string why) {
    state_.cut_status = status;
    state_.problem = std::move(why);
    state_.close_after_response = true;
  }

  const int fd_;
  ConnectionIo& io_;
  const HttpLimits& limits_;
  ConnectionState& state_;
  char buffer_[16 << 10];
  size_t offset_ = 0;
  size_t size_ = 0;
};

std::string PeerAddress(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  std::string ip;
  int port = 0;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) Address(addr, ip, port);
  return ip;
}

// Closes after giving the client a moment to read our answer: closing with its unread
// bytes still queued would reset the connection and could lose the answer.
void LingeringClose(int fd) {
  ::shutdown(fd, SHUT_WR);
  const absl::Time until = absl::Now() + kLingerTime;
  char sink[16 << 10];
  size_t drained = 0;
  while (drained < kLingerBytes && WaitFor(fd, POLLIN, until - absl::Now())) {
    const ssize_t n = ::recv(fd, sink, sizeof(sink), 0);
    if (n <= 0) break;
    drained += static_cast<size_t>(n);
  }
  ::close(fd);
}

void SendRaw(int fd, int status, const std::string& reason, const std::string& message) {
  const std::string response =
      absl::StrCat("HTTP/1.1 ", status, " ", reason,
                   "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
                   "Retry-After: 1\r\nContent-Length: ",
                   message.size(), "\r\n\r\n", message);
  (void)::send(fd, response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

}  // namespace

GuardedHttpServer::GuardedHttpServer(const HttpLimits& limits, bool loopback,
                                     std::vector<BodyLimit> body_limits,
                                     std::unique_ptr<HttpsContext> https)
    : limits_(limits),
      https_(std::move(https)),
      guard_(loopback, limits.allowed_hosts, body_limits),
      slots_(limits) {
  const size_t threads = static_cast<size_t>(limits_.max_connections + kSpareThreads);
  new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // httplib's own limits, as a second line behind ours.
  uint64_t largest_body = 0;
  for (const BodyLimit& b : body_limits) largest_body = std::max(largest_body, b.max_bytes);
  set_payload_max_length(largest_body);
  const auto seconds = [](absl::Duration d) {
    return std::max<int64_t>(1, absl::ToInt64Seconds(d));
  };
  set_read_timeout(seconds(limits_.io_timeout));
  set_write_timeout(seconds(limits_.io_timeout));
  set_keep_alive_timeout(seconds(limits_.keep_alive_timeout));

  auto refuse = [](const httplib::Request& req, httplib::Response& res,
                   const RequestRefusal& refusal) {
    res.status = refusal.status;
    res.set_header("Connection", "close");
    for (const auto& [name, value] : refusal.headers) res.set_header(name, value);
    res.set_content(refusal.message + "\n", "text/plain; charset=utf-8");
    if (t_connection != nullptr) t_connection->close_after_response = true;
    ComponentLogger("http")->warn("refused {} {} from {}: {}", req.method, req.path.substr(0, 200),
                                  req.remote_addr, refusal.message);
  };
  set_pre_routing_handler([this, refuse](const httplib::Request& req, httplib::Response& res) {
    if (auto refusal = guard_.Check(req)) {
      refuse(req, res, *refusal);
      return HandlerResponse::Handled;
    }
    if (t_connection != nullptr) {
      // Exactly the announced length; a chunked body (framing included) up to the limit
      // and an eighth more.
      const uint64_t limit = guard_.BodyLimitFor(req);
      uint64_t length = 0;
      const bool chunked = req.has_header("Transfer-Encoding");
      if (req.has_header("Content-Length")) {
        if (!absl::SimpleAtoi(req.get_header_value("Content-Length"), &length)) length = 0;
      }
      t_connection->body_budget = chunked ? limit + limit / 8 + (64 << 10) : length;
      // A body waits on its client for as long as it arrives: it needs a waiting slot, and
      // a client holding all of its own is answered before a byte of the body is read.
      if (chunked || length > 0) {
        if (!t_connection->Wait()) {
          refuse(req, res,
                 RequestRefusal{503,
                                absl::StrCat("503 ", req.remote_addr,
                                             " already has as many requests sending bodies or "
                                             "arriving slowly as it may; retry when one is done"),
                                {{"Retry-After", "5"}}});
          return HandlerResponse::Handled;
        }
      } else {
        t_connection->StopWaiting();
      }
    }
    return HandlerResponse::Unhandled;
  });
  // A request the stream cut off (too slow, too large) is answered for what happened to it,
  // whatever the route made of its failed read.
  set_error_handler(HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
    if (t_connection == nullptr || t_connection->cut_status == 0) {
      return HandlerResponse::Unhandled;
    }
    res.status = t_connection->cut_status;
    if (!res.has_header("Connection")) res.set_header("Connection", "close");
    res.set_content(absl::StrCat(res.status, " ", t_connection->problem, "\n"),
                    "text/plain; charset=utf-8");
    return HandlerResponse::Handled;
  }));
  // A client that asks first (Expect: 100-continue) learns of a refusal before sending.
  set_expect_100_continue_handler(
      [this, refuse](const httplib::Request& req, httplib::Response& res) {
        if (auto refusal = guard_.Check(req)) {
          refuse(req, res, *refusal);
          return refusal->status;
        }
        return 100;
      });
}

bool GuardedHttpServer::process_and_close_socket(socket_t sock) {
  auto log = ComponentLogger("http");
  const std::string client = PeerAddress(sock);
  if (!slots_.Admit(client)) {
    log->warn("refused a connection from {}: over {} open connections, or {} from one client",
              client, limits_.max_connections, limits_.max_connections_per_client);
    // A TLS client could not read a plain-text answer: it just sees the connection close.
    if (!https_) {
      SendRaw(sock, 503, "Service Unavailable", "503 too many open connections; retry shortly\n");
    }
    LingeringClose(sock);
    return false;
  }

  // The handshake counts against the head's time: a client that stalls in it is cut off
  // like one that stalls in its headers.
  std::unique_ptr<ConnectionIo> io;
  if (https_) {
    auto accepted = https_->Accept(sock, limits_.head_timeout);
    if (!accepted.ok()) {
      log->info("closed a connection from {}: {}", client, accepted.status().message());
      LingeringClose(sock);
      slots_.Release(client);
      return false;
    }
    io = *std::move(accepted);
  } else {
    io = PlainConnectionIo(sock);
  }
  bool ok = false;
  {
    ConnectionState state(limits_, slots_, client);
    LimitedStream stream(sock, *io, limits_, state);
    t_connection = &state;
    state.StartRequest();
    for (size_t left = keep_alive_max_count_; left > 0 && svr_sock_ != INVALID_SOCKET; --left) {
      bool connection_closed = false;
      ok = process_request(stream, /*close_connection=*/left == 1, connection_closed,
                           [&state](httplib::Request&) { state.StartBody(); });
      state.StopWaiting();  // its body, if any, is done
      if (!state.problem.empty()) {
        log->info("closed a connection from {}: {}", client, state.problem);
      }
      if (!ok || connection_closed || state.close_after_response) break;
      // Wait for the next request, in slices, so a stopping server is not kept waiting.
      // Idle past prompt_time, the connection waits on its client; without a slot for that,
      // it is closed (as any keep-alive may be).
      const absl::Time now = absl::Now();
      const absl::Time idle_until = now + limits_.keep_alive_timeout;
      const absl::Time prompt_until = now + limits_.prompt_time;
      bool next = stream.has_buffered();
      while (!next && svr_sock_ != INVALID_SOCKET && absl::Now() < idle_until) {
        if (absl::Now() >= prompt_until && !state.Wait()) break;
        next = WaitFor(sock, POLLIN, std::min(absl::Milliseconds(100), idle_until - absl::Now()));
      }
      if (!next) break;
      state.StartRequest();
    }
    t_connection = nullptr;
  }            // the connection's waiting slot, if it holds one, is given back
  io.reset();  // a TLS close_notify goes out before the socket closes
  LingeringClose(sock);
  slots_.Release(client);
  return ok;
}

}  // namespace farm::coordinator
