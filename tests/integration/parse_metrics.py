"""Parses Prometheus text format from stdin strictly; prints the samples as JSON.

Used by status_test: prometheus_client's parser reads the families, and the checks below
reject what it lets through but Prometheus would not scrape cleanly (a sample before its
TYPE, a malformed line, histogram buckets that are not cumulative or disagree with _count).
Exit status 1 with the reason on stderr when the text is not valid.
"""
import json
import math
import re
import sys

from prometheus_client.parser import text_string_to_metric_families

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(rf"^({NAME})(\{{(?:{LABEL})(?:,{LABEL})*\}})? (\S+)( -?\d+)?$")
VALUE = re.compile(r"^(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|[+-]?Inf|NaN)$")


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def main():
    text = sys.stdin.read()
    if not text.endswith("\n"):
        fail("the exposition does not end with a newline")
    typed = {}
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            parts = line.split(" ")
            if len(parts) != 4 or parts[3] not in ("counter", "gauge", "histogram", "summary", "untyped"):
                fail(f"line {n}: bad TYPE line: {line!r}")
            if parts[2] in typed:
                fail(f"line {n}: second TYPE for {parts[2]}")
            typed[parts[2]] = parts[3]
            continue
        if line.startswith("#") or not line:
            fail(f"line {n}: unexpected line: {line!r}")
        m = SAMPLE.match(line)
        if not m or not VALUE.match(m.group(3)):
            fail(f"line {n}: not a valid sample: {line!r}")
        name = m.group(1)
        family = re.sub(r"_(bucket|sum|count)$", "", name) if name not in typed else name
        if family not in typed:
            fail(f"line {n}: sample {name} comes before a TYPE line for it")

    out = {}
    for family in text_string_to_metric_families(text):
        samples = [{"name": s.name, "labels": s.labels, "value": s.value} for s in family.samples]
        out[family.name] = {"type": family.type, "samples": samples}
        if family.type == "histogram":
            series = {}
            for s in family.samples:
                key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
                series.setdefault(key, {"buckets": [], "count": None})
                if s.name.endswith("_bucket"):
                    series[key]["buckets"].append((float(s.labels["le"]), s.value))
                elif s.name.endswith("_count"):
                    series[key]["count"] = s.value
            for key, h in series.items():
                buckets = sorted(h["buckets"])
                if not buckets or not math.isinf(buckets[-1][0]):
                    fail(f"{family.name}{dict(key)}: no +Inf bucket")
                counts = [c for _, c in buckets]
                if counts != sorted(counts):
                    fail(f"{family.name}{dict(key)}: buckets are not cumulative: {buckets}")
                if counts[-1] != h["count"]:
                    fail(f"{family.name}{dict(key)}: +Inf bucket {counts[-1]} != _count {h['count']}")
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
