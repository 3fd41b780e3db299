
/// The EXAMPLES section of every command's help, in one table
/// (commands whose discussion already ends with EXAMPLES, such as frames and specs, keep
/// theirs). Each example is a command line that works as written on a fresh checkout.
package enum CommandExamples {
    package static let table: [String: HelpExtras] = [
        "faultline": HelpExtras(examples: [
            "faultline demo                                   everything on loopback, 30 s",
            "faultline proxy --listen 127.0.0.1:7000 --upstream ws://127.0.0.1:7001 --record s.jsonl",
            "faultline analyze s.jsonl --format html --output report.html",
            "faultline specs rules",
        ]),
        "faultline proxy": HelpExtras(examples: [
            "faultline proxy --listen 127.0.0.1:7000 --upstream ws://127.0.0.1:7001 --record session.jsonl",
            "faultline proxy --listen 0.0.0.0:7000 --upstream wss://realtime.example.com --record s.jsonl --fault 'close:4009,after=30s'",
            "faultline proxy --listen 127.0.0.1:7000 --upstream ws://127.0.0.1:7001 --live --fail-on error",
            "faultline proxy --listen 127.0.0.1:7000 --upstream ws://127.0.0.1:7001 --control 127.0.0.1:7002",
            "faultline proxy --listen 127.0.0.1:7000 --upstream ws://127.0.0.1:7001 --record soak.jsonl.zst --rotate 1h   (zstd, soak.0001.jsonl.zst, ...)",
            "faultline proxy --listen 0.0.0.0:7000 --upstream ws://10.0.0.7:7001 --replica east-1 --record east-1.jsonl.zst   (one replica of a fleet)",
        ]),
        "faultline analyze": HelpExtras(examples: [
            "faultline analyze session.jsonl",
            "faultline analyze session.jsonl --format junit --output results.xml --fail-on warning",
            "faultline analyze traffic.pcap --filter 'tcp port 8080' --protocol-prefix pusher",
            "faultline analyze session.jsonl --app-secret s3cret --resubscribe-window 3",
            "faultline analyze soak.*.jsonl.zst                 (a rotated recording's parts, read as one)",
            "zstd -dc session.jsonl.zst | faultline analyze -    (or just: faultline analyze session.jsonl.zst)",
            "faultline analyze --explain stale.close-code",
            "faultline analyze --merge east-1.jsonl.zst east-2.jsonl.zst east-3.jsonl.zst   (a fleet's replicas, one session)",
        ]),
        "faultline replay": HelpExtras(examples: [
            "faultline replay session.jsonl --listen 127.0.0.1:7100            (as the server)",
            "faultline replay session.jsonl --upstream ws://127.0.0.1:7001 --speed 4   (as the client)",
        ]),
        "faultline ctl": HelpExtras(examples: [
            "faultline ctl --control 127.0.0.1:7002 connections",
            "faultline ctl --control 127.0.0.1:7002 add 'drop,conn=3'",
            "FAULTLINE_CONTROL_TOKEN=secret faultline ctl --control 10.0.0.5:7002 metrics",
            "faultline ctl --proxy 127.0.0.1:7002 --proxy 127.0.0.1:7012 apply 'client=(client 1)' close:4009   (a fleet)",
            "faultline ctl --control 127.0.0.1:7002 intercept on 3 --from server --match subscribe",
            "faultline ctl --control 127.0.0.1:7002 intercept list",
            "faultline ctl --control 127.0.0.1:7002 intercept edit 3 1 '{\"event\":\"bird:error\"}'",
            "faultline ctl --control 127.0.0.1:7002 intercept off 3",
        ]),
        "faultline ctl intercept": HelpExtras(examples: [
            "faultline ctl --control 127.0.0.1:7002 intercept on 3 --from server --match subscribe",
            "faultline ctl --control 127.0.0.1:7002 intercept list",
            "faultline ctl --control 127.0.0.1:7002 intercept edit 3 1 '{\"event\":\"bird:error\"}'",
            "faultline ctl --control 127.0.0.1:7002 intercept drop 3 2",
            "faultline ctl --control 127.0.0.1:7002 intercept off 3",
        ]),
        "faultline cert": HelpExtras(examples: [
            "faultline cert --out certs --host localhost --host 127.0.0.1",
        ]),
        "faultline export": HelpExtras(examples: [
            "faultline export session.jsonl --pcap session.pcap && tshark -r session.pcap -Y websocket",
            "faultline export --merge east-1.jsonl.zst east-2.jsonl.zst --pcap fleet.pcapng",
        ]),
        "faultline synth": HelpExtras(examples: [
            "faultline synth --out big.jsonl --clients 200 --size 100M --seed 1",
        ]),
        "faultline demo": HelpExtras(examples: [
            "faultline demo",
            "faultline demo --clients 20 --duration 60s --out demo20",
        ]),
        "faultline sim": HelpExtras(examples: [
            "faultline sim server --listen 127.0.0.1:7001 --app-key demo-key --app-secret s3cret",
            "faultline sim client --url ws://127.0.0.1:7000/app/demo-key --app-secret s3cret --clients 2 --duration 9s   (through the proxy)",
        ]),
        "faultline sim server": HelpExtras(examples: [
            "faultline sim server --listen 127.0.0.1:7001 --app-key demo-key --app-secret s3cret",
            "faultline sim server --listen 127.0.0.1:7001 --stall-pongs --close-after 10s --close-code 4009",
        ]),
        "faultline sim client": HelpExtras(examples: [
            "faultline sim client --url ws://127.0.0.1:7000/app/demo-key --app-secret s3cret --clients 2 --duration 9s --seed 7",
            "faultline sim client --url ws://127.0.0.1:7000/app/demo-key --app-secret s3cret --bug skip-resubscribe --duration 20s",
        ]),
    ]
}
