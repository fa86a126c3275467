# SPDX-License-Identifier: Apache-2.0
"""Save numpy arrays with KV metadata, then load them back zero-copy.

Run from a build tree: PYTHONPATH=build/gcc/python /usr/bin/python3 python/examples/save_load.py
"""

import sys

import numpy as np

import hurray

path = sys.argv[1] if len(sys.argv) > 1 else "model.hrry"

# readme:begin python
weights = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.zeros(3, np.int8)}
hurray.save(path, weights, kv={"arch": "demo", "layers": 2})
tensors = hurray.load(path)                  # hurray.Tensor views of the file's mapping
with hurray.open(path) as f:                 # lazy: no tensor data is read here
    print(f.keys(), f.info("w")["shape"], f.metadata())
print(np.asarray(tensors["w"]).sum(), tensors["b"].dtype)  # np.asarray: zero-copy
# readme:end python

from hurray.numpy import load_file, save_file  # noqa: E402

save_file(weights, path, metadata={"format": "np"})
with hurray.safe_open(path, framework="np") as f:
    print(sorted(f.keys()), f.metadata(), load_file(path)["w"].shape)
