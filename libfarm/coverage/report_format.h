// JSON and text renderings of inspections and verify reports, shared by farmctl and tests.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "libfarm/coverage/inspection.h"
#include "libfarm/coverage/wheel_verifier.h"

namespace farm {

// {"files":[{"path","glibc","entries":[{"kind","arch","compressed","size"}], ...}],
//  "archs":{"sm_90":BYTES,...}}. Files also carry "needs", "containers" detail and "error".
nlohmann::json InspectionToJson(const Inspection& inspection);

// A table per file in the spirit of `cuobjdump --list-elf`, bytes per arch, and totals.
std::string FormatInspection(const Inspection& inspection);

// {"wheel","passed","archs","failures":[{"check","path","message"}],"notes":[...],"files":...}
nlohmann::json VerifyReportToJson(const VerifyReport& report, const VerifyPolicy& policy);

std::string FormatVerifyReport(const VerifyReport& report, const VerifyPolicy& policy);

}  // namespace farm
