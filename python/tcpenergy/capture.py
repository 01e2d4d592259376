"""Packet capture files: one pcap file per sending interface, written into a directory (docs/capture.md).

The directory is checked before the run, so an unusable one costs no simulation, and created
and filled only after the run succeeded, each file atomically, so a failure leaves nothing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, List, Tuple

from tcpenergy.exceptions import TcpEnergyError
from tcpenergy.outputs import OutputPathError, atomic_write

PCAP_SUFFIX = ".pcap"


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
    """Create ``path`` and write each (link name, pcap bytes) as ``path/<link name>.pcap``."""
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
