#!/usr/bin/env python3
"""TLS client peer (Python `ssl`, strict verification) for the TLS listener tests.

Connects to 127.0.0.1:PORT, verifying the server's certificate for --name against --ca
with VERIFY_X509_STRICT (the RFC 5280 checks Python 3.13 turns on by default), sends
--message, reads until as many bytes came back, and prints `ECHO <text>` and
`VERSION <TLS version>`; on a failed handshake prints `TLSERROR <reason>` and exits 1.
"""
import argparse
import socket
import ssl
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--name", default="localhost")
    parser.add_argument("--message", default="hello from python")
    args = parser.parse_args()
    context = ssl.create_default_context(cafile=args.ca)
    context.verify_flags |= ssl.VERIFY_X509_STRICT
    with socket.create_connection(("127.0.0.1", args.port), timeout=10) as raw:
        try:
            tls = context.wrap_socket(raw, server_hostname=args.name)
        except ssl.SSLError as error:
            print(f"TLSERROR {error.reason} {error.verify_message if hasattr(error, 'verify_message') else ''}", flush=True)
            sys.exit(1)
        with tls:
            wanted = args.message.encode()
            tls.sendall(wanted)
            got = b""
            while len(got) < len(wanted):
                chunk = tls.recv(65536)
                if not chunk:
                    break
                got += chunk
            print(f"ECHO {got.decode()}", flush=True)
            print(f"VERSION {tls.version()}", flush=True)


if __name__ == "__main__":
    main()
