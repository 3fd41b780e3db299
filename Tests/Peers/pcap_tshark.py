#!/usr/bin/env python3
"""Prints tshark's WebSocket decoding of a pcap as JSON Lines, one frame a line, in the
field names of `faultline frames --format json`: conn (tshark's tcp.stream), from, opcode,
fin, rsv1, len, close_code, text (tshark's text, after decompression), fragmented (the frame
belongs to a fragmented message).

usage: pcap_tshark.py FILE.pcap [--tshark PATH] [--out FILE] [--http-port P]...
(--http-port: decode that TCP port as HTTP, for ports tshark gives to another protocol,
such as 6000-6063 to X11)
"""
import json
import subprocess
import sys


def find(tree, key):
    """First value of `key` anywhere in a tshark JSON tree."""
    if isinstance(tree, dict):
        if key in tree:
            return tree[key]
        for value in tree.values():
            found = find(value, key)
            if found is not None:
                return found
    elif isinstance(tree, list):
        for value in tree:
            found = find(value, key)
            if found is not None:
                return found
    return None


def frames(path, tshark="tshark", http_ports=()):
    decode_as = [arg for port in http_ports for arg in ("-d", f"tcp.port=={port},http")]
    out = subprocess.run([tshark, "-r", path, "-Y", "websocket", "-T", "json", "--no-duplicate-keys",
                          "-o", "tcp.desegment_tcp_streams:TRUE"] + decode_as,
                         check=True, capture_output=True).stdout
    result = []
    for packet in json.loads(out):
        layers = packet["_source"]["layers"]
        stream = int(find(layers["tcp"], "tcp.stream"))
        sockets = layers["websocket"]
        if isinstance(sockets, dict):
            sockets = [sockets]
        for ws in sockets:
            length = int(ws["websocket.payload_length"])
            length = int(ws.get("websocket.payload_length_ext_16", ws.get("websocket.payload_length_ext_64", length)))
            code = find(ws, "websocket.payload.close.status_code")
            text = find(ws, "websocket.payload.text")
            if isinstance(text, list):
                text = text[0]
            result.append({
                "conn": stream,
                "from": "client" if ws["websocket.mask"] == "1" else "server",
                "opcode": int(ws["websocket.opcode"]),
                "fin": ws["websocket.fin"] == "1",
                "rsv1": int(ws["websocket.rsv"], 16) & 4 != 0,
                "len": length,
                "close_code": int(code) if code is not None else None,
                "text": text,
            })
    return result


if __name__ == "__main__":
    tshark = sys.argv[sys.argv.index("--tshark") + 1] if "--tshark" in sys.argv else "tshark"
    out = open(sys.argv[sys.argv.index("--out") + 1], "w") if "--out" in sys.argv else sys.stdout
    ports = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--http-port"]
    for frame in frames(sys.argv[1], tshark, ports):
        out.write(json.dumps(frame) + "\n")
    out.close()
