"""A real graphql-transport-ws server for the graphql-ws pack's tests: strawberry-graphql's
ASGI app on uvicorn, on an ephemeral port (printed as {"kind": "listening", "port": N}).

Its schema has one subscription, `tick(every: Float)`, that yields 1, 2, 3 ... every
`every` seconds. --refuse-from N makes strawberry reject every connection_init from the
Nth WebSocket connection on (its on_ws_connect raises ConnectionRejectionError, which
strawberry answers with close 4403 Forbidden): the refused reconnects of the tests.
"""
import argparse
import asyncio
import json
import socket
from datetime import timedelta
from typing import AsyncGenerator

import strawberry
import uvicorn
from strawberry.asgi import GraphQL
from strawberry.exceptions import ConnectionRejectionError
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL


@strawberry.type
class Query:
    hello: str = "world"


@strawberry.type
class Subscription:
    @strawberry.subscription
    async def tick(self, every: float = 0.1) -> AsyncGenerator[int, None]:
        n = 0
        while True:
            n += 1
            yield n
            await asyncio.sleep(every)


class App(GraphQL):
    def __init__(self, refuse_from, **kwargs):
        super().__init__(**kwargs)
        self.refuse_from = refuse_from
        self.connections = 0

    async def on_ws_connect(self, context):
        self.connections += 1
        if self.refuse_from is not None and self.connections >= self.refuse_from:
            raise ConnectionRejectionError({"reason": "refused by the test server"})
        return await super().on_ws_connect(context)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--init-timeout", type=float, default=3.0)
    parser.add_argument("--refuse-from", type=int, default=None)
    args = parser.parse_args()
    schema = strawberry.Schema(query=Query, subscription=Subscription)
    app = App(args.refuse_from, schema=schema, subscription_protocols=[GRAPHQL_TRANSPORT_WS_PROTOCOL],
              connection_init_wait_timeout=timedelta(seconds=args.init_timeout))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    print(json.dumps({"kind": "listening", "port": sock.getsockname()[1]}), flush=True)
    config = uvicorn.Config(app, log_level="warning", ws="websockets-sansio", lifespan="off")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
