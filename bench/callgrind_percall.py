#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Per-call instruction count (callgrind's Ir, inclusive) of the functions whose name
matches a regex, from a callgrind output file written with --compress-strings=no
--compress-pos=no. Sums `calls=` and the inclusive cost of every call edge into a
matching function, leaving out edges from one matching function into another (an
overload calling another, recursion). Prints "<Ir per call> Ir/call over <calls> calls".

    bench/callgrind_percall.py callgrind.out '^hurray::decode\\('
"""

import re
import sys


def per_call(path, pattern):
    calls = cost = 0
    fn = cfn = None
    pending = None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("fn="):
                fn = line[3:].strip()
            elif line.startswith("cfn="):
                cfn = line[4:].strip()
            elif line.startswith("calls="):
                matched = pattern.search(cfn or "") and not pattern.search(fn or "")
                pending = int(line.split()[0][len("calls="):]) if matched else None
            elif pending is not None and line[:1] in "0123456789+-*":
                parts = line.split()  # "<position> <Ir>": the call's inclusive cost
                calls += pending
                cost += int(parts[1]) if len(parts) > 1 else 0
                pending = None
    return calls, cost


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    calls, cost = per_call(sys.argv[1], re.compile(sys.argv[2]))
    print(f"{cost / calls if calls else float('nan'):.1f} Ir/call over {calls} calls")


if __name__ == "__main__":
    main()
