#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpus of fuzz_bpf_decode (corpus/fuzz_bpf_decode/).

Each seed is laid out for bpf_decode_fuzz.cc's FuzzedDataProvider: map
entry bytes are taken from the front, the choices (CPU count, record count,
record kinds, "use the layout's size") from the back, one byte each. The
layouts are bpf/pathwise_bpf.h's: pw_disk_key {u32 dev, u32 pad, u64 seq},
pw_io_key {u32 dev, u32 op, u64 seq}, pw_io_val (5 + 106 u64),
pw_io_spill {pw_io_key, u32 used, u32 pad, pw_io_val}, pw_path_val (8 u64),
pw_counters (5 u64). Usage: gen_bpf_decode_seeds.py OUT_DIR
"""
import os
import struct
import sys

BUCKETS = 106
DEV = 259 << 20 | 1


def disk_key(dev, seq, pad=0):
    return struct.pack("<IIQ", dev, pad, seq)


def io_key(dev, op, seq):
    return struct.pack("<IIQ", dev, op, seq)


def io_val(count, own=0, bucket=3):
    b = [0] * BUCKETS
    b[bucket] = count
    m = 2**64 - 1
    return struct.pack("<5Q", count, min(count * 4096, m),
                       min(count * 20000, m), 0, own) + \
        struct.pack("<%dQ" % BUCKETS, *b)


def spill(dev, op, seq, used, val):
    return io_key(dev, op, seq) + struct.pack("<II", used, 0) + val


def name(s):
    return s.ljust(32, b"\0")[:32]


class Seed:
    def __init__(self, ncpus):
        self.front = b""
        self.back = []  # consumed from the end, in this order
        self.ncpus = ncpus
        self.records = []

    def record(self, kind, *parts):
        self.records.append((kind, parts))

    def bytes(self):
        back = [(self.ncpus + 1) % 6, len(self.records)]
        front = b""
        for kind, parts in self.records:
            back.append(kind)
            for p in parts:
                if isinstance(p, tuple):  # (bytes, wrong size, layout size)
                    data, size, exact = p
                    # ConsumeBool false, then the size in [0, exact + 16]:
                    # as many bytes as the range needs, most significant
                    # first.
                    n, r = 0, exact + 16
                    while r >> (8 * n):
                        n += 1
                    back += [0] + list(size.to_bytes(n, "big"))
                    front += data[:size].ljust(size, b"\0")
                else:
                    back.append(1)  # ConsumeBool true: the layout's size
                    front += p
        return front + bytes(reversed(back))


def percpu(vals):
    return b"".join(vals)


def seeds():
    out = {}
    # A disk created on a dev_t another freed: names, I/O, a path entry, a
    # spill slot and the counters of both.
    s = Seed(2)
    s.record(0, disk_key(DEV, 5), name(b"nvme0c0n1"))
    s.record(0, disk_key(DEV, 9), name(b"nvme0c2n1"))
    s.record(1, io_key(DEV, 0, 5), percpu([io_val(10), io_val(2)]))
    s.record(1, io_key(DEV, 0, 9), percpu([io_val(3), io_val(0)]))
    s.record(3, disk_key(DEV, 5), struct.pack("<8Q", 0, 0, 0, 1, 0, 0, 1, 2))
    s.record(2, percpu([spill(DEV, 1, 5, 1, io_val(4)),
                        spill(0, 0, 0, 0, io_val(0))]))
    s.record(4, percpu([struct.pack("<5Q", 0, 1, 0, 0, 0),
                        struct.pack("<5Q", 0, 2, 0, 0, 0)]))
    out["reused-devt"] = s
    # A loop device attached again: one name, one dev_t, two diskseq.
    s = Seed(1)
    s.record(0, disk_key(7 << 20, 3), name(b"loop0"))
    s.record(0, disk_key(7 << 20, 4), name(b"loop0"))
    s.record(1, io_key(7 << 20, 1, 3), io_val(7))
    s.record(1, io_key(7 << 20, 1, 4), io_val(1, own=1))
    out["loop-reattach"] = s
    # Names the kernel would never write: no NUL, not ASCII, a slash.
    s = Seed(1)
    s.record(0, disk_key(DEV, 1), b"n" * 32)
    s.record(0, disk_key(DEV, 2), name(b"nvme\xff\xfe"))
    s.record(0, disk_key(DEV, 3), name(b"a/b"))
    s.record(1, io_key(DEV, 0, 1), io_val(1))
    out["hostile-names"] = s
    # Counts that overflow when summed, own_start above count, an op
    # outside enum pw_op.
    s = Seed(2)
    s.record(1, io_key(DEV, 77, 1), percpu([io_val(2**64 - 1, own=2**64 - 1),
                                             io_val(5)]))
    s.record(4, percpu([struct.pack("<5Q", *([2**64 - 1] * 5))] * 2))
    out["huge-counts-unknown-op"] = s
    # Keys and values of the wrong size, a key with padding.
    s = Seed(1)
    s.record(0, (disk_key(DEV, 1), 15, 16), name(b"x"))
    s.record(1, io_key(DEV, 0, 1), (io_val(1), 100, 888))
    s.record(3, disk_key(DEV, 1, pad=1), struct.pack("<8Q", *([1] * 8)))
    out["bad-sizes"] = s
    # No CPUs.
    s = Seed(0)
    s.record(4, bytes(40))
    out["zero-cpus"] = s
    return out


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    for n, s in seeds().items():
        with open(os.path.join(d, n), "wb") as f:
            f.write(s.bytes())


if __name__ == "__main__":
    main()
