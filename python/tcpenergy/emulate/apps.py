"""The built-in sender and receiver programs of kernel mode, run inside a node's namespace.

Run by path with the standard library alone (``python3 apps.py send ...``), so a program starts in
milliseconds and imports nothing of the package. Each prints one JSON line on stdout when done:
bytes moved, its times on the monotonic clock (shared by every process on the host), and the
kernel's own view of the connection (``TCP_INFO``) read just before the socket closes.

    receive --bind ADDR --port P [--clamp BYTES] [--until T]
        Listen, print "ready", take one connection, read to its end (or until monotonic time T,
        when the flow is over), report.
    send --to ADDR --port P [--bytes N | --message N ...] [--abort-at T] [--at T0] [--congestion NAME]
         [--sndbuf BYTES]
        At monotonic time T0, connect, write N bytes (or paced messages), close the sending side,
        wait for the receiver to close (so every byte is acknowledged), report. With --abort-at,
        the flow is over at T (a timed flow's duration, a flow's stop): write until then (as much
        as the connection takes, without --bytes or --message), then reset the connection.
    udp-receive --bind ADDR --port P --until T
        Bind, print "ready", count datagrams until monotonic time T, report.
    udp-send --to ADDR --port P --message N --until T [--at T0] (--rate BPS | --interval S ...)
        From T0 to T, send datagrams of N payload bytes, report.

Paced traffic (the scenario's on_off and cbr kinds, docs/models/network.md): `--message N` bytes
every `--interval S` (`--distribution fixed` or `exponential`, seeded by `--seed`), or on CBR's
exact schedule `--rate BPS` (write k at T0 + k N 8 / rate), until `--until T`.
"""

import argparse
import json
import os
import random
import socket
import struct
import sys
import time

# struct tcp_info (include/uapi/linux/tcp.h): (name, offset, struct format). Fields past what
# the running kernel returns are left out of the report.
TCP_INFO_FIELDS = (
    ("state", 0, "B"), ("ca_state", 1, "B"), ("retransmits", 2, "B"), ("probes", 3, "B"),
    ("backoff", 4, "B"), ("options", 5, "B"),
    ("rto_us", 8, "I"), ("ato_us", 12, "I"), ("snd_mss", 16, "I"), ("rcv_mss", 20, "I"),
    ("unacked", 24, "I"), ("sacked", 28, "I"), ("lost", 32, "I"), ("retrans", 36, "I"),
    ("pmtu", 60, "I"), ("rcv_ssthresh", 64, "I"), ("rtt_us", 68, "I"), ("rttvar_us", 72, "I"),
    ("snd_ssthresh", 76, "I"), ("snd_cwnd", 80, "I"), ("advmss", 84, "I"), ("reordering", 88, "I"),
    ("total_retrans", 100, "I"), ("bytes_acked", 120, "Q"), ("bytes_received", 128, "Q"),
    ("segs_out", 136, "I"), ("segs_in", 140, "I"), ("min_rtt_us", 148, "I"),
    ("data_segs_in", 152, "I"), ("data_segs_out", 156, "I"), ("delivered", 192, "I"),
    ("delivered_ce", 196, "I"), ("bytes_sent", 200, "Q"), ("bytes_retrans", 208, "Q"),
    ("dsack_dups", 216, "I"), ("reord_seen", 220, "I"), ("rcv_ooopack", 224, "I"),
    ("total_rto", 240, "H"), ("total_rto_recoveries", 242, "H"), ("total_rto_time_ms", 244, "I"),
)
TCP_INFO_SIZE = 248
CHUNK = 1 << 16


def tcp_info(sock: socket.socket) -> dict:
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_SIZE)
    info = {}
    for name, offset, fmt in TCP_INFO_FIELDS:
        if offset + struct.calcsize(fmt) <= len(raw):
            info[name] = struct.unpack_from(fmt, raw, offset)[0]
    return info


def report(**fields) -> None:
    """Print the program's report, with the CPU time it used (user and system: the system part
    holds the kernel's protocol work done on its behalf in system calls)."""
    used = os.times()
    fields.update(cpu_user_s=used.user, cpu_system_s=used.system)
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def receive(args) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if args.clamp:
        # The largest window it advertises (inherited by the accepted connection).
        listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP, args.clamp)
    listener.bind((args.bind, args.port))
    listener.listen(1)
    print("ready", flush=True)
    if args.until:
        listener.settimeout(max(0.001, args.until - time.monotonic()))
    try:
        conn, _ = listener.accept()
    except socket.timeout:
        report(bytes=0, accepted=None, ended=time.monotonic(), tcp_info={})
        return
    accepted = time.monotonic()
    got = 0
    buf = bytearray(CHUNK)
    while True:
        if args.until:
            # The flow is over at `until`: stop reading then.
            left = args.until - time.monotonic()
            if left <= 0:
                break
            conn.settimeout(left)
        try:
            n = conn.recv_into(buf)
        except (socket.timeout, ConnectionResetError):
            break
        if n == 0:
            break
        got += n
    ended = time.monotonic()
    info = tcp_info(conn)
    conn.close()
    listener.close()
    report(bytes=got, accepted=accepted, ended=ended, tcp_info=info)


def schedule(args, start: float):
    """When each paced message is written, on the monotonic clock, until ``args.until``."""
    draw = random.Random(args.seed)
    k, at = 0, start
    while True:
        if args.rate:
            # CBR: message k at start + k N 8 / rate, the first at the start.
            at = start + k * args.message * 8 / args.rate
        elif k:
            gap = args.interval if args.distribution == "fixed" else draw.expovariate(1 / args.interval)
            at += gap
        if at >= args.until:
            return
        yield at
        k += 1


def send(args) -> None:
    if args.at:
        time.sleep(max(0.0, args.at - time.monotonic()))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if args.congestion:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, args.congestion.encode())
    if args.sndbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, args.sndbuf)
    started = time.monotonic()
    sock.connect((args.to, args.port))
    payload = bytes(CHUNK)
    sent = 0
    over = args.abort_at or None
    if over:
        # The flow is over at `over` (its duration or its stop): every wait ends by then.
        sock.settimeout(0.05)

    def running() -> bool:
        return over is None or time.monotonic() < over

    if args.message:
        payload = bytes(args.message)
        for at in schedule(args, started):
            time.sleep(max(0.0, at - time.monotonic()))
            if not running():
                break
            # Not sendall: with the flow's stop, waits time out every 50 ms (a message may
            # wait longer for room, e.g. behind a radio's promotion), and the rest goes on.
            view, done = memoryview(payload), 0
            while done < len(view) and running():
                try:
                    done += sock.send(view[done:])
                except socket.timeout:
                    pass
            sent += done
    else:
        # Bulk: N bytes; timed (no --bytes): as much as the connection takes until it is over.
        while running() and (args.bytes is None or sent < args.bytes):
            try:
                sent += sock.send(payload if args.bytes is None else payload[: min(CHUNK, args.bytes - sent)])
            except socket.timeout:
                pass
    written = time.monotonic()
    if running():
        sock.shutdown(socket.SHUT_WR)
        # The receiver closes once it has read everything: then every byte was acknowledged.
        while running():
            try:
                if not sock.recv(CHUNK):
                    break
            except socket.timeout:
                pass
    if not running():
        # Over: both ends stop at once, as in simulation (docs/models/network.md); the
        # connection is reset, nothing more is drained.
        info = tcp_info(sock)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    else:
        info = tcp_info(sock)
    sock.close()
    report(bytes=sent, started=started, written=written, ended=time.monotonic(), tcp_info=info)


def udp_receive(args) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((args.bind, args.port))
    print("ready", flush=True)
    got = datagrams = 0
    while True:
        left = args.until - time.monotonic()
        if left <= 0:
            break
        sock.settimeout(left)
        try:
            got += len(sock.recv(65535))
            datagrams += 1
        except socket.timeout:
            break
    sock.close()
    report(bytes=got, datagrams=datagrams)


def udp_send(args) -> None:
    if args.at:
        time.sleep(max(0.0, args.at - time.monotonic()))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    payload = bytes(args.message)
    started = time.monotonic()
    sent = datagrams = 0
    for at in schedule(args, started):
        time.sleep(max(0.0, at - time.monotonic()))
        sent += sock.sendto(payload, (args.to, args.port))
        datagrams += 1
    sock.close()
    report(bytes=sent, datagrams=datagrams, started=started, ended=time.monotonic())


def paced(parser) -> None:
    parser.add_argument("--interval", type=float, default=0.0)
    parser.add_argument("--distribution", choices=("fixed", "exponential"), default="exponential")
    parser.add_argument("--rate", type=float, default=0.0)
    parser.add_argument("--until", type=float, default=float("inf"))
    parser.add_argument("--seed", type=int, default=1)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="apps.py")
    sub = parser.add_subparsers(dest="role", required=True)
    r = sub.add_parser("receive")
    r.add_argument("--bind", required=True)
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--clamp", type=int, default=0)
    r.add_argument("--until", type=float, default=0.0)
    s = sub.add_parser("send")
    s.add_argument("--to", required=True)
    s.add_argument("--port", type=int, required=True)
    amount = s.add_mutually_exclusive_group()
    amount.add_argument("--bytes", type=int)
    amount.add_argument("--message", type=int)
    s.add_argument("--abort-at", type=float, default=0.0)
    paced(s)
    s.add_argument("--at", type=float, default=0.0)
    s.add_argument("--congestion", default="")
    s.add_argument("--sndbuf", type=int, default=0)
    ur = sub.add_parser("udp-receive")
    ur.add_argument("--bind", required=True)
    ur.add_argument("--port", type=int, required=True)
    ur.add_argument("--until", type=float, required=True)
    us = sub.add_parser("udp-send")
    us.add_argument("--to", required=True)
    us.add_argument("--port", type=int, required=True)
    us.add_argument("--message", type=int, required=True)
    us.add_argument("--at", type=float, default=0.0)
    paced(us)
    args = parser.parse_args(argv)
    {"receive": receive, "send": send, "udp-receive": udp_receive, "udp-send": udp_send}[args.role](args)


if __name__ == "__main__":
    main()
