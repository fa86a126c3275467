# SPDX-License-Identifier: Apache-2.0
"""Write a stream of tensors to standard output, one at a time.

Each tensor leaves as soon as it is written, so a consumer at the other end
of a pipe or socket can start before the producer is done:

    PYTHONPATH=build/gcc/python /usr/bin/python3 python/examples/stream_producer.py \\
        | PYTHONPATH=build/gcc/python /usr/bin/python3 python/examples/stream_consumer.py
"""

import sys

import numpy as np

import hurray

# The writer duplicates the descriptor: sys.stdout stays usable after it.
with hurray.StreamWriter(sys.stdout.buffer) as writer:
    writer.write(np.arange(6, dtype=np.float32).reshape(2, 3))   # numpy arrays go out as dense tensors
    writer.write(np.array([1, 2, 3, 4, 5], dtype=np.int64))
    # A composite: a head and its members, validated whole before a byte is sent.
    writer.write(hurray.Composite("group", [2], "float32",
                                  [np.ones(4, np.float32), np.full((2, 2), 7, np.int16)]))
    writer.write(np.array([True, False, True]))
