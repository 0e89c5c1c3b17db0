// Publishes a wheel by running a configured command, e.g.
//   gh release upload v1 {wheel}      or      aws s3 cp {wheel} s3://bucket/{filename}
// The argv template is run directly (no shell), so a wheel name can never inject a command.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libfarm/publish/publisher.h"

namespace farm {

class CommandHookPublisher : public Publisher {
 public:
  // Placeholders, replaced inside any argument: {wheel} (absolute path), {filename},
  // {name} and {version} (from the file name). Any other {...} is refused here, so a typo
  // fails before a build rather than after it.
  static absl::StatusOr<std::unique_ptr<CommandHookPublisher>> Create(
      std::vector<std::string> argv_template, absl::Duration timeout = absl::Minutes(30));

  std::string Describe() const override;
  // Runs the command; a non-zero exit is an error carrying the tail of its stderr.
  absl::StatusOr<PublishResult> Publish(const std::string& wheel_path) override;

 private:
  CommandHookPublisher(std::vector<std::string> argv_template, absl::Duration timeout)
      : argv_template_(std::move(argv_template)), timeout_(timeout) {}

  std::vector<std::string> argv_template_;
  absl::Duration timeout_;
};

}  // namespace farm
