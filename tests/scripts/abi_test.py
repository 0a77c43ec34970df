#!/usr/bin/env python3
"""Checks libtroupe's exported symbols (nm -DC --defined-only): no CAF,
Eigen, fmt, protobuf or ONNX symbol, and no Troupe symbol whose name the
public headers (include/troupe/) do not declare: the library exports its
public API and nothing else of its own.

usage: abi_test.py LIBTROUPE INCLUDE_DIR
"""
import glob
import os
import re
import subprocess
import sys

FOREIGN = ("caf::", "Eigen::", "fmt::", "google::", "onnx::")


def public_words(include_dir):
    words = set()
    for header in glob.glob(os.path.join(include_dir, "troupe", "*.hpp")):
        with open(header) as f:
            words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", f.read()))
    return words


def troupe_name(symbol):
    """The declared name a Troupe symbol stands for: callbacks::csv_logger
    gives csv_logger, sequential::fit gives sequential; None for a symbol
    that is not Troupe's own (a std template over Troupe's types)."""
    found = re.match(r"(?:typeinfo name for |typeinfo for |vtable for )?troupe::"
                     r"(?:callbacks::|layers::|optimizers::|schedules::)?([A-Za-z_0-9]+)", symbol)
    return found.group(1) if found else None


def main():
    library, include_dir = sys.argv[1:3]
    listing = subprocess.run(["nm", "-DC", "--defined-only", library], capture_output=True,
                             text=True, check=True).stdout
    symbols = [line.split(" ", 2)[2] for line in listing.splitlines() if line.count(" ") >= 2]
    words = public_words(include_dir)
    foreign = [s for s in symbols if any(s.startswith(p) or f" {p}" in s.split("(")[0]
                                         for p in FOREIGN)]
    internal = sorted({s for s in symbols if troupe_name(s) and troupe_name(s) not in words})
    print(f"{len(symbols)} exported symbols, "
          f"{sum(1 for s in symbols if troupe_name(s))} of them Troupe's")
    if foreign:
        sys.exit("FAIL: foreign symbols exported:\n" + "\n".join(foreign[:20]))
    if internal:
        sys.exit("FAIL: internal symbols exported:\n" + "\n".join(internal[:20]))
    if not any(troupe_name(s) == "fit" for s in symbols):
        sys.exit("FAIL: troupe::fit is not exported")
    print("PASS")


if __name__ == "__main__":
    main()
