// Where `farmctl toolkit install` gets NVIDIA's wheels: pip, found on this host, so that
// the host's pip configuration (PIP_INDEX_URL, proxies, certificates, find-links) applies.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "libfarm/toolkit/toolkit_pins.h"

namespace farm {

class WheelSource {
 public:
  virtual ~WheelSource() = default;
  // Downloads `wheel` built for `platform_tag` ("manylinux2014_aarch64") into `dest_dir` and
  // returns the file's path. The error names the package and, when the version does not
  // exist, the versions on offer.
  virtual absl::StatusOr<std::string> Download(const PinnedWheel& wheel,
                                               const std::string& platform_tag,
                                               const std::string& dest_dir) = 0;
  // The versions of `package` on offer for `platform_tag`, newest first: "13.5.37, 13.4.92".
  virtual absl::StatusOr<std::string> VersionsOnOffer(const std::string& package,
                                                      const std::string& platform_tag) = 0;
};

class PipWheelSource final : public WheelSource {
 public:
  // `python` must have pip; empty: python3 on PATH. FAILED_PRECONDITION with a fix when
  // there is no such interpreter.
  static absl::StatusOr<std::unique_ptr<PipWheelSource>> Find(const std::string& python);

  absl::StatusOr<std::string> Download(const PinnedWheel& wheel, const std::string& platform_tag,
                                       const std::string& dest_dir) override;
  absl::StatusOr<std::string> VersionsOnOffer(const std::string& package,
                                              const std::string& platform_tag) override;

  const std::string& python() const { return python_; }

 private:
  explicit PipWheelSource(std::string python) : python_(std::move(python)) {}
  std::string python_;
};

// pip's "ERROR: ..." lines, joined by "; " (what a failed pip says, without its progress).
std::string PipErrors(const std::string& output);

// "13.5.37, 13.4.92, ..." from `pip index versions` output ("Available versions: ..."),
// or empty.
std::string PipAvailableVersions(const std::string& output);

}  // namespace farm
