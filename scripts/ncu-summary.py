"""Sums `ncu --metrics gpu__time_duration.sum --print-summary per-kernel` output by kernel
name: share of the run's kernel time, total ms and launches, largest first.
Usage: python3 scripts/ncu-summary.py NCU_OUTPUT [TOP]"""
import collections
import re
import sys

HEADER = re.compile(r"^  (\S.*?) \((\d+), (\d+), (\d+)\)x\((\d+), (\d+), (\d+)\), Device \d+, CC [\d.]+, Invocations (\d+)")
DURATION = re.compile(r"^\s+gpu__time_duration\.sum\s+(\w+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)")
MICROSECONDS = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def short_name(name):
    gemm = re.search(r"(\w*gemm\w*|nvjet\w*)", name)
    return gemm.group(1)[:60] if gemm else re.sub(r"[<(].*", "", name)[:60]


def main():
    total = collections.Counter()
    launches = collections.Counter()
    current = None
    with open(sys.argv[1]) as lines:
        for line in lines:
            header = HEADER.match(line)
            if header:
                current = (short_name(header.group(1)), int(header.group(8)))
                continue
            duration = DURATION.match(line)
            if duration and current:
                name, count = current
                total[name] += count * float(duration.group(4)) * MICROSECONDS[duration.group(1)]
                launches[name] += count
                current = None
    everything = sum(total.values()) or 1.0
    print(f"kernel time {everything / 1000:.1f} ms")
    print("| kernel | share | ms | launches |\n|---|---:|---:|---:|")
    for name, micros in total.most_common(int(sys.argv[2]) if len(sys.argv) > 2 else 15):
        print(f"| `{name}` | {100 * micros / everything:.1f}% | {micros / 1000:.2f} | {launches[name]} |")


if __name__ == "__main__":
    main()
