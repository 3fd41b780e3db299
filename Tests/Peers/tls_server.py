#!/usr/bin/env python3
"""TLS WebSocket echo server peer (Python `websockets` over `ssl`), for the TLS tests.

Serves wss:// on 127.0.0.1 (port 0 = any free port) with the given certificate and key
(made by `faultline cert`), prints `READY <port>` once listening, echoes every message,
closes with 4009 "bye" on the text "close-4009", and prints `CLOSED <code> <reason>`
when a connection ends and `TLSERROR <reason>` when a client's handshake fails.
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


def report_tls_errors(loop, context):
    error = context.get("exception")
    if isinstance(error, ssl.SSLError):
        print(f"TLSERROR {error.reason}", flush=True)
    else:
        loop.default_exception_handler(context)


async def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--no-compression", action="store_true", help="refuse permessage-deflate")
    args = parser.parse_args()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    asyncio.get_running_loop().set_exception_handler(report_tls_errors)
    compression = None if args.no_compression else "deflate"
    async with serve(handler, "127.0.0.1", args.port, ssl=context, compression=compression,
                     max_size=16 << 20) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"READY {port}", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())
