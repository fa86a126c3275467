# SPDX-License-Identifier: Apache-2.0
"""Quantize a float32 matrix to int8 per row with numpy, store it with its
scales, statistics and shard position, and read it back.

Hurray does not quantize: it describes the result. The scales go in their own
buffer, which the scheme names by index.

Run from a build tree: PYTHONPATH=build/gcc/python /usr/bin/python3 python/examples/quantized_weights.py
"""

import sys

import numpy as np

import hurray

path = sys.argv[1] if len(sys.argv) > 1 else "quantized.hrry"

rng = np.random.default_rng(7)
weights = rng.standard_normal((4, 16)).astype(np.float32)  # rows 4..7 of an [8, 16] matrix

# A symmetric int8 quantizer, one scale per row.
scales = (np.abs(weights).max(axis=1) / 127).astype(np.float32)
codes = np.clip(np.round(weights / scales[:, None]), -127, 127).astype(np.int8)

t = hurray.Tensor(
    codes, hurray.int8, codes.shape,
    aux_buffers=[scales],                                            # buffer 1
    quantization=hurray.PerChannelAffine.symmetric(axis=0, scale_buffer_index=1),
    statistics=hurray.Statistics(value_min=float(weights.min()), value_max=float(weights.max()),
                                 value_abs_max=float(np.abs(weights).max())),
    shard=hurray.Shard(parent_shape=[8, 16], shard_offset=[4, 0]),
)
hurray.save(path, {"layer0.w": t})

back = hurray.load(path)["layer0.w"]
print(back.quantization, back.buffer_count)
print(back.shard)
print("value_mean claimed:", back.statistics.value_mean)
error = np.abs(back.dequantize() - weights).max()
print("max error within half a step:", bool(error <= scales.max() / 2 + 1e-7))
