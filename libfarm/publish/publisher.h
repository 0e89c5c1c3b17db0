// Where a finished wheel goes: the coordinator's built-in index, any PyPI-compatible
// repository (legacy upload API), or a command hook. The submit flow and `farmctl publish`
// hold a Publisher and do not care which.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace farm {

struct PublishResult {
  std::string location;          // where the wheel can be found now (URL, or the target's name)
  bool already_present = false;  // the target already held this exact file (or said so)
  std::string detail;            // e.g. the server's answer or the hook's output, for logs
};

class Publisher {
 public:
  virtual ~Publisher() = default;
  // Human-readable target, for logs and messages ("https://pypi.example.com/legacy/").
  virtual std::string Describe() const = 0;
  // Publishes the wheel at `wheel_path`. Errors say what went wrong and how to fix it;
  // UNAUTHENTICATED for refused credentials, FAILED_PRECONDITION when the target already
  // holds a different file of that name.
  virtual absl::StatusOr<PublishResult> Publish(const std::string& wheel_path) = 0;
};

}  // namespace farm
