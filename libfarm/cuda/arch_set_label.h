// The arch set a wheel holds, in its version and in the index URL it is served under.
//
// A farm wheel's local version label names its toolkit and its SMs: "2.9.1+cu130.sm75.sm90"
// holds SASS for sm_75 and sm_90 built with CUDA 13.0, so two arch sets of one version are two
// file names side by side, and `pip install torch==2.9.1+cu130.sm75.sm90` picks one exactly.
// The same set, joined by "-", names its own index: /sm75-sm90/simple/ on the built-in index,
// the way PyTorch serves one index per CUDA release (/whl/cu130/).
//
// Decisions:
// - One segment per planned target, sorted as ArchList sorts them (by SM, then the plain
//   target before its "a" and "f" variants): "sm90", "sm90a", "sm100f". Canonical: the same
//   set always spells the same label, whatever order the user typed.
// - PTX is its own segment, nvcc's name for it without the "_": "8.0+PTX" is "sm80.compute80"
//   (SASS and PTX for 8.0). The farm builds PTX only beside its SASS, so a "compute" segment
//   without its "sm" one is not a farm label.
// - Lower case ASCII letters and digits only: PEP 440 local segments, which pip compares
//   case-insensitively and a URL path carries as they are.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libfarm/cuda/arch_list.h"

namespace farm {

// "sm75.sm90", "sm80.compute80": the arch part of the local label.
std::string ArchSetLabel(const ArchList& archs);

// "sm75-sm90": the arch set's index name (/sm75-sm90/simple/).
std::string ArchSetName(const ArchList& archs);

// "cu130.sm75.sm90"; just "cu130" for an empty list.
std::string FarmLocalLabel(const ToolkitVersion& cuda, const ArchList& archs);

// `version` with its local label replaced by the farm's: "2.9.1+gitabc" -> "2.9.1+cu130.sm75".
std::string WithFarmLocalLabel(absl::string_view version, const ToolkitVersion& cuda,
                               const ArchList& archs);

// The set an index name spells, when every segment is a known target ("sm75-sm90",
// "sm80-compute80"); INVALID_ARGUMENT naming the bad segment otherwise. The name need not be
// canonical: compare ArchSetName() of the result to tell.
absl::StatusOr<ArchList> ParseArchSetName(absl::string_view name);

// The index name of a version's farm label: "2.9.1+cu130.sm75.sm90" -> "sm75-sm90" (PEP 440
// spellings of the label, "+CU130-SM75_SM90", count the same). nullopt for a version without
// one: no local label, a label not of the form cuXY followed by an arch set in canonical order.
std::optional<std::string> ArchSetNameOfVersion(absl::string_view version);

}  // namespace farm
