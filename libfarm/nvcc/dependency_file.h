// The dependency file of `nvcc -MD/-MMD -MF F -MT T`, written without preprocessing again.
// nvcc itself runs no `-M` step for it: it lists the files named by the line markers of its
// device preprocesses (in plan order), then of its host preprocess, each once. farm-nvcc
// has those outputs already, so the file costs a read instead of a fourth preprocess.
#pragma once

#include <string>
#include <vector>

#include "libfarm/nvcc/line_markers.h"
#include "libfarm/nvcc/nvcc_command_line.h"

namespace farm {

// The text nvcc writes, byte for byte: "T : first \" then one indented file per line,
// spaces escaped as "\ " and nothing else; system headers left out for -MMD; with -MP, an
// empty rule for every file after the first. `preprocessed` holds each preprocess's files,
// device preprocesses first in plan order, the host preprocess last.
std::string NvccDependencyText(const std::vector<std::vector<LineMarkerFile>>& preprocessed,
                               const DependencyOptions& options);

}  // namespace farm
