#!/usr/bin/env python3
"""What the recipe tests with an oracle outside the trainer need of a run, in the standard
library only (tests/recipes/loss_normalisation_test.sh, tests/golden/make_hf_trainer_run.py):

  trainer_oracle.py order N SEED EPOCH         the epoch's visiting order of N examples, one
                                               index a line: framework/data/batch_planner.h's
                                               stated algorithm (mt19937_64 seeded with
                                               SplitMix64(seed ^ SplitMix64(epoch)), Fisher-Yates
                                               with bounded draws by rejection), written here
                                               from that statement (as bench/hf_train_cpu.py);
  trainer_oracle.py zero IN OUT NAME...        a copy of safetensors file IN with the named
                                               tensors' bytes set to zero (an f32 0 is all zero
                                               bytes), the header kept byte for byte;
  trainer_oracle.py read FILE NAME             an f32 tensor's values, one a line (%.9g).
"""

import json
import struct
import sys

MASK64 = (1 << 64) - 1


class MersenneTwister64:
    """std::mt19937_64 (the C++ standard's parameters)."""

    def __init__(self, seed):
        self.state = [seed & MASK64]
        for i in range(1, 312):
            previous = self.state[-1]
            self.state.append((6364136223846793005 * (previous ^ (previous >> 62)) + i) & MASK64)
        self.index = 312

    def _twist(self):
        s = self.state
        for i in range(312):
            x = (s[i] & 0xFFFFFFFF80000000) | (s[(i + 1) % 312] & 0x7FFFFFFF)
            s[i] = s[(i + 156) % 312] ^ (x >> 1) ^ (0xB5026F5AA96619E9 if x & 1 else 0)
        self.index = 0

    def __call__(self):
        if self.index >= 312:
            self._twist()
        y = self.state[self.index]
        self.index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        return (y ^ (y >> 43)) & MASK64


def split_mix64(value):
    value = (value + 0x9E3779B97F4A7C15) & MASK64
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & MASK64
    return value ^ (value >> 31)


def epoch_order(size, seed, epoch):
    engine = MersenneTwister64(split_mix64(seed ^ split_mix64(epoch)))
    order = list(range(size))
    for i in range(size - 1, 0, -1):
        bound = i + 1
        threshold = (1 << 64) % bound
        while True:
            draw = engine()
            if draw >= threshold:
                break
        j = draw % bound
        order[i], order[j] = order[j], order[i]
    return order


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (header_size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_size])
    return data, 8 + header_size, header


def main(argv):
    if argv[1] == "order":
        for index in epoch_order(int(argv[2]), int(argv[3]), int(argv[4])):
            print(index)
    elif argv[1] == "zero":
        data, base, header = read_safetensors(argv[2])
        out = bytearray(data)
        for name in argv[4:]:
            begin, end = header[name]["data_offsets"]
            out[base + begin:base + end] = bytes(end - begin)
        with open(argv[3], "wb") as f:
            f.write(out)
    elif argv[1] == "read":
        data, base, header = read_safetensors(argv[2])
        entry = header[argv[3]]
        if entry["dtype"] != "F32":
            sys.exit(f"{argv[3]} is {entry['dtype']}, not F32")
        begin, end = entry["data_offsets"]
        for value in struct.unpack(f"<{(end - begin) // 4}f", data[base + begin:base + end]):
            print(f"{value:.9g}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
