// What real C++ translation units hold: the standard library, a template, an anonymous
// namespace, __FILE__ in a string, a macro from the command line, and a switch whose case
// falls through with GCC's comment (silences -Wimplicit-fallthrough), and a __has_include probe.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "shapes.h"

// Found only with -isystem .../sys: a probe GCC's -M does not list.
#if __has_include(<shapes_sys.h>)
#include <shapes_sys.h>
#else
inline constexpr int kShapesSys = 0;
#endif

#ifndef SHAPES_SCALE
#error "SHAPES_SCALE comes from -D"
#endif

namespace {
template <typename T>
T Twice(T x) {
  return x + x;
}
}  // namespace

int Shapes(int n) {
  std::map<std::string, std::vector<int>> m;
  m["a"].push_back(Twice(n) * SHAPES_SCALE + kShapesSys);
  switch (n) {
    case 1:
      n += kShapesBase;
      /* fall through */
    case 2:
      return static_cast<int>(m["a"].size()) + n;
    default:
      break;
  }
  std::printf("%s\n", __FILE__);
  return 0;
}
