#!/usr/bin/env python3
"""TLS WebSocket echo server peer (Python `websockets` over `ssl`), for the TLS tests.

Serves wss:// on 127.0.0.1 (port 0 = any free port) with the given certificate and key
(made by `faultline cert`), prints `READY <port>` once listening, echoes every message,
closes with 4009 "bye" on the text "close-4009", and prints `CLOSED <code> <reason>`
when a connection ends.
permessage-deflate is offered to clients that ask (websockets' default). Runs until killed.
"""
import argparse
import asyncio
import ssl

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed


async def handler(ws):
    try:
        async for message in ws:
            if message == "close-4009":
                await ws.close(4009, "bye")
                break
            await ws.send(message)
    except ConnectionClosed:
        pass
    finally:
        await ws.wait_closed()
        print(f"CLOSED {ws.close_code} {ws.close_reason}", flush=True)


async def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--no-compression", action="store_true", help="refuse permessage-deflate")
    parser.add_argument("--tls12", action="store_true", help="offer TLS 1.2 at most")
    args = parser.parse_args()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    if args.tls12:
        context.maximum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(args.cert, args.key)
    compression = None if args.no_compression else "deflate"
    async with serve(handler, "127.0.0.1", args.port, ssl=context, compression=compression,
                     max_size=16 << 20) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"READY {port}", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())
