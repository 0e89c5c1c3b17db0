#!/usr/bin/env python3
"""Turns `nvcc --time FILE.csv` measurements into a fleet-simulator workload profile.

nvcc's --time writes one CSV row per phase of each compile: host preprocess
("gcc (preprocessing 4)"), one device preprocess per arch ("gcc (preprocessing 1)"), cicc
and ptxas per arch, cudafe++, fatbinary and the host compile ("gcc (compiling)"). Each source
file becomes one TU class of the profile (count 1; --count to scale), its device cost per arch
being cicc + ptxas, the part farm-nvcc sends to the farm.

  nvcc_time_profile.py --csv a.csv [--csv b.csv ...] -o profile.json
  nvcc_time_profile.py --run -o profile.json -- nvcc -c k.cu -gencode ... (measures it here,
      with the largest child process's peak RSS as the device compiles' peak RAM)
"""
import argparse
import csv
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict


def sm_of(arch):
    """compute_90 / sm_90 -> sm_90 (ptxas names the real arch, cicc the virtual one)."""
    arch = arch.strip()
    return "sm_" + arch.split("_", 1)[1] if "_" in arch else arch


# nvcc --time's columns, in its order.
COLUMNS = ["source file name", "phase name", "phase input files", "phase output file", "arch",
           "tool", "metric", "unit"]
col = {name: i for i, name in enumerate(COLUMNS)}


def read_phases(paths):
    """{source: [(phase, arch, seconds)]} from nvcc --time CSVs."""
    phases = defaultdict(list)
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.reader(f):
                row = [c.strip() for c in row]
                # nvcc writes the header only into a new file; it appends rows without one.
                if len(row) < len(COLUMNS) or row[0] == COLUMNS[0] or not row[0]:
                    continue
                unit = row[col["unit"]]
                value = float(row[col["metric"]])
                seconds = value / 1000.0 if unit == "ms" else value
                phases[row[col["source file name"]]].append(
                    (row[col["phase name"]], row[col["arch"]], seconds))
    return phases


def tu_class(source, rows, count, peak_ram_mib):
    k = {"name": os.path.basename(source), "count": count,
         "host_preprocess_s": 0.0, "device_preprocess_s": 0.0, "cudafe_s": 0.0,
         "fatbinary_s": 0.0, "host_compile_s": 0.0, "device_by_arch": {}}
    device_pp = []
    device = defaultdict(float)
    for phase, arch, s in rows:
        if phase == "gcc (preprocessing 4)":
            k["host_preprocess_s"] += s
        elif phase == "gcc (preprocessing 1)":
            device_pp.append(s)
        elif phase == "cudafe++":
            k["cudafe_s"] += s
        elif phase in ("cicc", "ptxas"):
            device[sm_of(arch)] += s
        elif phase == "fatbinary":
            k["fatbinary_s"] += s
        elif phase == "gcc (compiling)":
            k["host_compile_s"] += s
    # The simulator takes one device preprocess time for every arch: their mean.
    if device_pp:
        k["device_preprocess_s"] = sum(device_pp) / len(device_pp)
    for arch, s in sorted(device.items()):
        k["device_by_arch"][arch] = {"seconds": round(s, 4), "peak_ram_mib": peak_ram_mib}
    for key in ("host_preprocess_s", "device_preprocess_s", "cudafe_s", "fatbinary_s",
                "host_compile_s"):
        k[key] = round(k[key], 4)
    return k, sorted(device)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--csv", action="append", default=[], help="an nvcc --time CSV")
    p.add_argument("--run", action="store_true", help="run the nvcc command after --")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--name", default="measured")
    p.add_argument("--keep-csv", help="with --run: copy nvcc's CSV here")
    p.add_argument("--count", type=int, default=1, help="TUs per measured source")
    p.add_argument("--peak-ram-mib", type=float, default=0,
                   help="device compiles' peak RAM when not measured with --run")
    p.add_argument("--cores", type=int, default=os.cpu_count())
    p.add_argument("--ram-gib", type=float,
                   default=os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30)
    p.add_argument("command", nargs="*")
    a = p.parse_args()
    peak = a.peak_ram_mib
    csvs = list(a.csv)
    source = "nvcc --time CSVs: " + ", ".join(a.csv)
    if a.run:
        if not a.command:
            sys.exit("nvcc_time_profile.py: --run needs a command after --. "
                     "Fix: ... --run -o p.json -- nvcc -c k.cu -gencode ...")
        out = os.path.join(tempfile.mkdtemp(), "nvcc-time.csv")
        subprocess.run(a.command + ["--time", out], check=True)
        # ru_maxrss of children: the largest single process nvcc ran (cicc, in practice), KiB.
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
        csvs.append(out)
        if a.keep_csv:
            shutil.copyfile(out, a.keep_csv)
        source = "measured on {} ({}, {} cores): {}".format(
            platform.node(), platform.machine(), os.cpu_count(), " ".join(a.command))
    if not csvs:
        sys.exit("nvcc_time_profile.py: no measurements. Fix: pass --csv FILE or --run -- nvcc ...")
    classes, archs = [], set()
    for src, rows in sorted(read_phases(csvs).items()):
        k, a_archs = tu_class(src, rows, a.count, round(peak))
        classes.append(k)
        archs.update(a_archs)
    profile = {
        "name": a.name,
        "source": source,
        "notes": "seconds are wall times nvcc --time printed; device_by_arch is cicc + ptxas, "
                 "the farm action; peak_ram_mib is the largest process's max RSS (--run) or "
                 "--peak-ram-mib",
        "archs": sorted(archs, key=lambda s: int("".join(c for c in s if c.isdigit()) or 0)),
        "build_host": {"cores": a.cores, "ram_gib": round(a.ram_gib, 1), "job_memory_gib": 4,
                       "source": "the measuring machine"},
        "cuda_tus": classes,
        "link_s": 0,
    }
    with open(a.output, "w") as f:
        json.dump(profile, f, indent=2)
        f.write("\n")
    print("{}: {} TU class(es), archs {}".format(a.output, len(classes), ", ".join(profile["archs"])))


if __name__ == "__main__":
    main()
