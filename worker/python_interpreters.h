// Finds the Python interpreters this host offers recipes: real installs only. A virtualenv's
// python (the worker's own tools venv first on PATH, say) must not become the base of a
// build's environment, or builds would again depend on whatever that venv holds; pyenv-style
// shims are skipped because which Python they run depends on the directory they run in.
#pragma once

#include <string>
#include <vector>

#include "farm/v1/types.pb.h"

namespace farm::worker {

// True when `dir` is a virtualenv's bin directory (a pyvenv.cfg beside it).
bool IsVirtualenvBin(const std::string& dir);

// Where to look, in order of preference: /usr/local/bin, /usr/bin (the distribution's and
// the operator's installs, the same on every host built alike), then each $PATH directory
// that is not a virtualenv's or a shims directory, then <pyenv root>/versions/*/bin (newest
// first; $PYENV_ROOT or ~/.pyenv).
std::vector<std::string> PythonSearchDirs(const std::string& path_env, const std::string& home,
                                          const std::string& pyenv_root);

// For each python3.N found in `dirs`, the first interpreter that runs, reports version 3.N,
// is not a virtualenv and has the venv and ensurepip modules (Debian ships ensurepip in
// python3.N-venv; without it no virtualenv can be made). Sorted by version.
std::vector<farm::v1::PythonInterpreter> FindPythonInterpreters(
    const std::vector<std::string>& dirs);

// The search above with this process's PATH, HOME and PYENV_ROOT.
std::vector<farm::v1::PythonInterpreter> DetectPythonInterpreters();

// The interpreter's install (its prefix, where the stdlib is) and the directory it was found
// in: a sandboxed virtualenv made from it needs both visible.
std::vector<std::string> InterpreterPaths(const farm::v1::PythonInterpreter& python);

}  // namespace farm::worker
