// How a wheel build without network still reaches the coordinator: its farm-nvcc and farm-cc
// dial a Unix socket bound into the sandbox, and each connection to it is relayed byte for byte
// to the coordinator's TCP address. TLS stays end to end (the relay sees only ciphertext), and
// nothing else the build dials leaves the sandbox.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace farm::worker {

class CoordinatorRelay {
 public:
  // Listens on `socket_path` (created, owner-only) and relays to `coordinator` (HOST:PORT).
  static absl::StatusOr<std::unique_ptr<CoordinatorRelay>> Start(const std::string& socket_path,
                                                                 const std::string& coordinator);
  // Stops accepting, closes every relayed connection and removes the socket.
  ~CoordinatorRelay();
  CoordinatorRelay(const CoordinatorRelay&) = delete;
  CoordinatorRelay& operator=(const CoordinatorRelay&) = delete;

  // What a gRPC client dials: "unix:<socket_path>".
  std::string address() const { return "unix:" + socket_path_; }
  const std::string& socket_path() const { return socket_path_; }
  // Connections relayed so far (for tests and the build log).
  int connections() const { return connections_.load(); }

 private:
  CoordinatorRelay(std::string socket_path, std::string host, std::string port, int listen_fd,
                   int wake_read, int wake_write);
  void AcceptLoop();
  // Copies both ways between `client` and a new connection to the coordinator until both
  // sides have closed or the relay stops.
  void Relay(int client);
  int DialCoordinator() const;
  void Track(int fd);
  void Close(int fd);
  // Joins the relays that have ended, so a long build's thousands of short connections hold
  // no threads.
  void JoinEnded() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  struct RelayThread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> ended;
  };

  const std::string socket_path_;
  const std::string host_;
  const std::string port_;
  const int listen_fd_;
  // Written once by the destructor; every poll() watches the read end.
  const int wake_read_;
  const int wake_write_;
  std::atomic<int> connections_{0};
  absl::Mutex mu_;
  std::vector<int> open_fds_ ABSL_GUARDED_BY(mu_);
  std::vector<RelayThread> relays_ ABSL_GUARDED_BY(mu_);
  std::thread acceptor_;
};

}  // namespace farm::worker
