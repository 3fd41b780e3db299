#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (Tools/fuzz) into OUT/<target>/.

Seeds come from the repository's own material: the sample captures and pcaps in Captures/,
the built-in specs, the fault rules of docs/faults.md, and frames, heads and requests made
here. Pcap seeds also include the sample captures exported as pcap (and pcapng) when a
faultline binary is given. Usage: make-seeds.py REPO OUT [FAULTLINE_BINARY]
"""
import json, os, re, shutil, struct, subprocess, sys

repo, out = sys.argv[1], sys.argv[2]
binary = sys.argv[3] if len(sys.argv) > 3 else None
captures = os.path.join(repo, "Captures")
jsonl = sorted(f for f in os.listdir(captures) if f.endswith(".jsonl"))

def write(target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())

# The targets that read capture lines: every line of the sample captures, in runs of whole
# lines of at most 4 KB (Tools/fuzz's -max_len for these targets); the first run of each
# capture is a session from its header on, the others start mid-session, as a capture cut
# by rotation or a torn copy does.
line_targets = ("capture-lines", "capture-shards", "capture-analyzer", "export", "replay-script")
for name in jsonl:
    with open(os.path.join(captures, name), "rb") as f:
        lines = f.readlines()
    run, part = b"", 0
    for line in lines:
        if run and len(run) + len(line) > 4096:
            for target in line_targets:
                write(target, "%s.%03d" % (name, part), run)
            run, part = b"", part + 1
        run += line
    if run:
        for target in line_targets:
            write(target, "%s.%03d" % (name, part), run)

# event-names: the text payloads of the sample captures (distinct, at most 400).
payloads = set()
for name in jsonl:
    for line in open(os.path.join(captures, name), encoding="utf-8"):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record.get("text"), str):
            payloads.add(record["text"])
for i, text in enumerate(sorted(payloads)[:400]):
    write("event-names", "payload-%03d" % i, text)
write("event-names", "escaped", '{"ev\\u0065nt":"bird:\\u0070ong","data":{}}')

# frame-decoder: a flags byte, then frames (masked and not, extended lengths, deflate).
def frame(opcode, payload, fin=True, rsv1=False, mask=None, length=None):
    b0 = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode
    n = len(payload) if length is None else length
    head = bytes([b0])
    m = 0x80 if mask else 0
    if n < 126: head += bytes([m | n])
    elif n < 65536: head += bytes([m | 126]) + struct.pack("!H", n)
    else: head += bytes([m | 127]) + struct.pack("!Q", n)
    if mask:
        head += mask
        payload = bytes(c ^ mask[i % 4] for i, c in enumerate(payload))
    return head + payload
hello = bytes.fromhex("f248cdc9c90700")  # raw deflate of "Hello" (RFC 7692)
write("frame-decoder", "plain", b"\x00" + frame(1, b'{"event":"bird:ping"}') + frame(10, b"") + frame(8, b"\x03\xe8bye"))
write("frame-decoder", "masked", b"\x0c" + frame(1, b"hi", mask=b"\x01\x02\x03\x04") + frame(9, b"p", mask=b"\x05\x06\x07\x08"))
write("frame-decoder", "extended", b"\x00" + frame(2, bytes(300)) + frame(2, bytes(70000)))
write("frame-decoder", "deflate", b"\x02" + frame(1, hello, rsv1=True) + frame(1, hello[:3], fin=False, rsv1=True) + frame(0, hello[3:]))
write("frame-decoder", "fragments", b"\x00" + frame(1, b"ab", fin=False) + frame(9, b"") + frame(0, b"cd"))
write("frame-decoder", "length-2-63", b"\x00" + bytes([0x82, 0x7f, 0x80, 0, 0, 0, 0, 0, 0, 0]) + frame(1, b"after"))

# http-head: a flags byte, then an upgrade request or response.
request = ("GET /app/key?protocol=7&client=js HTTP/1.1\r\nHost: example\r\nUpgrade: websocket\r\n"
           "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
           "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n")
response = ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
            "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_max_window_bits=10\r\n\r\n")
write("http-head", "request", "\x07" + request + "\x82\x00")
write("http-head", "response", "\x13" + response)
write("http-head", "refused", "\x01HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")

# control-request: a flags byte, then a request to the control API.
body = '{"rule":"close:4009,after=1s"}'
write("control-request", "post", "\x05POST /rules HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: %d\r\nAuthorization: Bearer t\r\n\r\n%s" % (len(body), body))
write("control-request", "expect", "\x03POST /rules HTTP/1.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello")
write("control-request", "get", "\x09GET /connections?limit=5 HTTP/1.1\r\nHost: x\r\n\r\n")

# proxy-request: a flags byte, then --route flags (one a line) and a request head for the
# forward proxy's router and the route table.
routes = "chat.example.com/ws=ws://127.0.0.1:6001\nexample.com=wss://[::1]:8443/base\n"
write("proxy-request", "connect", "\x05CONNECT ws.example.com:443 HTTP/1.1\r\nHost: ws.example.com:443\r\n\r\n\x16\x03\x01")
write("proxy-request", "connect-v6", "\x02CONNECT [::1]:8080 HTTP/1.1\r\n\r\n")
write("proxy-request", "absolute", "\x07GET ws://Chat.Example.com:6001/app/key?protocol=7 HTTP/1.1\r\n"
      "Proxy-Connection: keep-alive\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
write("proxy-request", "absolute-https", "\x0bGET https://example.com?x=1 HTTP/1.1\r\nHost: example.com\r\n\r\n")
write("proxy-request", "origin-form", "\x03GET /app/key HTTP/1.1\r\nHost: chat.example.com\r\n\r\n")
write("proxy-request", "routed", "\x11" + routes + "GET /ws/app/key HTTP/1.1\r\nHost: chat.example.com\r\n\r\n")
write("proxy-request", "bad-authority", "\x01CONNECT user@host:99999 HTTP/1.1\r\n\r\n")

# toxiproxy-api: a flags byte (low bit: remote listens allowed), then one request a line:
# G, P or D, the path, a space, the body.
write("toxiproxy-api", "lifecycle", "\x00"
      'P/proxies {"name":"redis_master","listen":"127.0.0.1:0","upstream":"127.0.0.1:6379"}\n'
      'P/proxies/redis_master/toxics {"type":"latency","attributes":{"latency":100,"jitter":5}}\n'
      'P/proxies/redis_master/toxics/latency_downstream {"attributes":{"jitter":0}}\n'
      'P/proxies/redis_master {"enabled":false}\nG/proxies \nD/proxies/redis_master/toxics/latency_downstream \n'
      'P/reset \nD/proxies/redis_master \nG/version \n')
write("toxiproxy-api", "hostile", "\x01"
      'P/proxies {"name":"jsonl\\u0000","upstream":"127.0.0.1:1"}\n'
      'P/proxies {"name":"a\\u001b]0;x\\u0007","upstream":"ws://127.0.0.1:1/a\\r\\nX: y"}\n'
      'P/proxies {"name":"b","listen":"0.0.0.0:0","upstream":"localhost:9/\\u0085"}\n'
      'P/proxies/b/toxics {"name":"t\\u009b","type":"slicer","stream":"upstream","toxicity":0.5}\n')

# sink-escaping: any text; these hold each kind of character some sink forbids.
write("sink-escaping", "controls", "ok\x00\x07\x1b]0;title\x07\x1b[2J\r\n\t\x7f end")
write("sink-escaping", "unicode", "\u009b2J \u202ertl\u202c \u2066iso\u2069 \u2028\u2029 \u061c\u200e\u200f "
      "\ufffe\uffff <&>\"' caf\u00e9 \U0001f600")

# fault-rules: every rule quoted in docs/faults.md, one a line, and one file of all.
rules = set()
for line in open(os.path.join(repo, "docs", "faults.md"), encoding="utf-8"):
    for m in re.findall(r"`([a-z-]+(?::[^`]*)?(?:,[^`]*)?)`", line):
        rules.add(m)
    if re.match(r"^[a-z-]+[:,]", line.strip()):
        rules.add(line.strip())
for i, rule in enumerate(sorted(rules)):
    write("fault-rules", "rule-%03d" % i, rule)
write("fault-rules", "plan", "\n".join(sorted(rules)) + "\n")

# spec-loader: the built-in specs and the sample ones.
for folder in (os.path.join(repo, "Sources", "Lifecycle", "Specs"), os.path.join(captures, "specs")):
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name), "rb") as f:
                write("spec-loader", os.path.basename(folder) + "-" + name, f.read())

# pcap: the sample pcaps, and (with a binary) small sample captures exported as pcap and pcapng.
for name in sorted(os.listdir(os.path.join(captures, "pcap"))):
    if name.endswith(".pcap"):
        write("pcap", name, open(os.path.join(captures, "pcap", name), "rb").read())
if binary:
    d = os.path.join(out, "pcap")
    for name in jsonl:
        if os.path.getsize(os.path.join(captures, name)) > 40000:
            continue
        target = os.path.join(d, name.replace(".jsonl", ".pcap"))
        if subprocess.run([binary, "export", os.path.join(captures, name), "--pcap", target],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0 and shutil.which("editcap"):
            subprocess.run(["editcap", "-F", "pcapng", target, target + "ng"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

# pcap-shards: the same pcaps as pcap (one input, read serially and on shards).
if os.path.isdir(os.path.join(out, "pcap")):
    shutil.copytree(os.path.join(out, "pcap"), os.path.join(out, "pcap-shards"), dirs_exist_ok=True)
