// Names a recipe's Python build environment. The coordinator shows the requirements' hash in
// a plan and the build host keys its cached virtualenvs by it (with the interpreter), so both
// must compute it the same way: one definition here.
#pragma once

#include <string>
#include <vector>

namespace farm {

// 16 hex digits of SHA-256 over the requirement specifiers in order (each length-prefixed, so
// no two lists collide by splitting differently).
std::string PythonRequirementsHash(const std::vector<std::string>& requirements);

// The cache key of a virtualenv: 24 hex digits over the interpreter it is made from (its
// resolved path and full release, e.g. "3.11.2": a patch upgrade makes a new env) and the
// requirements' hash.
std::string PythonEnvironmentKey(const std::string& interpreter_path,
                                 const std::string& interpreter_release,
                                 const std::vector<std::string>& requirements);

}  // namespace farm
