"""Wheelfarm's wheel repair step (worker/wheel_repair.h), run by the farm's tool environment's
Python in the build's sandbox, without network, after the recipe's command built the wheel.

    python wheel_repair.py WHEEL OUT_DIR --exclude PATTERN... --driver PATTERN...

auditwheel (pinned by the worker) decides what the wheel needs and carries it; this script
only adds what the farm asks of it before the repair, with the extension and the fix named:

- a member of the wheel that is a driver library (--driver, libcuda.so*): a second copy of
  the driver's library would be loaded instead of the host's and break on any other driver;
- a library to carry that has no soname (or is linked by path): a copy renamed with a hash
  cannot be matched to its DT_NEEDED entry the way every other carried library is;
- a library to carry that is not on the build host at all;
- an ELF file the wheel's RECORD does not list (auditwheel reads only what RECORD lists).

Then `auditwheel repair --plat auto` writes the repaired wheel into OUT_DIR, tagged with the
most compatible manylinux policy the wheel meets (the coordinator keeps that tag unless the
wheel's glibc symbols need more). A wheel with no ELF file is left as built: nothing written.
Every line the farm reads starts with "wheelfarm: "; the last one of a failure is the reason.
"""
import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from fnmatch import fnmatch
from pathlib import Path


def say(text):
    print("wheelfarm: " + text, flush=True)


def fail(text):
    say(text)
    sys.exit(3)


def matches(name, patterns):
    return any(fnmatch(name, p) for p in patterns)


def soname_of(path):
    """The DT_SONAME of the ELF file at `path`, None when it has none."""
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    with open(path, "rb") as f:
        for section in ELFFile(f).iter_sections():
            if isinstance(section, DynamicSection):
                for tag in section.iter_tags():
                    if tag.entry.d_tag == "DT_SONAME":
                        return tag.soname
    return None


def linux_named(wheel, workdir, arch):
    """The wheel copied under its name with the platform tag linux_<arch>: auditwheel adds its
    tags to those of the file name, and a tag the build's code chose must not stay among them."""
    m = re.match(r"^(?P<head>.+)-(?P<plat>[^-]+)\.whl$", wheel.name)
    if m is None:
        fail("the build's wheel %s has no platform tag in its name" % wheel.name)
    renamed = workdir / ("%s-linux_%s.whl" % (m.group("head"), arch))
    shutil.copyfile(wheel, renamed)
    return renamed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("wheel", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--exclude", action="append", default=[])
    parser.add_argument("--driver", action="append", default=[])
    args = parser.parse_args()

    from importlib.metadata import version

    from auditwheel.error import NonPlatformWheelError
    from auditwheel.lddtree import LIBPYTHON_RE
    from auditwheel.wheel_abi import analyze_wheel_abi

    with zipfile.ZipFile(args.wheel) as z:
        for member in z.namelist():
            if matches(os.path.basename(member), args.driver):
                fail(
                    "the wheel ships %s, a copy of the NVIDIA driver's own library: the driver "
                    "installs it, and a second copy would be loaded instead of the host's and "
                    "break on any other driver release. Fix: leave it out of the package (link "
                    "against the toolkit's stub, lib64/stubs; the loader finds the driver's at "
                    "run time)" % member)

        # auditwheel reads the files RECORD lists, and only those: an ELF file left out of it
        # would leave the wheel with libraries nobody looked at.
        record = [n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/RECORD")]
        listed = set()
        if len(record) == 1:
            text = z.read(record[0]).decode("utf-8", "replace")
            listed = {row[0] for row in csv.reader(text.splitlines()) if row}
        for info in z.infolist():
            if info.is_dir() or info.filename in listed:
                continue
            with z.open(info) as f:
                if f.read(4) == b"\x7fELF":
                    fail(
                        "%s is an ELF file the wheel's RECORD does not list, so no tool checks "
                        "what it needs. Fix: build the wheel with the package's own backend "
                        "(pip wheel), which lists every file in RECORD" % info.filename)

    excluded = frozenset(args.exclude)
    try:
        abi = analyze_wheel_abi(None, None, args.wheel, excluded, disable_isa_ext_check=False,
                                allow_graft=True)
    except NonPlatformWheelError:
        say("auditwheel %s: the wheel holds no ELF file, nothing to carry; kept as built"
            % version("auditwheel"))
        return 0
    policies = abi.policies
    policy = abi.overall_policy if abi.overall_policy != policies.linux else policies.lowest

    # What repair will carry, per ELF file of the wheel (auditwheel's own analysis).
    carry = {}  # realpath -> (soname, [needed by])
    for fn, refs in sorted(abi.full_external_refs.items()):
        member = str(fn)
        for soname, path in sorted(refs[policy.name].libs.items()):
            if LIBPYTHON_RE.match(soname):
                continue  # auditwheel drops a link to libpython: the interpreter is the one
            if path is None:
                fail(
                    "%s needs %s, which the manylinux policy does not allow a wheel to take from "
                    "the system and which is not on the build host either (auditwheel searched "
                    "its RPATH/RUNPATH, LD_LIBRARY_PATH and the loader's paths), so it cannot be "
                    "carried in the wheel. Fix: install the library (its -dev package) on the "
                    "build host, or point LD_LIBRARY_PATH in the recipe's [build.env] at it"
                    % (member, soname))
            if "/" in soname or soname_of(path) is None:
                fail(
                    "%s needs %s (%s), a library with no soname, which cannot be carried: the "
                    "wheel's copy is renamed with a hash and found by its soname, and this one "
                    "has none (it was linked by its file). Fix: give the library a soname "
                    "(-Wl,-soname,%s; CMake sets one for SHARED libraries unless NO_SONAME), "
                    "or link it statically" % (member, soname, path, os.path.basename(soname)))
            carry.setdefault(str(path), (soname, []))[1].append(member)
    for path, (soname, users) in sorted(carry.items()):
        say("carrying %s from %s (%d bytes), needed by %s"
            % (soname, path, os.path.getsize(path), ", ".join(users)))
    if not carry:
        say("auditwheel %s: nothing to carry (every library the wheel needs is allowed by %s "
            "or left out)" % (version("auditwheel"), policy.name))

    args.out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = linux_named(args.wheel, Path(tmp), policies.architecture.value)
        argv = [sys.executable, "-m", "auditwheel", "repair", "--plat", "auto", "--only-plat",
                "-w", str(args.out_dir)]
        for pattern in args.exclude:
            argv += ["--exclude", pattern]
        argv.append(str(wheel))
        print("+ " + " ".join(argv), flush=True)
        rc = subprocess.call(argv)
        if rc != 0:
            fail("auditwheel repair failed (exit %d); its reason is above. Fix: what it names "
                 "(a library too new for any manylinux policy: build on an older system)" % rc)
    repaired = sorted(args.out_dir.glob("*.whl"))
    if len(repaired) != 1:
        fail("auditwheel repair left %d wheels, expected one" % len(repaired))
    with zipfile.ZipFile(repaired[0]) as z:
        for info in z.infolist():
            parts = info.filename.split("/")
            if len(parts) == 2 and parts[0].endswith(".libs") and parts[1]:
                say("carried %s (%d bytes)" % (info.filename, info.file_size))
    say("repaired by auditwheel %s: %s (%s)" % (version("auditwheel"), repaired[0].name,
                                               policy.name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
