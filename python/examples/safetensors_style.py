# SPDX-License-Identifier: Apache-2.0
"""Code written for safetensors, run on HRRYFILE files: only the imports change.

    from safetensors.torch import save_file, load_file   ->  from hurray.torch import ...
    from safetensors import safe_open                     ->  from hurray import safe_open

Run from a build tree: PYTHONPATH=build/gcc/python /usr/bin/python3 python/examples/safetensors_style.py
"""

import sys

import torch

from hurray import safe_open
from hurray.torch import load_file, save_file

path = sys.argv[1] if len(sys.argv) > 1 else "model.hrry"

# readme:begin safetensors
state = {
    "embed.weight": torch.arange(12, dtype=torch.float32).reshape(4, 3),
    "norm.weight": torch.ones(3, dtype=torch.bfloat16),
}
save_file(state, path, metadata={"format": "pt"})  # atomic; str -> str metadata

loaded = load_file(path)  # views of the file's mapping: nothing is copied
print(sorted(loaded), loaded["norm.weight"].dtype, torch.equal(loaded["embed.weight"], state["embed.weight"]))

with safe_open(path, framework="pt", device="cpu") as f:
    print(f.metadata())
    rows = f.get_slice("embed.weight")[1:3]  # reads only the pages of rows 1 and 2
    print(f.get_slice("embed.weight").get_shape(), rows.tolist())
    for name in f.keys():
        print(name, tuple(f.get_tensor(name).shape))
# readme:end safetensors

# Like safetensors, tensors that share memory are refused, with their names.
try:
    save_file({"a": state["embed.weight"], "b": state["embed.weight"][0]}, path)
except ValueError as error:
    print(type(error).__name__, "names", "'a'" in str(error) and "'b'" in str(error))
