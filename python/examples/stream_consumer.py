# SPDX-License-Identifier: Apache-2.0
"""Read a stream of tensors from standard input, each as soon as it arrives.

See stream_producer.py for the other end of the pipe.
"""

import sys

import numpy as np

import hurray


def describe(item):
    if isinstance(item, hurray.Composite):
        inner = ", ".join(describe(m) for m in item.members)
        return f"Composite {item.composition_rule} shape={item.shape} [{inner}]"
    return f"Tensor shape={tuple(item.shape)} dtype={item.dtype} sum={np.asarray(item).sum()}"


items = composites = 0
with hurray.StreamReader(sys.stdin.buffer) as reader:
    for item in reader:                        # blocks until the next item has arrived
        print(f"{items}: {describe(item)}", flush=True)
        items += 1
        composites += isinstance(item, hurray.Composite)
print(f"{items} items, {composites} composite")
