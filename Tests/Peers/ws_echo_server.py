#!/usr/bin/env python3
"""Echo server peer for the WebSocket interop tests (Python `websockets`).

Listens on 127.0.0.1 (port 0 = any free port) and prints `READY <port>` once listening.
Echoes every message, except these text commands:
  fragment-me  answers with the text "fragmented" sent as three fragments
  ping-me      pings the client with b"from-python", waits for the pong, sends "pong-received"
  close-4009   closes with code 4009, reason "bye"
Prints `CLOSED <code> <reason>` when a connection ends. Runs until killed.
"""
import argparse
import asyncio

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed


async def handler(ws):
    try:
        async for message in ws:
            if message == "close-4009":
                await ws.close(4009, "bye")
                break
            if message == "fragment-me":
                await ws.send(["frag", "men", "ted"])
            elif message == "ping-me":
                pong = await ws.ping(b"from-python")
                await asyncio.wait_for(pong, 10)
                await ws.send("pong-received")
            else:
                await ws.send(message)
    except ConnectionClosed:
        pass
    finally:
        await ws.wait_closed()
        print(f"CLOSED {ws.close_code} {ws.close_reason}", flush=True)


async def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--no-compression", action="store_true", help="refuse permessage-deflate")
    args = parser.parse_args()
    compression = None if args.no_compression else "deflate"
    async with serve(handler, "127.0.0.1", args.port, compression=compression, max_size=16 << 20) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"READY {port}", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())
