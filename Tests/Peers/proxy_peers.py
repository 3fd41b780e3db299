"""Python `websockets` peers for the proxy's end-to-end tests (Tests/EndToEndTests/Proxy*.swift).

Each peer prints one JSON object a line on stdout, so the Swift tests can check exactly what
arrived, fragment by fragment (`recv_streaming` yields one item per WebSocket frame):

  {"kind": "listening", "port": P}                           server ready
  {"kind": "message", "type": "text"|"binary", "fragments": [F, ...]}
        F = {"len": N, "text": "..."} for text, {"len": N, "sha256": "..."} for binary
  {"kind": "pong", "data": "..."}                            a ping of ours was answered
  {"kind": "closed", "code": C, "reason": "...", "by": "us"|"peer"|"abnormal"}
  {"kind": "error", "type": "...", "detail": "..."}

Usage:
  proxy_peers.py server [--mode script|refuse|rst|flood|hold|bird|tcp-echo|close-then-rst] [--closer client|server]
                        [--code N] [--reason TEXT]
  proxy_peers.py client URL [--mode script|bird|get|hold|flood|bad-utf8] [--closer ...] [--code N] [--reason TEXT]
                        [--delay SECONDS] [--send TEXT]... [--ping] [--wait SECONDS]

The `script` exchange: the client pings, then sends MESSAGES (text, binary, fragmented text,
fragmented binary, 1 MiB binary); the server receives them, pings, and sends the same MESSAGES back,
then the closer closes with --code/--reason and both report the close they saw.
"""
import argparse
import asyncio
import hashlib
import json
import os
import socket
import struct
import sys
import time

import websockets
from websockets.asyncio.client import connect
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed, InvalidStatus

LARGE = bytes(i % 251 for i in range(1 << 20))
MESSAGES = [
    ("text", ["hello \u2713 proxy"]),
    ("binary", [bytes(range(256))]),
    ("text", ["frag-1 ", "frag-2 ", "frag-3"]),
    ("binary", [b"\x00\x01", b"\x02\x03\x04"]),
    ("binary", [LARGE]),
]


def emit(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def describe(fragment):
    if isinstance(fragment, str):
        return {"len": len(fragment.encode()), "text": fragment}
    return {"len": len(fragment), "sha256": hashlib.sha256(fragment).hexdigest()}


async def receive_message(ws):
    fragments = [describe(f) async for f in ws.recv_streaming()]
    kind = "text" if "text" in fragments[0] else "binary"
    emit(kind="message", type=kind, fragments=fragments)


async def send_messages(ws):
    for _, fragments in MESSAGES:
        await ws.send(fragments[0] if len(fragments) == 1 else fragments)


def report_close(ws, closer_is_us):
    rcvd = ws.protocol.close_rcvd
    if rcvd is None:
        cause = getattr(ws.close_exc, "__cause__", None) if ws.close_exc else None
        emit(kind="closed", code=None, reason=None, by="abnormal", cause=type(cause).__name__ if cause else None)
    elif closer_is_us:
        emit(kind="closed", code=rcvd.code, reason=rcvd.reason, by="us")
    else:
        emit(kind="closed", code=rcvd.code, reason=rcvd.reason, by="peer")


async def wait_closed(ws):
    try:
        async for message in ws:
            emit(kind="unexpected", data=message if isinstance(message, str) else message.hex())
    except ConnectionClosed:
        pass


async def run_script(ws, args, me):
    if me == "client":
        await (await ws.ping(b"ping-from-client"))
        emit(kind="pong", data="ping-from-client")
        await send_messages(ws)
        for _ in MESSAGES:
            await receive_message(ws)
    else:
        for _ in MESSAGES:
            await receive_message(ws)
        await (await ws.ping(b"ping-from-server"))
        emit(kind="pong", data="ping-from-server")
        await send_messages(ws)
    if args.closer == me:
        await ws.close(args.code, args.reason)
        report_close(ws, True)
    else:
        await wait_closed(ws)
        report_close(ws, False)


# ---------------------------------------------------------------- a tiny Bird server

def bird(event, data=None, channel=None):
    envelope = {"event": event}
    if channel is not None:
        envelope["channel"] = channel
    if data is not None:
        envelope["data"] = json.dumps(data)
    return json.dumps(envelope)


async def bird_server(ws):
    emit(kind="connected", path=ws.request.path, host=ws.request.headers.get("Host"),
         agent=ws.request.headers.get("User-Agent"))
    await ws.send(bird("bird:connection_established", {"socket_id": "123.456", "activity_timeout": 120}))
    async for message in ws:
        if isinstance(message, bytes):
            await ws.send(message)
            continue
        emit(kind="received", data=message)
        try:
            event = json.loads(message)
        except ValueError:
            await ws.send(message)
            continue
        name = event.get("event")
        if name == "bird:ping":
            await ws.send(bird("bird:pong", {}))
        elif name == "bird:subscribe":
            channel = event.get("data", {}).get("channel")
            await ws.send(bird("bird_internal:subscription_succeeded", {}, channel=channel))
        else:
            await ws.send(message)


async def bird_client(ws, args):
    """Prints every message it receives with its time; sends each --send after the handshake."""
    start = time.monotonic()

    async def reader():
        async for message in ws:
            emit(kind="received", t=round(time.monotonic() - start, 3),
                 data=message if isinstance(message, str) else message.hex())

    task = asyncio.create_task(reader())
    await asyncio.sleep(args.delay)
    for text in args.send:
        await asyncio.sleep(0.05)
        await ws.send(text)
    if args.ping:
        try:
            pong = await ws.ping(b"control-ping")
            await asyncio.wait_for(pong, args.wait)
            emit(kind="pong", data="control-ping")
        except asyncio.TimeoutError:
            emit(kind="no-pong")
        except ConnectionClosed:
            pass
    try:
        await asyncio.wait_for(task, args.wait)
    except asyncio.TimeoutError:
        emit(kind="still-open")
        return
    except ConnectionClosed:
        pass
    report_close(ws, False)


# ---------------------------------------------------------------- server modes

def hold_server():
    """Accepts one upgrade by hand with a tiny receive buffer, answers 101, never reads again."""
    import base64
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    emit(kind="listening", port=listener.getsockname()[1])
    sock, _ = listener.accept()
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    key = [line.split(b":", 1)[1].strip() for line in head.split(b"\r\n")
           if line.lower().startswith(b"sec-websocket-key:")][0]
    accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
    sock.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n")
    emit(kind="upgraded")
    time.sleep(3600)


def close_then_rst_server():
    """Accepts upgrades by hand; on the client's close frame answers with a close frame and
    then resets the connection (SO_LINGER 0): the closing handshake, then an RST, not a FIN."""
    import base64
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    emit(kind="listening", port=listener.getsockname()[1])
    while True:
        sock, _ = listener.accept()
        data = b""
        while b"\r\n\r\n" not in data:
            part = sock.recv(4096)
            if not part:
                break
            data += part
        head, _, data = data.partition(b"\r\n\r\n")
        keys = [line.split(b":", 1)[1].strip() for line in head.split(b"\r\n")
                if line.lower().startswith(b"sec-websocket-key:")]
        if not keys:
            sock.close()
            continue
        accept = base64.b64encode(hashlib.sha1(keys[0] + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
        sock.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n")
        emit(kind="upgraded")
        while True:   # client frames: masked, short (this peer only waits for the close)
            while len(data) < 2 or len(data) < 6 + (data[1] & 0x7F):
                part = sock.recv(4096)
                if not part:
                    break
                data += part
            if len(data) < 2 or len(data) < 6 + (data[1] & 0x7F):
                break
            opcode, length = data[0] & 0x0F, data[1] & 0x7F
            data = data[6 + length:]
            if opcode == 8:
                sock.sendall(bytes([0x88, 0x02, 0x03, 0xE8]))
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                emit(kind="resetting")
                break
        sock.close()


async def tcp_echo_server():
    """Plain TCP: echoes every byte, then ends its side when the client does."""
    async def echo(reader, writer):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    emit(kind="listening", port=server.sockets[0].getsockname()[1])
    await server.serve_forever()


async def server_main(args):
    if args.mode == "tcp-echo":
        return await tcp_echo_server()
    if args.mode == "hold":
        return hold_server()
    if args.mode == "close-then-rst":
        return close_then_rst_server()
    async def handler(ws):
        try:
            if args.mode == "script":
                await run_script(ws, args, "server")
            elif args.mode == "bird":
                await bird_server(ws)
            elif args.mode == "rst":
                await ws.recv()
                emit(kind="resetting")
                sock = ws.transport.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                ws.transport.abort()
            elif args.mode == "flood":
                await flood(ws)
        except ConnectionClosed:
            report_close(ws, False)

    def process_request(connection, request):
        if args.mode == "refuse":
            emit(kind="refusing", path=request.path)
            return connection.respond(403, "refused by the test server\n")
        return None

    async with serve(handler, "127.0.0.1", 0, max_size=None, process_request=process_request,
                     compression=None, ping_interval=None) as server:
        port = server.sockets[0].getsockname()[1]
        emit(kind="listening", port=port)
        await asyncio.Future()


async def flood(ws):
    """Pushes 1 MiB messages until 500 MiB are out or nothing moved for 3 s, then reports."""
    pushed = 0
    progress = time.monotonic()
    chunk = b"x" * (1 << 20)

    async def push():
        nonlocal pushed, progress
        while pushed < 500 * (1 << 20):
            await ws.send(chunk)
            pushed += len(chunk)
            progress = time.monotonic()

    task = asyncio.create_task(push())
    while not task.done() and time.monotonic() - progress < 3:
        await asyncio.sleep(0.2)
    emit(kind="flooded", pushed=pushed, stalled=not task.done())
    await asyncio.Future()


# ---------------------------------------------------------------- client modes

async def client_main(args):
    if args.mode == "get":
        return plain_get(args.url)
    if args.mode == "hold":
        return hold(args.url)
    if args.mode == "bad-utf8":
        return bad_utf8(args.url)
    try:
        async with connect(args.url, max_size=None, compression=None, ping_interval=None,
                           open_timeout=10, close_timeout=5) as ws:
            emit(kind="open")
            if args.mode == "flood":
                await flood(ws)
            elif args.mode == "script":
                await run_script(ws, args, "client")
            elif args.mode == "bird":
                await bird_client(ws, args)
    except InvalidStatus as error:
        response = error.response
        emit(kind="refused", status=response.status_code, body=response.body.decode(errors="replace"))
    except ConnectionClosed as error:
        emit(kind="closed", code=error.rcvd.code if error.rcvd else None,
             reason=error.rcvd.reason if error.rcvd else None, by="abnormal" if error.rcvd is None else "peer")
    except (OSError, EOFError, websockets.exceptions.InvalidMessage, websockets.exceptions.InvalidHandshake) as error:
        cause = error.__cause__ or error
        emit(kind="error", type=type(cause).__name__, detail=str(cause))


def host_port(url):
    rest = url.split("://", 1)[1]
    authority = rest.split("/", 1)[0]
    host, port = authority.rsplit(":", 1)
    return host, int(port)


def plain_get(url):
    """A plain HTTP GET (no upgrade): prints the status line and body."""
    host, port = host_port(url)
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            part = sock.recv(65536)
            if not part:
                break
            data += part
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    emit(kind="http", status=status, body=body.decode(errors="replace"))


def hold(url):
    """Upgrades by hand with a tiny receive buffer, then never reads (backpressure test)."""
    host, port = host_port(url)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, port))
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    emit(kind="upgraded", status=int(head.split(b" ")[1]))
    time.sleep(3600)


def bad_utf8(url):
    """Upgrades by hand, sends one masked text frame holding invalid UTF-8 (ff fe), prints
    the first frame that comes back (a close with its code, normally)."""
    host, port = host_port(url)
    sock = socket.create_connection((host, port), timeout=10)
    sock.sendall(b"GET /raw HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(4096)
    head, _, data = data.partition(b"\r\n\r\n")
    emit(kind="upgraded", status=int(head.split(b" ")[1]))
    mask = b"\x11\x22\x33\x44"
    payload = bytes(b ^ mask[i % 4] for i, b in enumerate(b"\xff\xfe"))
    sock.sendall(b"\x81\x82" + mask + payload)
    while True:
        while len(data) < 2:
            part = sock.recv(4096)
            if not part:
                emit(kind="eof")
                return
            data += part
        length = data[1] & 0x7F
        while len(data) < 2 + length:
            data += sock.recv(4096)
        opcode, body, data = data[0] & 0x0F, data[2:2 + length], data[2 + length:]
        if opcode == 8:
            code = int.from_bytes(body[:2], "big") if len(body) >= 2 else None
            emit(kind="close", code=code, reason=body[2:].decode(errors="replace"))
            return
        emit(kind="frame", opcode=opcode)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("role", choices=["server", "client"])
    parser.add_argument("url", nargs="?")
    parser.add_argument("--mode", default="script")
    parser.add_argument("--closer", default="client", choices=["client", "server"])
    parser.add_argument("--code", type=int, default=1000)
    parser.add_argument("--reason", default="")
    parser.add_argument("--send", action="append", default=[])
    parser.add_argument("--ping", action="store_true")
    parser.add_argument("--wait", type=float, default=5)
    parser.add_argument("--delay", type=float, default=0)
    args = parser.parse_args()
    try:
        asyncio.run(server_main(args) if args.role == "server" else client_main(args))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
