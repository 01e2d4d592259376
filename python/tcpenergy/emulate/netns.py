"""The kernel mode's plumbing: one network namespace per node, each with a TUN device whose other
end is a file descriptor held by this process, so that packets the node's kernel sends arrive here
and packets written here arrive at the node's kernel.

A TUN device is created in this process's namespace (``/dev/net/tun``, ``IFF_TUN | IFF_NO_PI``: raw
IP packets, no offloads, so each read is one packet as the stack sent it), then moved into its
node's namespace, where it gets the node's address and a route to every other node. The
descriptor stays valid across the move.

Names carry the creating process's id (``tcpe-<pid>-<run>-<node>``), so runs can go side by side
and :func:`cleanup` can tell what a killed run left behind from what a live one is using. Closing a
:class:`Namespaces` (or leaving its ``with`` block, or the interpreter exiting) deletes everything it
created; deleting a namespace deletes the device inside it. The host's own interfaces and routes
are never touched.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import re
import shutil
import struct
import subprocess
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from tcpenergy.exceptions import TcpEnergyError

PREFIX = "tcpe-"
# Addresses of the nodes: 10.201.<run>.<node + 1>, one /24 per run of this process.
_NET = "10.201"
_TUNSETIFF = 0x400454CA
_IFF_TUN = 0x0001
_IFF_NO_PI = 0x1000
# Linux interface names hold at most 15 characters.
_IFNAMSIZ = 15
_NAME = re.compile(rf"^{PREFIX}(\d+)-(\d+)-(\d+)$")
# Run numbers of this process's open sets of namespaces; a closed set's number is used again,
# so a long sweep never runs out of them.
_open_runs: set = set()


class NamespaceError(TcpEnergyError):
    """Namespaces or TUN devices cannot be made here, with the reason and what to do."""


def unavailable() -> Optional[str]:
    """Why this process cannot make network namespaces and TUN devices, or None when it can."""
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed; install it (apt-get install iproute2)"
    if not os.path.exists("/dev/net/tun"):
        return "/dev/net/tun does not exist: the kernel has no TUN support (modprobe tun)"
    if os.geteuid() != 0:
        return ("making network namespaces needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN); run as root, "
                "or under `unshare --user --map-root-user --net`")
    return None


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise NamespaceError(f"ip {' '.join(args)}: {done.stderr.strip() or 'failed'}")


def _open_tun(name: str) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, _TUNSETIFF, struct.pack("16sH", name.encode(), _IFF_TUN | _IFF_NO_PI))
    except OSError as exc:
        os.close(fd)
        raise NamespaceError(f"TUN device {name}: {exc.strerror}") from None
    return fd


@dataclass(frozen=True)
class Node:
    """One node's namespace, its TUN device and address, and this process's end of the device."""

    name: str
    namespace: str
    device: str
    address: str
    fd: int


class Namespaces:
    """A namespace with a TUN device for each of ``nodes``, each node routed to every other
    through its device (``mtu`` bytes). Use as a context manager, or call :meth:`close`."""

    def __init__(self, nodes: Sequence[str], mtu: int = 1500):
        reason = unavailable()
        if reason:
            raise NamespaceError(f"kernel mode unavailable: {reason}")
        if not 1 <= len(nodes) <= 253:
            raise NamespaceError(f"nodes: between 1 and 253 nodes, got {len(nodes)}")
        if len(set(nodes)) != len(nodes):
            raise NamespaceError(f"nodes: names must be distinct, got {list(nodes)}")
        free = [r for r in range(1, 256) if r not in _open_runs]
        if not free:
            raise NamespaceError("at most 255 sets of namespaces open at once per process")
        self.run = free[0]
        _open_runs.add(self.run)
        self.nodes: Dict[str, Node] = {}
        self._closed = False
        atexit.register(self.close)
        try:
            for i, name in enumerate(nodes):
                self._add(i, name, mtu)
            for node in self.nodes.values():
                for other in self.nodes.values():
                    if other is not node:
                        _ip("-n", node.namespace, "route", "add", f"{other.address}/32", "dev", node.device)
        except BaseException:
            self.close()
            raise

    def _add(self, i: int, name: str, mtu: int) -> None:
        pid = os.getpid()
        namespace = f"{PREFIX}{pid}-{self.run}-{i}"
        # Unique in the host's namespace while it is created there; short enough for IFNAMSIZ.
        device = f"te{pid % 10**7}r{self.run}n{i}"[:_IFNAMSIZ]
        address = f"{_NET}.{self.run}.{i + 1}"
        _ip("netns", "add", namespace)
        # Recorded before anything else can fail, so close() removes the namespace.
        self.nodes[name] = Node(name, namespace, device, address, -1)
        fd = _open_tun(device)
        self.nodes[name] = Node(name, namespace, device, address, fd)
        _ip("link", "set", device, "netns", namespace)
        _ip("-n", namespace, "link", "set", "lo", "up")
        _ip("-n", namespace, "addr", "add", f"{address}/32", "dev", device)
        _ip("-n", namespace, "link", "set", device, "mtu", str(mtu), "up")

    def command(self, node: str, argv: Sequence[str]) -> List[str]:
        """``argv`` run inside ``node``'s namespace."""
        return ["ip", "netns", "exec", self.nodes[node].namespace, *argv]

    def close(self) -> None:
        """Close the devices' descriptors and delete the namespaces (idempotent)."""
        if self._closed:
            return
        self._closed = True
        _open_runs.discard(self.run)
        for node in self.nodes.values():
            if node.fd >= 0:
                os.close(node.fd)
            subprocess.run(["ip", "netns", "del", node.namespace], capture_output=True)
        atexit.unregister(self.close)

    def __enter__(self) -> "Namespaces":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def ours() -> List[str]:
    """Every namespace on the host with this module's prefix."""
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    names = [line.split()[0] for line in done.stdout.splitlines() if line.strip()]
    return [n for n in names if _NAME.match(n)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def cleanup() -> List[str]:
    """Delete the namespaces left by runs whose process is gone (a SIGKILL gives no chance to
    clean up); those of live processes are left alone. Returns the names deleted."""
    removed = []
    for name in ours():
        pid = int(_NAME.match(name).group(1))
        if not _alive(pid):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
            removed.append(name)
    return removed


__all__ = ["Namespaces", "NamespaceError", "Node", "PREFIX", "cleanup", "ours", "unavailable"]
