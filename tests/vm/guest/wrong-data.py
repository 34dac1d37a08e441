#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Say what a wrong read holds, for ini-random's readers.

    wrong-data.py GOT LUN FIRST-BLOCK

GOT is what a read of 4 KiB blocks from FIRST-BLOCK on returned, LUN the
image it should equal (iser_tgt -P -D: every 8-byte word a function of its
offset). Prints one line per 4 KiB block that differs: where its first
word comes from in the LUN (another block's data: a read that landed in
the wrong buffer or at the wrong offset), or that it is all zeroes, all
one byte, or unknown bytes (random data a hostile peer wrote), and how
many of its words are wrong.
"""
import struct
import sys

BLOCK = 4096


def main():
    got_path, lun_path, first = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(got_path, "rb") as f:
        got = f.read()
    with open(lun_path, "rb") as f:
        lun = f.read()
    where = {}
    for off in range(0, len(lun) - 7, 8):
        where.setdefault(lun[off:off + 8], off)
    out = []
    for i in range(0, len(got), BLOCK):
        blk = got[i:i + BLOCK]
        lba = first + i // BLOCK
        want = lun[lba * BLOCK:lba * BLOCK + len(blk)]
        if blk == want:
            continue
        bad = sum(1 for j in range(0, len(blk), 8)
                  if blk[j:j + 8] != want[j:j + 8])
        first_bad = next(j for j in range(0, len(blk), 8)
                         if blk[j:j + 8] != want[j:j + 8])
        word = blk[first_bad:first_bad + 8]
        if blk.count(0) == len(blk):
            what = "all zeroes"
        elif blk.count(blk[0]) == len(blk):
            what = "all 0x%02x" % blk[0]
        elif word in where:
            src = where[word] - first_bad
            what = "LUN data of offset 0x%x (block %d%s)" % (
                src, src // BLOCK, "" if src % BLOCK == 0 else ", unaligned")
        else:
            what = "unknown bytes %s" % struct.pack("8s", word).hex()
        out.append("block %d: %d of %d words wrong from byte %d, %s" %
                   (lba, bad, len(blk) // 8, first_bad, what))
    print("; ".join(out) if out else "no block differs")


if __name__ == "__main__":
    main()
