#!/usr/bin/env python3
"""What a remote compile adds to the compile itself (issue 45): this repository's own units,
one call at a time, each compiled by plain g++, through farm-cc and through distcc in turn,
round after round. A unit's added cost in a round is the tool's wall time minus plain g++'s
in the same round; the medians and 90th percentiles are over every unit and round.

The tools rotate their order per unit and round, so neither gains from what the other left
in the page cache. Every compile carries -DFARM_CALL_COST_SALT=<round> (the same for all
three), so no cache answers a round: each one is a compile. The first call of each remote
tool is a warm-up and is not counted (farm-cc's sends the toolchain, once per farm).

Run by bench/run_call_cost_bench.sh, which starts the farm and the distccd.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time


def units_of(compile_commands, repo, count):
    """`count` of libfarm's own non-test units, spread evenly over them, sorted by path."""
    with open(compile_commands) as f:
        entries = json.load(f)
    own = sorted(
        (e for e in entries
         if e["file"].startswith(os.path.join(repo, "libfarm") + "/") and e["file"].endswith(".cc")
         and not e["file"].endswith("_test.cc")),
        key=lambda e: e["file"])
    if len(own) < count:
        sys.exit(f"error: {compile_commands} has {len(own)} libfarm units, fewer than {count}. "
                 "Fix: bash scripts/build.sh, or a smaller --units")
    step = len(own) / count
    return [own[int(i * step)] for i in range(count)]


def compile_argv(entry, output, salt):
    """The unit's own command line, writing `output`, without a dependency file."""
    words = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out = []
    skip = False
    for i, w in enumerate(words):
        if skip:
            skip = False
            continue
        if w in ("-o", "-MT", "-MF", "-MQ"):
            skip = True
            if w == "-o":
                out += ["-o", output]
            continue
        if w in ("-MD", "-MMD"):
            continue
        out.append(w)
    return out + [f"-DFARM_CALL_COST_SALT={salt}"]


def timed(argv, cwd, env):
    start = time.monotonic()
    r = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    took = time.monotonic() - start
    if r.returncode != 0:
        sys.stderr.write(r.stderr.decode(errors="replace")[-4000:])
        sys.exit(f"error: {shlex.join(argv)} failed (exit {r.returncode}); its output is above")
    return took


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compile-commands", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--units", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--farm-cc", required=True)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--distcc-hosts", required=True)
    ap.add_argument("--distcc-dir", required=True)
    ap.add_argument("--samples", help="write every sample here as JSON lines")
    args = ap.parse_args()

    units = units_of(args.compile_commands, args.repo, args.units)
    base = dict(os.environ)
    tools = {
        "plain": ([], base),
        "farm-cc": ([args.farm_cc], dict(base, FARM_CC_STRICT="1")),
        "distcc": (["distcc"], dict(base, DISTCC_HOSTS=args.distcc_hosts,
                                    DISTCC_DIR=args.distcc_dir, DISTCC_FALLBACK="0",
                                    DISTCC_SKIP_LOCAL_RETRY="1")),
    }
    names = list(tools)
    for name in names:
        os.makedirs(os.path.join(args.out_dir, name), exist_ok=True)

    def run(name, index, unit, salt):
        prefix, env = tools[name]
        output = os.path.join(args.out_dir, name, f"{index}.o")
        return timed(prefix + compile_argv(unit, output, salt), unit["directory"], env)

    for name in ("farm-cc", "distcc"):
        run(name, "warm-up", units[0], "warmup")

    times = {name: [] for name in names}  # (unit index, round, seconds)
    samples = open(args.samples, "w") if args.samples else None
    for r in range(args.rounds):
        for i, unit in enumerate(units):
            order = names[(i + r) % 3:] + names[:(i + r) % 3]
            took = {name: run(name, i, unit, r) for name in order}
            for name in names:
                times[name].append((i, r, took[name]))
            if samples:
                samples.write(json.dumps({"unit": unit["file"], "round": r, **took}) + "\n")
        same = {name: sum(
            1 for i in range(len(units))
            if open(os.path.join(args.out_dir, name, f"{i}.o"), "rb").read() ==
            open(os.path.join(args.out_dir, "plain", f"{i}.o"), "rb").read())
                for name in ("farm-cc", "distcc")}
        print(f"round {r + 1}: objects byte-identical to plain g++'s: farm-cc {same['farm-cc']} "
              f"of {len(units)}, distcc {same['distcc']} of {len(units)}", flush=True)

    plain = {(i, r): t for i, r, t in times["plain"]}
    print(f"\n{len(units)} units of libfarm x {args.rounds} rounds, one call at a time")
    print(f"plain g++: median {statistics.median(plain.values()):.3f} s a compile, "
          f"{sum(plain.values()):.1f} s in all")
    print(f"{'tool':<8} {'median added':>13} {'p90 added':>10} {'mean added':>11} "
          f"{'median ratio':>13}")
    added = {}
    for name in ("farm-cc", "distcc"):
        extra = [t - plain[(i, r)] for i, r, t in times[name]]
        ratio = [t / plain[(i, r)] for i, r, t in times[name]]
        added[name] = extra
        print(f"{name:<8} {statistics.median(extra) * 1000:>10.0f} ms {quantile(extra, 0.9) * 1000:>7.0f} ms "
              f"{statistics.fmean(extra) * 1000:>8.0f} ms {statistics.median(ratio):>13.3f}")
    print(f"farm-cc / distcc, median added: "
          f"{statistics.median(added['farm-cc']) * 1000:.0f} ms against "
          f"{statistics.median(added['distcc']) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
