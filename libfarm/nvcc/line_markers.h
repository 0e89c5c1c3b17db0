// The files a preprocessed translation unit was read from, as its line markers name them
// (`# 12 "/usr/include/stdio.h" 1 3 4`, `#line 7 "k.h"`). farm-nvcc needs them twice: the
// compile cache checks every one of them, and the -MD dependency file lists them.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace farm {

struct LineMarkerFile {
  std::string path;     // as the preprocessor spelled it (relative stays relative)
  bool system = false;  // flag 3 on its first marker: a system header (-isystem, /usr/include)
  // Some line of it declares a __device__ or __global__ function, as a device preprocess
  // (cicc's input) spells them: `__attribute__((device))`, `__attribute__((global))`.
  bool device_code = false;
};

// Each file once, in order of its first marker; the preprocessor's pseudo-files
// (<built-in>, <command-line>) and gcc's working-directory marker ("/dir//", with -g) are
// left out. Only whole lines starting with '#' count, so
// strings and pragmas that look like markers are not.
std::vector<LineMarkerFile> LineMarkerFiles(absl::string_view preprocessed_text);

// `preprocessed_text` with each line marker that names a relative file naming it from `dir`
// instead, the way cicc resolves such a name for -lineinfo (joined, not normalized:
// `# 1 "src/k.cu"` from /b is `# 1 "/b/src/k.cu"`), so that cicc run in another directory
// names the same files. Absolute names and the pseudo-files (<built-in>) stay as they are.
std::string LineMarkersFrom(absl::string_view preprocessed_text, absl::string_view dir);

}  // namespace farm
