#!/usr/bin/python3
"""An independent decoder of trainwatch's event files (TAP output).

Runs write_event_sample (the public C API) into a temporary directory, then parses the file with
nothing but this script: TFRecord framing with its own CRC-32C, the protobuf wire format, and
TensorBoard's Event / Summary / HistogramProto field numbers. Shares no code with the library.

usage: check_event_file.py WRITE_EVENT_SAMPLE
"""
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile

# ---- CRC-32C (Castagnoli), bit-reflected, table-driven ------------------------------------------
_TABLE = []
for _b in range(256):
    _c = _b
    for _ in range(8):
        _c = (_c >> 1) ^ (0x82F63B78 if _c & 1 else 0)
    _TABLE.append(_c)


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = (crc >> 8) ^ _TABLE[(crc ^ byte) & 0xFF]
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


# ---- TFRecord ------------------------------------------------------------------------------------
def records(data):
    """Yields each record's payload; raises ValueError on any framing or CRC problem."""
    pos = 0
    while pos < len(data):
        if len(data) - pos < 12:
            raise ValueError(f"truncated header at {pos}")
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        if length_crc != masked(crc32c(header)):
            raise ValueError(f"length CRC mismatch at {pos}")
        body = data[pos + 12:pos + 12 + length]
        footer = data[pos + 12 + length:pos + 16 + length]
        if len(body) != length or len(footer) != 4:
            raise ValueError(f"truncated record at {pos}")
        if struct.unpack("<I", footer)[0] != masked(crc32c(body)):
            raise ValueError(f"data CRC mismatch at {pos}")
        yield body
        pos += 16 + length


# ---- protobuf wire format ------------------------------------------------------------------------
def varint(data, pos):
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ValueError("varint too long")


def fields(data):
    """Yields (field number, wire type, value): int for varints, bytes otherwise."""
    pos = 0
    while pos < len(data):
        key, pos = varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        elif wire == 2:
            length, pos = varint(data, pos)
            value, pos = data[pos:pos + length], pos + length
        else:
            raise ValueError(f"wire type {wire}")
        if pos > len(data):
            raise ValueError("field runs past the end")
        yield number, wire, value


def int64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def f64(b):
    return struct.unpack("<d", b)[0]


def f32(b):
    return struct.unpack("<f", b)[0]


def packed_doubles(b):
    return list(struct.unpack(f"<{len(b) // 8}d", b))


def decode_histogram(data):
    h = {"min": 0.0, "max": 0.0, "num": 0.0, "sum": 0.0, "sum_squares": 0.0, "bucket_limit": [], "bucket": []}
    names = {1: "min", 2: "max", 3: "num", 4: "sum", 5: "sum_squares"}
    for number, wire, value in fields(data):
        if number in names:
            assert wire == 1, "histogram scalar is not fixed64"
            h[names[number]] = f64(value)
        elif number == 6:
            h["bucket_limit"] += packed_doubles(value) if wire == 2 else [f64(value)]
        elif number == 7:
            h["bucket"] += packed_doubles(value) if wire == 2 else [f64(value)]
    return h


def decode_event(data):
    event = {"wall_time": 0.0, "step": 0}
    for number, wire, value in fields(data):
        if number == 1:
            assert wire == 1
            event["wall_time"] = f64(value)
        elif number == 2:
            assert wire == 0
            event["step"] = int64(value)
        elif number == 3:
            event["file_version"] = value.decode()
        elif number == 5:
            values = event.setdefault("summary", [])
            for vnum, _, vdata in fields(value):
                if vnum != 1:
                    continue
                item = {}
                for n, w, x in fields(vdata):
                    if n == 1:
                        item["tag"] = x.decode()
                    elif n == 2:
                        assert w == 5, "simple_value is not fixed32"
                        item["simple_value"] = f32(x)
                    elif n == 5:
                        item["histo"] = decode_histogram(x)
                values.append(item)
        elif number == 7:
            log = {"status": 0, "checkpoint_path": ""}
            for n, _, x in fields(value):
                if n == 1:
                    log["status"] = x
                elif n == 2:
                    log["checkpoint_path"] = x.decode()
            event["session_log"] = log
    return event


def tf_default_bucket_limits():
    """tensorflow/core/lib/histogram/histogram.cc, InitDefaultBucketsInner."""
    positive = []
    v = 1.0e-12
    while v < 1.0e20:
        positive.append(v)
        v *= 1.1
    positive.append(sys.float_info.max)
    return [-x for x in reversed(positive)] + [0.0] + positive


def expected_histogram(values):
    limits = tf_default_bucket_limits()
    counts = [0.0] * len(limits)
    for x in values:
        i = next(k for k, limit in enumerate(limits) if limit > x)  # upper_bound
        counts[i] += 1
    limit_out, count_out = [], []
    i = 0
    while i < len(counts):  # empty runs merged into one bucket
        end, count = limits[i], counts[i]
        i += 1
        if count <= 0:
            while i < len(counts) and counts[i] <= 0:
                end, count = limits[i], counts[i]
                i += 1
        limit_out.append(end)
        count_out.append(count)
    return {"min": min(values), "max": max(values), "num": float(len(values)), "sum": float(sum(values)),
            "sum_squares": float(sum(x * x for x in values)), "bucket_limit": limit_out, "bucket": count_out}


def as_float32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


WEIGHTS = [as_float32(x) for x in (-3.0, -0.5, 0.0, 0.0, 1e-13, 2.0, 7.5, 100.0)]
HALF = [1.0, -2.0, 0.333251953125]


def main():
    checks = []

    def check(name, ok, detail=""):
        checks.append((name, bool(ok), detail))

    with tempfile.TemporaryDirectory() as logdir:
        run = subprocess.run([sys.argv[1], logdir], capture_output=True, text=True)
        path = run.stdout.strip()
        check("the C program wrote an event file", run.returncode == 0 and os.path.isfile(path), run.stderr)
        if run.returncode != 0:
            return report(checks)
        name = os.path.basename(path)
        check("file is named events.out.tfevents.<10-digit secs>.<hostname>",
              re.fullmatch(r"events\.out\.tfevents\.\d{10}\." + re.escape(socket.gethostname()), name), name)
        check("our CRC-32C knows the check value", crc32c(b"123456789") == 0xE3069283)
        with open(path, "rb") as f:
            data = f.read()
        try:
            events = [decode_event(r) for r in records(data)]
            check("every record's length and data CRCs verify; no trailing bytes", True)
        except (ValueError, AssertionError, IndexError) as e:
            check("every record's length and data CRCs verify; no trailing bytes", False, repr(e))
            return report(checks)

        first = events[0]
        check("the first event is file_version brain.Event:2",
              first.get("file_version") == "brain.Event:2" and first["wall_time"] > 1.6e9, first)
        check("then SessionLog START at step 0",
              events[1].get("session_log", {}).get("status") == 1 and events[1]["step"] == 0, events[1])
        scalars = [(e["step"], v["tag"], v["simple_value"]) for e in events for v in e.get("summary", [])
                   if "simple_value" in v]
        expected = []
        for step in range(50):
            expected += [(step, "loss", as_float32(0.25 * step)), (step, "accuracy/top-1", as_float32(step / 50))]
        check("100 scalar events, in order, with exact float values", scalars == expected,
              f"{len(scalars)} scalars; first mismatch: "
              f"{next(((a, b) for a, b in zip(scalars, expected) if a != b), None)}")
        check("scalar wall times never decrease",
              all(a["wall_time"] <= b["wall_time"] for a, b in zip(events[1:], events[2:])))
        histos = {v["tag"]: (e["step"], v["histo"]) for e in events for v in e.get("summary", []) if "histo" in v}
        for tag, values, step in (("weights", WEIGHTS, 49), ("half", HALF, -7)):
            got = histos.get(tag)
            want = expected_histogram(values)
            check(f"histogram '{tag}' at step {step} equals TF's (default buckets, empty runs merged)",
                  got is not None and got[0] == step and got[1] == want, f"got {got}")
        last = events[-1]
        check("last event is SessionLog CHECKPOINT at step 50 with its path",
              last.get("session_log") == {"status": 3, "checkpoint_path": "/tmp/model.ckpt"} and last["step"] == 50,
              last)
        check("event count: version + start + 100 scalars + 2 histograms + checkpoint", len(events) == 105,
              len(events))
    return report(checks)


def report(checks):
    print(f"1..{len(checks)}")
    for i, (name, ok, detail) in enumerate(checks, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {name}")
        if not ok and detail != "":
            print(f"# {detail}")
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
