"""The gql client (its websockets transport, subprotocol graphql-transport-ws, and its
reconnecting session) for the graphql-ws pack's tests.

Subscribes to `tick` through a session made by connect_async(reconnecting=True) with a
retry_connect decorator of tenacity's wait_exponential, as gql's own default is, only
with a short multiplier and cap so the tests run in seconds. When the subscription
fails (the connection was lost) the app subscribes again, as gql leaves that to it:
once the session has reconnected (its connected event), after --resubscribe-wait more
seconds; with --poll, --resubscribe-wait seconds after the failure whether or not the
session has reconnected, the naive app (gql's transport counts itself connected once the
WebSocket is open, before connection_ack: base.py `connect`, so such a subscribe may go
out before the ack). Prints one JSON line per result and per failure and
exits after --duration seconds.
"""
import argparse
import asyncio
import json
import time

from gql import Client, gql
from gql.transport.exceptions import TransportConnectionFailed
from gql.transport.websockets import WebsocketsTransport
from tenacity import retry, retry_if_exception_type, wait_exponential

QUERY = gql("subscription Tick($every: Float!) { tick(every: $every) }")


def say(kind, **fields):
    print(json.dumps({"kind": kind, "t": round(time.monotonic(), 3), **fields}), flush=True)


async def subscribe_forever(session, args):
    while True:
        # The session's connected event is set each time its connection loop has connected
        # (ack received); it is waited for before the subscription fails, so it is not missed.
        reconnected = asyncio.ensure_future(session._connected_event.wait())
        try:
            async for result in session.subscribe(QUERY, variable_values={"every": args.every}):
                say("next", n=next(iter(result.values()), None))  # strawberry: tick; the sim: sim-tick
        except Exception as error:  # the app subscribes again
            say("failed", error=type(error).__name__)
            # Only a lost connection makes the session reconnect by itself (client.py
            # ReconnectingAsyncClientSession._subscribe); after any other failure (a ping
            # without pong: TransportServerError) the app's next subscribe finds the
            # connection closed, and that requests the reconnect.
            if not isinstance(error, TransportConnectionFailed):
                reconnected.cancel()
                await asyncio.sleep(args.resubscribe_wait)
                continue
        if not args.poll:
            try:
                await asyncio.wait_for(reconnected, args.timeout * 10)
            except asyncio.TimeoutError:
                pass
        else:
            reconnected.cancel()
        await asyncio.sleep(args.resubscribe_wait)


async def run(args):
    transport = WebsocketsTransport(
        url=args.url,
        subprotocols=[WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL],
        ping_interval=args.ping_interval,
        pong_timeout=args.pong_timeout,
        connect_timeout=args.timeout,
        close_timeout=args.timeout,
        ack_timeout=args.timeout,
        # websockets' own close_timeout: how long close() waits for the closing handshake.
        # --no-compression: no permessage-deflate (compression is on by default; the proxy
        # negotiates it without context takeover when it has faults).
        connect_args={"close_timeout": args.close_timeout, **({"compression": None} if args.no_compression else {})},
    )
    client = Client(transport=transport)
    retry_connect = retry(retry=retry_if_exception_type(Exception),
                          wait=wait_exponential(multiplier=args.multiplier, max=args.max_wait))
    session = await client.connect_async(reconnecting=True, retry_connect=retry_connect, retry_execute=False)
    say("connected")
    task = asyncio.ensure_future(subscribe_forever(session, args))
    await asyncio.sleep(args.duration)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    await client.close_async()
    say("closed")


def main():
    import logging, os
    if os.environ.get("GQL_DEBUG"):
        logging.basicConfig(level=logging.DEBUG)
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--duration", type=float, default=1.5)
    parser.add_argument("--every", type=float, default=0.1)
    parser.add_argument("--ping-interval", type=float, default=None)
    parser.add_argument("--pong-timeout", type=float, default=None)
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument("--close-timeout", type=float, default=0.5)
    parser.add_argument("--multiplier", type=float, default=0.1)
    parser.add_argument("--max-wait", type=float, default=0.4)
    parser.add_argument("--resubscribe-wait", type=float, default=0.0)
    parser.add_argument("--poll", action="store_true")
    parser.add_argument("--no-compression", action="store_true")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
