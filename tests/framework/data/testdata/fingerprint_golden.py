"""Independent transcriptions of two fully specified algorithms, to pin values in C++ tests.

- fingerprint(): framework/core/fingerprint.h (word-at-a-time FNV-style hash + SplitMix64
  finaliser); pinned in tests/framework/core/fingerprint_test.cc.
- epoch_order(): framework/data/batch_planner.h (Fisher-Yates over std::mt19937_64 seeded
  with SplitMix64(seed ^ SplitMix64(epoch)), rejection-sampled bounded integers); pinned in
  batch_planner_test.cc.

Run: python3 tests/framework/data/testdata/fingerprint_golden.py
"""

MASK = (1 << 64) - 1


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK


def fnv_mix(state, word):
    return rotl(((state ^ word) * 0x100000001B3) & MASK, 31)


def finalize(x):
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & MASK
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & MASK
    x ^= x >> 31
    return x


def fingerprint(data: bytes) -> int:
    state = 0xCBF29CE484222325
    padded = data + b"\0" * (-len(data) % 8)
    for i in range(0, len(padded), 8):
        state = fnv_mix(state, int.from_bytes(padded[i:i + 8], "little"))
    state = fnv_mix(state, len(data))
    return finalize(state)


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


class MT19937_64:
    """The generator as the C++ standard ([rand.eng.mers], mt19937_64) defines it."""

    def __init__(self, seed):
        self.mt = [0] * 312
        self.mt[0] = seed & MASK
        for i in range(1, 312):
            prev = self.mt[i - 1]
            self.mt[i] = (6364136223846793005 * (prev ^ (prev >> 62)) + i) & MASK
        self.index = 312

    def _twist(self):
        upper, lower = 0xFFFFFFFF80000000, 0x7FFFFFFF
        for i in range(312):
            x = (self.mt[i] & upper) | (self.mt[(i + 1) % 312] & lower)
            xa = x >> 1
            if x & 1:
                xa ^= 0xB5026F5AA96619E9
            self.mt[i] = self.mt[(i + 156) % 312] ^ xa
        self.index = 0

    def __call__(self):
        if self.index >= 312:
            self._twist()
        y = self.mt[self.index]
        self.index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y & MASK


def uniform_below(engine, bound):
    threshold = (1 << 64) % bound
    while True:
        draw = engine()
        if draw >= threshold:
            return draw % bound


def epoch_order(n, seed, epoch):
    engine = MT19937_64(splitmix64(seed ^ splitmix64(epoch)))
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = uniform_below(engine, i + 1)
        order[i], order[j] = order[j], order[i]
    return order


if __name__ == "__main__":
    # The standard's conformance value: the 10000th output of a default-seeded mt19937_64.
    check = MT19937_64(5489)
    for _ in range(9999):
        check()
    assert check() == 9981545732273789042
    for text in [b"", b"a", b"The quick brown fox"]:
        print("fingerprint(%r) = 0x%016xULL" % (text, fingerprint(text)))
    for seed, epoch in [(42, 0), (42, 1), (7, 0)]:
        print("epoch_order(12, seed=%d, epoch=%d) = %s" % (seed, epoch, epoch_order(12, seed, epoch)))
