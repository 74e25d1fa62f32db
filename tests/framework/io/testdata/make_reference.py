"""Writes reference.safetensors with the Python `safetensors` library (the reference writer).

safetensors_test.cc reads this file and checks the values below, and writes the same tensors
with our writer expecting identical bytes. Run from this directory:
    python3 make_reference.py
Values (all exactly representable in their dtype, so the C++ test compares with tolerance 0):
    weight F32  [2, 3]: 0.5, -1.25, 3.0, 1e-3 (as float32: 0.001000000047497451), -0.0, 65504.0
    half   F16  [3]:    1.0, -2.5, 6.103515625e-05 (smallest normal half)
    brain  BF16 [2, 1]: 1.5, -3.0e38 rounded to bf16 (-3.00405527e38 = -0x1.c4p+127)
    ids    I64  [2]:    -7, 250002
    scale  F32  []:     0.125  (a scalar)
    none   F32  [0, 4]: no elements
metadata: {"format": "pt"}
"""
import struct

import torch
from safetensors.torch import save_file

tensors = {
    "weight": torch.tensor([[0.5, -1.25, 3.0], [1e-3, -0.0, 65504.0]], dtype=torch.float32),
    "half": torch.tensor([1.0, -2.5, 6.103515625e-05], dtype=torch.float16),
    "brain": torch.tensor([[1.5], [-3.0e38]], dtype=torch.bfloat16),
    "ids": torch.tensor([-7, 250002], dtype=torch.int64),
    "scale": torch.tensor(0.125, dtype=torch.float32),
    "none": torch.zeros((0, 4), dtype=torch.float32),
}
save_file(tensors, "reference.safetensors", metadata={"format": "pt"})

for name, tensor in tensors.items():
    print(name, tensor.dtype, list(tensor.shape), tensor.flatten().tolist())
with open("reference.safetensors", "rb") as f:
    data = f.read()
(header_length,) = struct.unpack("<Q", data[:8])
print("bytes:", len(data), "header:", data[8:8 + header_length])
