#!/usr/bin/env python3
"""Checks the lock annotations (ABSL_GUARDED_BY, ABSL_EXCLUSIVE_LOCKS_REQUIRED, ...) that GCC
ignores: every source whose own file or header uses them is compiled by clang with
-fsyntax-only -Wthread-safety -Werror, with the flags of its entry in the build's
compile_commands.json. Exits 1 naming each violation; 2 when clang or the build is missing."""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DIRS = ["coordinator", "worker", "libfarm", "cli", "farm_nvcc"]
ANNOTATION = re.compile(r"ABSL_(GUARDED_BY|PT_GUARDED_BY|EXCLUSIVE_LOCKS_REQUIRED|"
                        r"SHARED_LOCKS_REQUIRED|LOCKS_EXCLUDED|ACQUIRED_BEFORE|ACQUIRED_AFTER)")


def annotated_sources():
    found = set()
    for top in DIRS:
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                if not name.endswith(".cc"):
                    continue
                source = os.path.join(dirpath, name)
                header = source[:-3] + ".h"
                texts = [open(source, encoding="utf-8").read()]
                if os.path.exists(header):
                    texts.append(open(header, encoding="utf-8").read())
                if any(ANNOTATION.search(t) for t in texts):
                    found.add(source)
    return found


def clang_command(entry, clang):
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    # Drop launchers ("env A=B ccache"): start at the compiler itself.
    while args and (args[0] == "env" or "=" in args[0] or args[0].endswith("ccache")):
        args.pop(0)
    kept, skip = [], False
    for a in args[1:]:
        if skip:
            skip = False
        elif a in ("-o", "-MF", "-MT"):
            skip = True
        elif a not in ("-c", "-MD") and a != entry["file"]:
            kept.append(a)
    return [clang] + kept + ["-fsyntax-only", "-Wthread-safety", "-Werror=thread-safety",
                             entry["file"]]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    clang = shutil.which("clang++")
    database = os.path.join(build, "compile_commands.json")
    if clang is None:
        print("thread-safety: clang++ is missing. Fix: bash scripts/install-deps.sh", file=sys.stderr)
        return 2
    if not os.path.exists(database):
        print(f"thread-safety: no {database}. Fix: bash scripts/build.sh first", file=sys.stderr)
        return 2
    wanted = annotated_sources()
    entries = [e for e in json.load(open(database)) if e["file"] in wanted]
    missing = wanted - {e["file"] for e in entries}
    if missing:
        print("thread-safety: not in the build: " + ", ".join(sorted(missing)), file=sys.stderr)
        return 2

    def check(entry):
        r = subprocess.run(clang_command(entry, clang), cwd=entry["directory"],
                           capture_output=True, text=True)
        return entry["file"], r.returncode, r.stderr

    failed = 0
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for source, code, stderr in pool.map(check, entries):
            if code != 0:
                failed += 1
                print(stderr, file=sys.stderr)
    print(f"thread-safety: {len(entries)} annotated sources checked with clang -Wthread-safety, "
          f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
