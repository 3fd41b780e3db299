#!/usr/bin/env python3
"""Real WebSocket traffic on loopback for pcap tests (Tools/pcap-compare captures it).

A `websockets` echo server and one or more clients exchange: every length encoding
(0, 125, 126, 65535, 65536 bytes), binary, a fragmented text message, ping/pong, and
close codes (1000, 4009 from the server, 4200 from a client), with or without
permessage-deflate.

usage: pcap_session.py --port P --scenario plain|deflate|concurrent
"""
import argparse
import asyncio

from websockets.asyncio.client import connect
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed


async def handler(ws):
    try:
        await echo(ws)
    except ConnectionClosed:
        pass  # a client's close with 4200 ends the iteration with this; expected


async def echo(ws):
    async for message in ws:
        if isinstance(message, str) and message.startswith("close-me:"):
            code = int(message.split(":")[1])
            await ws.close(code, "terminated by server")
            return
        await ws.send(message)


async def client(port, compression, index, close_code, big=True):
    try:
        await session(port, compression, index, close_code, big)
    except ConnectionClosed:
        pass  # a close code other than 1000/1001 ends the context with this; expected


async def session(port, compression, index, close_code, big):
    uri = f"ws://127.0.0.1:{port}/app/key{index}?protocol=7"
    async with connect(uri, compression=compression, max_size=None, ping_interval=None) as ws:
        # 0 and 125: 7-bit length; 126 and 65535: 16-bit; 65536: 64-bit.
        for n in (0, 125, 126, 65535, 65536) if big else (0, 125, 126, 1000):
            await ws.send("x" * n if n < 1000 else ("{\"event\":\"big\",\"data\":\"" + "y" * n)[:n])
            await ws.recv()
        await ws.send(bytes(range(256)))
        await ws.recv()
        # A text message in three fragments.
        await ws.send(["{\"event\":", "\"frag\",", f"\"conn\":{index}}}"])
        await ws.recv()
        pong = await ws.ping(b"are-you-there")
        await asyncio.wait_for(pong, 5)
        await ws.send(f"{{\"event\":\"pusher:ping\",\"data\":{{}},\"n\":{index}}}")
        await ws.recv()
        if close_code == 4009:
            await ws.send("close-me:4009")
            try:
                await ws.recv()
            except Exception:
                pass
        else:
            await ws.close(close_code, "client done")


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--scenario", choices=["plain", "deflate", "concurrent"], required=True)
    args = parser.parse_args()
    compression = "deflate" if args.scenario == "deflate" else None
    async with serve(handler, "127.0.0.1", args.port, compression=compression, max_size=None, ping_interval=None):
        if args.scenario == "concurrent":
            await asyncio.gather(*(client(args.port, "deflate" if i == 1 else None, i, code, big=False)
                                   for i, code in enumerate((1000, 4009, 4200))))
        else:
            await client(args.port, compression, 0, 4009)
            await client(args.port, compression, 1, 1000, big=False)


asyncio.run(main())
