"""Restore is all or nothing against crafted checkpoints (C2's restore in place, C21).

The files are rewritten so that every checksum the reader checks before decoding still matches (each
chunk's stored XXH64 and the index's), yet the second tensor cannot be restored: its zstd frame does not
decode, or its decoded bytes do not match their raw checksum. Restoring must raise DataLossError and
leave every variable — numpy and torch — byte-identical. The layout is docs/checkpoint-format.md's.
"""
import struct

import numpy as np
import pytest
import torch

import trainwatch as tw

_M = (1 << 64) - 1
_P1, _P2, _P3, _P4, _P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                          0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & _M


def _round(acc, value):
    return _rotl((acc + value * _P2) & _M, 31) * _P1 & _M


def xxh64(data, seed=0):
    """XXH64 (the format's checksum), plainly: the files here are a few KiB."""
    n, p = len(data), 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M, (seed + _P2) & _M, seed, (seed - _P1) & _M]
        while p + 32 <= n:
            for i in range(4):
                v[i] = _round(v[i], struct.unpack_from("<Q", data, p + 8 * i)[0])
            p += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M
        for x in v:
            h = ((h ^ _round(0, x)) * _P1 + _P4) & _M
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while p + 8 <= n:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", data, p)[0]), 27) * _P1 + _P4) & _M
        p += 8
    if p + 4 <= n:
        h = (_rotl(h ^ (struct.unpack_from("<I", data, p)[0] * _P1 & _M), 23) * _P2 + _P3) & _M
        p += 4
    while p < n:
        h = _rotl(h ^ (data[p] * _P5 & _M), 11) * _P1 & _M
        p += 1
    h ^= h >> 33
    h = h * _P2 & _M
    h ^= h >> 29
    h = h * _P3 & _M
    return h ^ (h >> 32)


def test_xxh64_matches_the_reference_vectors():
    assert xxh64(b"") == 0xEF46DB3751D8E999
    assert xxh64(b"a") == 0xD24EC4F1A98C6E5B
    assert xxh64(b"abc") == 0x44BC2CF5AD770999


def _chunks(index, version):
    """Every chunk of the index: {tensor, at (offset of its entry in the index), offset, planes}."""
    p = 0
    if version >= 6:  # the origin record first: a 16-byte job identity, the file's name
        p = 20 + struct.unpack_from("<I", index, 16)[0]
    count, = struct.unpack_from("<I", index, p)
    p, found = p + 4, []
    for _ in range(count):
        size, = struct.unpack_from("<I", index, p)
        name = index[p + 4:p + 4 + size].decode()
        p += 4 + size + 4
        ndim, = struct.unpack_from("<I", index, p)
        p += 4 + 8 * ndim + 1
        n_chunks, = struct.unpack_from("<I", index, p)
        p += 4
        for _ in range(n_chunks):
            offset, = struct.unpack_from("<Q", index, p)
            n_planes = index[p + 32]
            planes = [(index[p + 33 + 9 * k], struct.unpack_from("<Q", index, p + 34 + 9 * k)[0])
                      for k in range(n_planes)]
            found.append({"tensor": name, "at": p, "offset": offset, "planes": planes})
            p += 33 + 9 * n_planes
    return found


def _craft(path, change):
    """Applies change(file, chunk) to the last chunk of tensor "b", then re-seals the checksums the
    reader checks before decoding: that chunk's stored XXH64 and the index's."""
    data = bytearray(open(path, "rb").read())
    index_offset, index_size = struct.unpack_from("<QQ", data, len(data) - 32)
    version, = struct.unpack_from("<I", data, 8)  # from version 3 on, the index checksum's seed
    chunk = [c for c in _chunks(bytes(data[index_offset:index_offset + index_size]), version)
             if c["tensor"] == "b"][-1]
    chunk["at"] += index_offset
    change(data, chunk)
    stored = sum(size for _, size in chunk["planes"])
    struct.pack_into("<Q", data, chunk["at"] + 24, xxh64(bytes(data[chunk["offset"]:chunk["offset"] + stored])))
    struct.pack_into("<Q", data, len(data) - 16,
                     xxh64(bytes(data[index_offset:index_offset + index_size]), version if version >= 3 else 0))
    open(path, "wb").write(data)


def _break_zstd_frame(data, chunk):
    at = chunk["offset"]
    for codec, size in chunk["planes"]:
        if codec in (1, 2, 3):  # zstd, Huffman or tiered: garble the coded plane past its first bytes
            for i in range(at + 6, at + size):
                data[i] ^= 0x5A
            return
        at += size
    raise AssertionError("no coded plane")


def _break_raw_checksum(data, chunk):
    struct.pack_into("<Q", data, chunk["at"] + 16, struct.unpack_from("<Q", data, chunk["at"] + 16)[0] ^ 1)


@pytest.mark.parametrize("change", [_break_zstd_frame, _break_raw_checksum], ids=["undecodable", "raw-checksum"])
def test_crafted_second_tensor_leaves_every_variable_untouched(tmp_path, change):
    a = np.linspace(-1, 1, 512, dtype=np.float32)
    b = torch.linspace(0, 3, 4096, dtype=torch.float32).reshape(64, 64)
    saver = tw.Saver({"a": a, "b": b})
    path = saver.save(str(tmp_path / "model.ckpt"), global_step=1)
    _craft(path, change)
    a[:] = 7.0
    b.fill_(-7.0)
    a_before, b_before = a.tobytes(), b.numpy().tobytes()
    with pytest.raises(tw.DataLossError, match="tensor 'b'"):
        saver.restore(path)
    assert a.tobytes() == a_before and b.numpy().tobytes() == b_before
    with pytest.raises(tw.OpError):  # the only checkpoint is skipped as not intact
        tw.Saver({"a": a, "b": b}).restore_newest_good(str(tmp_path))
    assert a.tobytes() == a_before and b.numpy().tobytes() == b_before
    np.testing.assert_array_equal(tw.load_variable(path, "a"), np.linspace(-1, 1, 512, dtype=np.float32))
