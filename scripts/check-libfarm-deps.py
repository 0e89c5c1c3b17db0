#!/usr/bin/env python3
"""Checks libfarm's folder graph: each libfarm/<folder>/ is one library, farm_<folder>, whose
target_link_libraries name exactly the farm_* libraries of the folders its non-test files
include, and the folders form no cycle. Prints the graph's edges and exits 1 otherwise."""
import os
import re
import sys

LIBFARM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "libfarm")
INCLUDE = re.compile(r'^\s*#\s*include\s+"libfarm/([^/"]+)/', re.M)


def included(folder):
    found = set()
    for name in os.listdir(os.path.join(LIBFARM, folder)):
        if name.endswith((".h", ".cc")) and not name.endswith("_test.cc"):
            with open(os.path.join(LIBFARM, folder, name), encoding="utf-8") as f:
                found.update(INCLUDE.findall(f.read()))
    return found - {folder}


def linked(folder, folders):
    path = os.path.join(LIBFARM, folder, "CMakeLists.txt")
    text = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    if not re.search(rf"add_library\(\s*farm_{folder}\b", text):
        return None
    calls = re.findall(rf"target_link_libraries\(\s*farm_{folder}\b([^)]*)\)", text)
    names = re.findall(r"\bfarm_(\w+)", " ".join(calls))
    return {n for n in names if n in folders}


def cycle(graph):
    state = {}  # folder -> "open" while on the DFS path, "done" after

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = "done"
        return None

    for start in sorted(graph):
        found = start not in state and visit(start, [start])
        if found:
            return found
    return None


def main():
    folders = sorted(d for d in os.listdir(LIBFARM) if os.path.isdir(os.path.join(LIBFARM, d)))
    errors, graph = [], {}
    for folder in folders:
        includes, links = included(folder), linked(folder, folders)
        if links is None:
            errors.append(f"libfarm/{folder}/CMakeLists.txt has no add_library(farm_{folder} ...)")
            links = set()
        for dep in sorted(includes - links):
            errors.append(f"libfarm/{folder}/ includes libfarm/{dep}/ but farm_{folder} does "
                          f"not link farm_{dep}")
        for dep in sorted(links - includes):
            errors.append(f"farm_{folder} links farm_{dep} but no non-test file of "
                          f"libfarm/{folder}/ includes libfarm/{dep}/")
        graph[folder] = includes | links
    loop = cycle(graph)
    if loop:
        errors.append("cycle: " + " -> ".join(loop))
    if errors:
        print("libfarm folder graph:", file=sys.stderr)
        for folder in folders:
            for dep in sorted(graph[folder]):
                print(f"  {folder} -> {dep}", file=sys.stderr)
        for e in errors:
            print(f"check-libfarm-deps: {e}", file=sys.stderr)
        return 1
    print(f"check-libfarm-deps: {len(folders)} libfarm folders, one library each, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
