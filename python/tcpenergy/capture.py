"""Packet capture files: one pcap file per sending interface that sent a packet, written into a
directory (docs/capture.md).

The directory is checked before the run, so an unusable one costs no simulation, and created
and filled only after the run succeeded, each file atomically, so a failure leaves nothing."""

from __future__ import annotations

import os
from importlib.resources import files as package_files
from pathlib import Path
from typing import Iterable, List, Sequence, Tuple

from tcpenergy.exceptions import TcpEnergyError
from tcpenergy.outputs import OutputPathError, atomic_write

PCAP_SUFFIX = ".pcap"
# E2TCP packets with compact headers have no IP header: they go to their own files, link type
# 147 (LINKTYPE_USER0), which the dissector shipped in the package decodes.
E2TCP_SUFFIX = ".e2tcp" + PCAP_SUFFIX


def e2tcp_dissector() -> Path:
    """The Wireshark Lua dissector for E2TCP capture files, installed with the package:
    ``tshark -X lua_script:<this path> -r <from>-<to>.e2tcp.pcap``."""
    return Path(str(package_files("tcpenergy") / "wireshark" / "e2tcp.lua"))


def describe_written(directory: Path, written: Sequence[Path]) -> List[str]:
    """Lines saying which capture files a run wrote into ``directory`` (for the command line),
    and how to read the E2TCP ones."""
    if not written:
        return [f"pcap: no interface sent a packet; no file written in {directory}"]
    names = ", ".join(p.name for p in written)
    lines = [f"pcap: wrote {len(written)} file{'s' if len(written) != 1 else ''} in {directory}: {names}"]
    if any(p.name.endswith(E2TCP_SUFFIX) for p in written):
        lines.append(f"pcap: *{E2TCP_SUFFIX} files hold E2TCP's compact headers (link type 147); read them with "
                     f"tshark -X lua_script:{e2tcp_dissector()} -r FILE")
    return lines


class CaptureWriteError(TcpEnergyError):
    """The run succeeded but a capture file could not be written (disk full, permissions)."""


def check_pcap_dir(path: Path, option: str = "pcap") -> None:
    """Reject a capture directory that cannot be created or written; ``option`` names it in
    the message (``--pcap`` on the command line)."""
    path = Path(path)
    if path.exists():
        if not path.is_dir():
            raise OutputPathError(f"{option}: not a directory: {path}")
        target = path
    else:
        # The nearest existing ancestor must be a directory we can create entries in.
        target = path.absolute().parent
        while not target.exists():
            target = target.parent
        if not target.is_dir():
            raise OutputPathError(f"{option}: cannot create directory {path}: {target} is not a directory")
    if not os.access(target, os.W_OK | os.X_OK):
        raise OutputPathError(f"{option}: directory is not writable: {target}")


def write_pcap_dir(path: Path, files: Iterable[Tuple[str, bytes]], option: str = "pcap") -> List[Path]:
    """Create ``path`` and write each (link name, pcap bytes) as ``path/<link name>.pcap``; the
    paths written, in order."""
    path = Path(path)
    check_pcap_dir(path, option)
    written = []
    try:
        path.mkdir(parents=True, exist_ok=True)
        for name, data in files:
            target = path / f"{name}{PCAP_SUFFIX}"
            atomic_write(target, lambda tmp, data=data: tmp.write_bytes(data))
            written.append(target)
    except OSError as exc:
        raise CaptureWriteError(f"{option}: cannot write capture files in {path}: {exc}") from exc
    return written
