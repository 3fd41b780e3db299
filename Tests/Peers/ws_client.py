#!/usr/bin/env python3
"""Client peer for the WebSocket interop tests (Python `websockets`).

Connects to URL and runs a fixed conversation, printing one line per step:
  OK text, OK binary, OK fragmented (sends three fragments), OK ping (its ping answered),
  OK fragment-me (server's fragmented reply), OK ping-me (server's ping answered),
  then sends close-4009 and prints `CLOSED <code> <reason>` from the server's close frame.
Prints `READY <url>` before connecting. Exit status 0 when every step worked, 1 otherwise.
"""
import argparse
import asyncio
import sys

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed


async def expect(ws, wanted, label):
    got = await asyncio.wait_for(ws.recv(), 10)
    if got != wanted:
        raise AssertionError(f"{label}: got {got!r:.80}, wanted {wanted!r:.80}")
    print(f"OK {label}", flush=True)


async def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("--deflate", action="store_true", help="offer permessage-deflate")
    args = parser.parse_args()
    print(f"READY {args.url}", flush=True)
    compression = "deflate" if args.deflate else None
    async with connect(args.url, compression=compression, max_size=16 << 20, open_timeout=10) as ws:
        print(f"EXTENSIONS {ws.response.headers.get('Sec-WebSocket-Extensions', '')}", flush=True)
        await ws.send("hello ✓")
        await expect(ws, "hello ✓", "text")
        blob = bytes(range(256)) * 300
        await ws.send(blob)
        await expect(ws, blob, "binary")
        await ws.send(["frag", "men", "ted"])
        await expect(ws, "fragmented", "fragmented")
        pong = await ws.ping(b"from-python")
        await asyncio.wait_for(pong, 10)
        print("OK ping", flush=True)
        await ws.send("fragment-me")
        await expect(ws, "fragmented", "fragment-me")
        await ws.send("ping-me")
        await expect(ws, "pong-received", "ping-me")
        await ws.send("close-4009")
        try:
            extra = await asyncio.wait_for(ws.recv(), 10)
            raise AssertionError(f"expected a close, got {extra!r:.80}")
        except ConnectionClosed as closed:
            frame = closed.rcvd
            print(f"CLOSED {frame.code if frame else 'none'} {frame.reason if frame else ''}", flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except Exception as error:  # report, never hang
        print(f"FAILED {type(error).__name__}: {error}", flush=True)
        sys.exit(1)
