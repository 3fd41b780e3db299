#!/usr/bin/env python3
"""Client peer for the permessage-deflate drop test (Python `websockets`, compression on).

Connects to URL offering permessage-deflate (websockets' default offer), prints
`EXTENSIONS <the 101's Sec-WebSocket-Extensions>`, then sends one JSON message per NAME
(`{"event": NAME, "data": FILLER}`, the same filler in each, so that with context takeover
each compressed message refers back to the one before it). An echo server sends each
back; the proxy in between drops some. Prints `RECV <event>` for every message it
receives and inflates, and `DONE` once the last NAME came back. A message it cannot
inflate fails the connection: it prints `CLOSED <code> <reason>` and exits 1, as it does
after --limit seconds without the last NAME (`TIMEOUT`).
"""
import argparse
import asyncio
import json
import sys

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

FILLER = "the same words in every message, so that deflate refers back to the one before " * 4


async def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("names", nargs="+")
    parser.add_argument("--limit", type=float, default=20)
    args = parser.parse_args()
    async with connect(args.url, compression="deflate", open_timeout=10, ping_interval=None) as ws:
        print(f"EXTENSIONS {ws.response.headers.get('Sec-WebSocket-Extensions', '')}", flush=True)

        async def exchange():
            for name in args.names:
                await ws.send(json.dumps({"event": name, "data": FILLER}))
            async for message in ws:
                event = json.loads(message).get("event")
                print(f"RECV {event}", flush=True)
                if event == args.names[-1]:
                    return

        try:
            await asyncio.wait_for(exchange(), args.limit)
        except asyncio.TimeoutError:
            print("TIMEOUT", flush=True)
            return 1
        except ConnectionClosed as closed:
            frame = closed.rcvd or closed.sent
            print(f"CLOSED {frame.code if frame else 'none'} {frame.reason if frame else ''}", flush=True)
            return 1
    print("DONE", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
