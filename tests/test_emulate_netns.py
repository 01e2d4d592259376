"""The kernel mode's namespaces (tcpenergy/emulate/netns.py): a namespace and a TUN device per node,
the kernel's TCP carried between them through this process, and nothing left behind (the plumbing
the kernel mode's runs are built on)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tcpenergy.emulate import netns

# No skip: the machines that run the suite (and CI) can make namespaces; where one cannot, the
# tests fail with netns.unavailable()'s reason.


def _links() -> str:
    return subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout


def test_each_node_gets_a_namespace_with_its_device_up_addressed_and_routed_and_close_removes_them():
    with netns.Namespaces(["sender", "receiver"], mtu=1400) as ns:
        names = {n.namespace for n in ns.nodes.values()}
        assert names <= set(netns.ours())
        for node in ns.nodes.values():
            shown = subprocess.run(["ip", "-n", node.namespace, "-o", "addr", "show", "dev", node.device],
                                   capture_output=True, text=True).stdout
            assert f"inet {node.address}/32" in shown
            link = subprocess.run(["ip", "-n", node.namespace, "-o", "link", "show", "dev", node.device],
                                  capture_output=True, text=True).stdout
            assert "mtu 1400" in link and ",UP" in link
            other = next(o for o in ns.nodes.values() if o is not node)
            route = subprocess.run(["ip", "-n", node.namespace, "route", "get", other.address],
                                   capture_output=True, text=True).stdout
            assert f"dev {node.device}" in route
            # The device lives in the node's namespace only, never in the host's.
            assert node.device not in _links()
    assert not names & set(netns.ours())


def test_the_kernels_tcp_crosses_from_one_namespace_to_the_other_through_this_process():
    """Every packet the sender's kernel sends is read here and written to the receiver's device (and
    back): a 300 kB transfer arrives whole."""
    size = 300_000
    with netns.Namespaces(["sender", "receiver"]) as ns:
        a, b = ns.nodes["sender"], ns.nodes["receiver"]
        server = subprocess.Popen(ns.command("receiver", [sys.executable, "-c", textwrap.dedent(f"""
            import socket
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("{b.address}", 5001)); s.listen(1); print("ready", flush=True)
            c, _ = s.accept(); n = 0
            while True:
                d = c.recv(65536)
                if not d: break
                n += len(d)
            print(n, flush=True)""")]), stdout=subprocess.PIPE, text=True)
        assert server.stdout.readline().strip() == "ready"
        client = subprocess.Popen(ns.command("sender", [sys.executable, "-c", textwrap.dedent(f"""
            import socket
            s = socket.create_connection(("{b.address}", 5001)); s.sendall(b"x" * {size}); s.close()""")]))
        peer = {a.fd: b.fd, b.fd: a.fd}
        relayed, deadline = 0, time.monotonic() + 30
        while server.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select(list(peer), [], [], 0.05)
            for fd in ready:
                os.write(peer[fd], os.read(fd, 65535))
                relayed += 1
        client.wait(timeout=10)
        assert int(server.stdout.read().strip()) == size
        assert relayed > size // 1500


def test_runs_side_by_side_get_distinct_names():
    with netns.Namespaces(["a", "b"]) as one, netns.Namespaces(["a", "b"]) as two:
        first = {n.namespace for n in one.nodes.values()} | {n.device for n in one.nodes.values()}
        second = {n.namespace for n in two.nodes.values()} | {n.device for n in two.nodes.values()}
        assert not first & second
        assert {n.address for n in one.nodes.values()}.isdisjoint(n.address for n in two.nodes.values())


def test_cleanup_removes_what_a_killed_run_left_and_spares_a_live_one():
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import time
        from tcpenergy.emulate import netns
        ns = netns.Namespaces(["x", "y"]); print("made", flush=True); time.sleep(60)""")],
        stdout=subprocess.PIPE, text=True, env={**os.environ})
    assert child.stdout.readline().strip() == "made"
    left = [n for n in netns.ours() if n.startswith(f"{netns.PREFIX}{child.pid}-")]
    assert len(left) == 2
    with netns.Namespaces(["live"]) as mine:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        removed = netns.cleanup()
        assert sorted(removed) == sorted(left)
        assert mine.nodes["live"].namespace in netns.ours()
    assert not any(n.startswith(f"{netns.PREFIX}{child.pid}-") for n in netns.ours())


def test_bad_node_lists_are_refused_naming_the_problem():
    with pytest.raises(netns.NamespaceError, match="distinct"):
        netns.Namespaces(["a", "a"])
    with pytest.raises(netns.NamespaceError, match="between 1 and 253"):
        netns.Namespaces([])


def test_a_closed_sets_run_number_is_used_again():
    # A sweep of more than 255 emulated runs in one process makes and closes that many sets.
    first = netns.Namespaces(["a"])
    number = first.run
    first.close()
    second = netns.Namespaces(["a"])
    try:
        assert second.run == number
    finally:
        second.close()
