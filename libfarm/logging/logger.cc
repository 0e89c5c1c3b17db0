#include "libfarm/logging/logger.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include "absl/synchronization/mutex.h"

namespace farm {

std::shared_ptr<spdlog::logger> ComponentLogger(const std::string& component) {
  // spdlog's registry throws when two threads both find no logger and both register one
  // (the coordinator's HTTP threads did, and the exception ended the process).
  static absl::Mutex* const mu = new absl::Mutex;  // never destroyed: loggers outlive main
  absl::MutexLock lock(mu);
  if (auto existing = spdlog::get(component)) return existing;
  auto logger = spdlog::stderr_color_mt(component);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");
  logger->set_level(spdlog::get_level());
  logger->flush_on(spdlog::level::info);
  return logger;
}

bool SetLogLevel(const std::string& level) {
  auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") return false;
  spdlog::set_level(parsed);
  return true;
}

}  // namespace farm
