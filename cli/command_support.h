// Small pieces every farmctl command uses: connecting, printing, failing.
#pragma once

#include <memory>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/cli_context.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/client/farm_client.h"

namespace farm::cli {

// The coordinator, farm dir, token file and TLS files the global options ask for.
CoordinatorChoice ChoiceOf(const GlobalOptions& global);

absl::StatusOr<std::unique_ptr<FarmClient>> ConnectToFarm(const GlobalOptions& global);

// Logs the error for the user and returns the exit code that goes with it.
int Fail(const absl::Status& status);

void PrintJson(const nlohmann::json& value);

}  // namespace farm::cli
