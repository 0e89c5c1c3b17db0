// Publishes a wheel by running a configured command, e.g.
//   ["gh", "release", "upload", "v1", "{wheel}"]   or   ["aws", "s3", "cp", "{wheel}", "s3://b/"]
// The argv template is run directly (no shell): each value is one argument, so a wheel name
// can never become a command. The values are also in the hook's environment: FARM_WHEEL,
// FARM_WHEEL_FILENAME, FARM_WHEEL_NAME, FARM_WHEEL_VERSION.
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
  // {name} and {version} (from the file name). Refused (CheckTemplate), so that a mistake
  // fails before a build rather than after it: any other {...}, and a placeholder inside the
  // script a shell runs (`sh -c "... {wheel}"`), where a value would become shell text.
  static absl::StatusOr<std::unique_ptr<CommandHookPublisher>> Create(
      std::vector<std::string> argv_template, absl::Duration timeout = absl::Minutes(30));

  // What Create checks, for a recipe loader to refuse a bad hook when it reads it.
  static absl::Status CheckTemplate(const std::vector<std::string>& argv_template);

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
