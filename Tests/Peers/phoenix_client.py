"""A real Phoenix Channels client (phoenix-channels-python-client) for PhoenixClientTests.

Usage: phoenix_client.py URL TOPIC SECONDS [v1|v2] [floors]

Joins TOPIC, keeps the socket up (the library heartbeats, reconnects and rejoins by
itself) for SECONDS, then shuts down. Its timings are shortened with its own options:
heartbeats every 0.3 s with a 0.6 s acknowledgement deadline (one unanswered heartbeat
closes the socket at the next beat), reconnect delays of 0.1 s doubling to 0.4 s with
equal jitter, the counter reset after 0.05 s of uptime, and no rapid-disconnect floors.
With 'floors' the rapid-disconnect floors are on, shortened: a session under 1 s is rapid,
the counter resets only after 5 s of uptime, and the floor is 1 s after one rapid
disconnect in the last minute, 2 s after two.
Prints one line per lifecycle event: 'connected', 'joined TOPIC', 'disconnect ...',
'reconnected', 'terminal ...', 'done'.
"""
import asyncio
import sys

from phoenix_channels_python_client import PHXChannelsClient, PhoenixChannelsProtocolVersion
from phoenix_channels_python_client.client_types import ReconnectPolicy
from phoenix_channels_python_client.exceptions import PHXConnectionError

POLICY = ReconnectPolicy(
    base_delay_s=0.1, factor=2.0, max_delay_s=0.4, stable_reset_s=0.05,
    rapid_disconnect_uptime_s=0.0, rapid_suppress_disconnect_count=0,
    rapid_first_min_delay_s=0.0, rapid_second_min_delay_s=0.0,
)

FLOORS_POLICY = ReconnectPolicy(
    base_delay_s=0.1, factor=2.0, max_delay_s=0.4, stable_reset_s=5.0,
    rapid_disconnect_uptime_s=1.0, rapid_window_s=60.0, rapid_suppress_disconnect_count=0,
    rapid_first_min_delay_s=1.0, rapid_second_min_delay_s=2.0,
)


async def main(url, topic, seconds, version, policy):
    async def on_disconnect(error):
        print("disconnect", type(error).__name__ if error else "clean", flush=True)

    async def on_reconnect():
        print("reconnected", flush=True)

    async def on_message(message):
        pass

    client = PHXChannelsClient(
        url, "test-key", protocol_version=version, reconnect_policy=policy,
        heartbeat_interval_s=0.3, heartbeat_dead_threshold_s=0.6,
        on_disconnect=on_disconnect, on_reconnect=on_reconnect,
    )
    try:
        async with client:
            print("connected", flush=True)
            await client.subscribe_to_topic(topic, on_message)
            print("joined", topic, flush=True)
            try:
                await asyncio.wait_for(client.run_forever(install_signal_handlers=False), seconds)
            except TimeoutError:
                pass
    except PHXConnectionError as error:
        print("terminal", type(error).__name__, flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    version = PhoenixChannelsProtocolVersion.V1 if len(sys.argv) > 4 and sys.argv[4] == "v1" else PhoenixChannelsProtocolVersion.V2
    policy = FLOORS_POLICY if len(sys.argv) > 5 and sys.argv[5] == "floors" else POLICY
    asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3]), version, policy))
