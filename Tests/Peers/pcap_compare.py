#!/usr/bin/env python3
"""Compares `faultline frames FILE --format json` with tshark's decoding of the same pcap,
frame by frame: direction, opcode, fin, rsv1, payload length, close code, and the event name
of text messages (from tshark's text after decompression).

Connections are matched by their frame lists (faultline numbers connections by the upgrade,
tshark by the first packet). tshark 4.0 cannot inflate a fragmented compressed message and
loses the compression context after one, so texts that tshark could not decode (U+FFFD in
them) are not compared.

usage: pcap_compare.py FILE.pcap... --faultline PATH [--http-port P]...
(exit 0: equal; 1: differences; --http-port as in pcap_tshark.py)
"""
import collections
import json
import subprocess
import sys

from pcap_tshark import frames as tshark_frames

KEYS = ("from", "opcode", "fin", "rsv1", "len", "close_code")


def event_of(text):
    if not text or "\ufffd" in text or not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value.get("event") if isinstance(value, dict) and isinstance(value.get("event"), str) else None


def faultline_frames(path, binary):
    out = subprocess.run([binary, "frames", path, "--format", "json"], check=True, capture_output=True).stdout
    return [json.loads(line) for line in out.decode().splitlines() if line.strip()]


def group(frames):
    by_conn = collections.OrderedDict()
    for frame in frames:
        by_conn.setdefault(frame["conn"], []).append(frame)
    return by_conn


def key(frame):
    return tuple(frame.get(k) for k in KEYS)


def compare(path, binary, http_ports=()):
    ours, theirs = group(faultline_frames(path, binary)), group(tshark_frames(path, http_ports=http_ports))
    problems = []
    if len(ours) != len(theirs):
        problems.append(f"{path}: faultline found {len(ours)} connections, tshark {len(theirs)}")
    unmatched = dict(ours)
    total = 0
    for stream, expected in theirs.items():
        total += len(expected)
        match = next((c for c, fs in unmatched.items() if [key(f) for f in fs] == [key(f) for f in expected]), None)
        if match is None:
            candidates = list(unmatched.items())
            conn, got = candidates[0] if candidates else (None, [])
            for i in range(max(len(got), len(expected))):
                a = key(got[i]) if i < len(got) else None
                b = key(expected[i]) if i < len(expected) else None
                if a != b:
                    problems.append(f"{path}: tcp.stream {stream} vs conn {conn}, frame {i + 1}: "
                                    f"faultline {dict(zip(KEYS, a)) if a else None} != tshark {dict(zip(KEYS, b)) if b else None}")
                    break
            if conn is not None:
                unmatched.pop(conn)
            continue
        got = unmatched.pop(match)
        for i, (a, b) in enumerate(zip(got, expected)):
            tshark_event = event_of(b.get("text"))
            if tshark_event is not None and b["fin"] and b["opcode"] != 0 and a.get("event") != tshark_event:
                problems.append(f"{path}: conn {match} frame {i + 1}: event {a.get('event')!r} != tshark {tshark_event!r}")
    return total, problems


if __name__ == "__main__":
    binary = sys.argv[sys.argv.index("--faultline") + 1]
    ports = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--http-port"]
    failures = 0
    for path in [a for a in sys.argv[1:] if a.endswith((".pcap", ".pcapng"))]:
        total, problems = compare(path, binary, ports)
        for p in problems:
            print(p)
        print(f"{path}: {total} frames compared, {len(problems)} differences")
        failures += len(problems)
    sys.exit(1 if failures else 0)
