"""`kgitops local up|down|status`: the embedded local broker (Tansu) for trying kgitops out.

`up` starts it in the background on 127.0.0.1 (port 19092 by default, which
topics/local/cluster.yaml uses) and waits until it answers a Metadata request; `down` stops
it; `status` says whether it runs and answers (exit 1 when it does not).
"""

from __future__ import annotations

import argparse

from kgitops.commands._units import integer

NAME = "local"
HELP = "start, stop or check the embedded local Kafka-protocol broker (Tansu)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from kgitops.cluster.local import DEFAULT_DIR, DEFAULT_PORT

    sub = parser.add_subparsers(dest="local_command", metavar="ACTION", required=True)
    for name, text in (
        ("up", "start the local broker in the background"),
        ("down", "stop the local broker"),
        ("status", "report whether the local broker runs and answers"),
    ):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument(
            "--dir",
            default=DEFAULT_DIR,
            help=f"where the pid file and log live (default: {DEFAULT_DIR})",
        )
        if name == "up":
            p.add_argument(
                "--port",
                type=integer,
                default=DEFAULT_PORT,
                help=f"loopback port to listen on (default: {DEFAULT_PORT})",
            )


def run(args: argparse.Namespace) -> int:
    from kgitops.cluster import local
    from kgitops.errors import KgitopsError

    if args.local_command == "up":
        if not 1 <= args.port <= 65535:
            raise KgitopsError(f"--port {args.port}: a port is between 1 and 65535")
        st = local.up(args.dir, args.port)
        print(f"local broker running at {st.bootstrap} (pid {st.pid}); log: {st.log_path}")
        print("stop it with: kgitops local down" + _dir_flag(args.dir))
        return 0
    if args.local_command == "down":
        stopped = local.down(args.dir)
        if stopped is None:
            print(f"no local broker running (from {args.dir})")
        else:
            print(f"stopped local broker at {stopped.bootstrap} (pid {stopped.pid})")
        return 0
    st = local.status(args.dir)
    if not st.running:
        print(f"not running (from {args.dir}); start it with: kgitops local up")
        return 1
    health = "answering" if st.healthy else "NOT answering Metadata requests"
    print(f"running at {st.bootstrap} (pid {st.pid}), {health}; log: {st.log_path}")
    return 0 if st.healthy else 1


def _dir_flag(directory: str) -> str:
    from kgitops.cluster.local import DEFAULT_DIR

    return "" if directory == DEFAULT_DIR else f" --dir {directory}"
