"""The results store: one DuckDB file, one row per run, keyed by run_key.

Every batch of runs is written in one transaction, so a process killed at any moment leaves a
file that opens and holds every committed batch (DuckDB replays its write-ahead log on open).
A file that is not a tcpenergy store of this schema version is refused, and left as it was.

A new store is built under a temporary name and published with a hard link, which fails when the
name exists: of several processes creating the same store at once, exactly one creates it, and
the others open the store it created (one writer at a time: DuckDB's file lock).

A damaged store (cut short, or overwritten) is refused with a StoreError that says so: on open,
a file shorter than the blocks it uses; when opened for writing, also any block whose checksum
DuckDB finds wrong when every row is read back; at any time, any read or write DuckDB cannot do
because of damage.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import time
from pathlib import Path
from typing import (TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set,
                    Tuple, Union)

from tcpenergy._version import __version__
from tcpenergy.experiments.errors import StoreError

if TYPE_CHECKING:
    import pandas as pd

FORMAT = "tcpenergy-store"
SCHEMA_VERSION = "1"

# Two extensions of the contract's tables: `cell` (the index of the run's cell in its sweep), so a
# store lists runs in the order the sweep file describes them; and `sweep_runs`, which runs each
# sweep comprises, with that sweep's cell and labels. A run is stored once (by run_key) but may
# belong to several sweeps of one store: a sweep that finds its run already stored by another
# sweep skips it and still counts it as its own.
_SWEEP_RUNS = """CREATE TABLE IF NOT EXISTS sweep_runs(
    sweep VARCHAR, run_key VARCHAR, cell INTEGER, labels JSON, PRIMARY KEY (sweep, run_key))"""
_SCHEMA = (
    "CREATE TABLE meta(key VARCHAR PRIMARY KEY, value VARCHAR)",
    """CREATE TABLE runs(
        run_key VARCHAR PRIMARY KEY, scenario_hash VARCHAR, seed BIGINT, engine_version VARCHAR,
        status VARCHAR, error VARCHAR, sweep VARCHAR, cell INTEGER, labels JSON, scenario JSON,
        result JSON, wall_s DOUBLE, created_at TIMESTAMP)""",
    _SWEEP_RUNS,
)
COLUMNS = ("run_key", "scenario_hash", "seed", "engine_version", "status", "error", "sweep", "cell",
           "labels", "scenario", "result", "wall_s")
_TYPES = {"seed": "BIGINT", "cell": "INTEGER", "wall_s": "DOUBLE"}
_SELECT = (
    f"runs ({', '.join(COLUMNS)}, created_at) SELECT *, current_localtimestamp() FROM (SELECT "
    + ", ".join(f"unnest(${i + 1}::{_TYPES.get(c, 'VARCHAR')}[])" for i, c in enumerate(COLUMNS))
    + ")"
)
_INSERT = "INSERT OR REPLACE INTO " + _SELECT
_INSERT_NEW = "INSERT INTO " + _SELECT
_INSERT_MEMBERS = ("INSERT OR REPLACE INTO sweep_runs SELECT $1, unnest($2::VARCHAR[]), "
                   "unnest($3::INTEGER[]), unnest($4::VARCHAR[])")
# One row per run and sweep it belongs to; a run no sweep_runs row names (a store written
# without them) keeps the sweep, cell and labels stored with it.
_RECORDS = f"""
    SELECT {', '.join('r.' + c for c in COLUMNS if c not in ('sweep', 'cell', 'labels'))},
           coalesce(m.sweep, r.sweep) AS sweep, coalesce(m.cell, r.cell) AS cell,
           coalesce(m.labels, r.labels) AS labels, r.created_at
    FROM runs r LEFT JOIN sweep_runs m USING (run_key) {{where}}
    ORDER BY sweep, cell, seed, run_key"""
_MAGIC = b"DUCK"  # bytes 8..12 of every DuckDB database file
# How long opening a store waits for another process to release it: long enough to ride out a
# short hold (another process checking the store, or a sweep taking over the store it just
# created), short enough that a command meeting a running sweep fails fast.
LOCK_WAIT_SECONDS = 2.0
_LOCK_POLL_SECONDS = 0.05
# A DuckDB file is a 4 KiB file header, two 4 KiB database headers, then whole blocks.
_HEADER_BYTES = 3 * 4096
# How DuckDB's errors name a damaged file (a failed checksum, a block past the end of the file,
# a header that is not one).
_DAMAGE = ("Corrupt database file", "Could not read enough bytes", "not a valid DuckDB database",
           "Corrupt WAL file")
_RECOVERY = ("it cannot be repaired: restore it from a copy if there is one, or run its sweeps "
             "again into a new store")


class Store:
    """An open store. Use :func:`open_store`; close it (or use ``with``) to release the file."""

    def __init__(self, path: Path, connection: Any, read_only: bool) -> None:
        self.path = path
        self.read_only = read_only
        self._con = connection
        self._file = _identity(path)  # the file this connection writes, while ``path`` names it

    # -- life cycle
    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    @property
    def con(self) -> Any:
        if self._con is None:
            raise StoreError(f"store {self.path} is closed")
        return self._con

    # -- reading
    def _read(self, sql: str, args: Sequence[Any] = ()) -> Tuple[List[str], List[tuple]]:
        """Column names and rows of a query; a damaged file is a StoreError that says so."""
        import duckdb

        con = self.con
        try:
            cursor = con.execute(sql, list(args))
            return [d[0] for d in cursor.description], cursor.fetchall()
        except duckdb.Error as exc:
            _reraise_interrupt(exc)
            raise _error(self.path, exc, "read") from None

    @property
    def meta(self) -> Dict[str, str]:
        return dict(self._read("SELECT key, value FROM meta")[1])

    def count(self, status: Optional[str] = None) -> int:
        if status is None:
            return self._read("SELECT count(*) FROM runs")[1][0][0]
        return self._read("SELECT count(*) FROM runs WHERE status = ?", [status])[1][0][0]

    def ok_keys(self) -> Set[str]:
        """Run keys stored with status ok: the runs a sweep does not need to run again."""
        rows = self._read("SELECT run_key FROM runs WHERE status = 'ok'")[1]
        return {row[0] for row in rows}

    def records(self, status: Optional[str] = None) -> List[Dict[str, Any]]:
        """The stored runs as dicts (JSON columns as text), one per run and sweep it belongs to,
        in sweep, cell and seed order."""
        where, args = ("WHERE r.status = ?", [status]) if status is not None else ("", [])
        if self._has_sweep_runs():
            query = _RECORDS.format(where=where)
        else:  # a read-only store written before sweep_runs existed
            query = (f"SELECT {', '.join(COLUMNS)}, created_at FROM runs r {where} "
                     "ORDER BY sweep, cell, seed, run_key")
        names, rows = self._read(query, args)
        return [dict(zip(names, row)) for row in rows]

    def runs(self, status: Optional[str] = None) -> "pd.DataFrame":
        """One flat row per run (per run and sweep, when sweeps share runs): run columns,
        ``label.<axis>``, scenario keys, result fields. See :mod:`tcpenergy.experiments.frame`."""
        from tcpenergy.experiments.frame import runs_frame

        return runs_frame(self.records(status))

    def summarize(self, by: Optional[Sequence[str]] = None,
                  metrics: Optional[Sequence[str]] = None,
                  levels: Sequence[float] = (0.90, 0.95),
                  include_incomplete: bool = False) -> "pd.DataFrame":
        """Means and confidence intervals per group over complete runs; see
        :func:`stats.summarize`."""
        from tcpenergy.experiments.stats import summarize

        return summarize(self.runs(), by=by, metrics=metrics, levels=levels,
                         include_incomplete=include_incomplete)

    def _has_sweep_runs(self) -> bool:
        return _has_sweep_runs(self.con)

    def keys(self) -> Set[str]:
        """Every stored run key, whatever its status."""
        return {row[0] for row in self._read("SELECT run_key FROM runs")[1]}

    def held(self, run_keys: Sequence[str]) -> int:
        """How many of ``run_keys`` this store holds."""
        query = "SELECT count(*) FROM runs WHERE run_key IN (SELECT unnest($1::VARCHAR[]))"
        return self._read(query, [list(run_keys)])[1][0][0]

    def gone(self) -> Optional[str]:
        """None while ``path`` names the file this store was opened on; else what became of it
        ("removed", "replaced by another file"): what was written through this store is then
        not in the file at ``path``."""
        now = _identity(self.path)
        if now == self._file:
            return None
        return "removed" if now is None else "replaced by another file"

    # -- writing
    def add_to_sweep(self, sweep: str, members: Sequence[Tuple[str, int, str]]) -> None:
        """Record that runs (run_key, cell, labels JSON) belong to ``sweep``, in one transaction."""
        columns = [list(c) for c in zip(*members)] if members else [[], [], []]
        # CREATE ... IF NOT EXISTS: a store from before the table existed gains it here.
        self._transaction((_SWEEP_RUNS, []), (_INSERT_MEMBERS, [sweep, *columns]))

    def write(self, rows: Iterable[Mapping[str, Any]], new: bool = False) -> int:
        """Insert (or replace, by run_key) a batch of runs in one transaction.

        ``new=True`` promises that no run_key of the batch is stored yet: a plain INSERT, about a
        third cheaper than INSERT OR REPLACE (and an error if the promise is broken).
        """
        rows = list(rows)
        if rows:
            # One statement per batch, each column passed as one list and unnested: no per-row
            # round trip, and no pyarrow (whose import pulls in pandas).
            columns = [[r.get(c) for r in rows] for c in COLUMNS]
            self._transaction((_INSERT_NEW if new else _INSERT, columns))
        return len(rows)

    def _transaction(self, *statements: Tuple[str, list]) -> None:
        if self.read_only:
            raise StoreError(f"store {self.path} is open read-only")
        con = self.con
        try:
            con.execute("BEGIN TRANSACTION")
            for sql, args in statements:
                con.execute(sql, args)
            con.execute("COMMIT")
        except BaseException as exc:
            # Ctrl-C may land between two statements too: never leave the transaction open.
            _rollback(con)
            if not isinstance(exc, Exception):
                raise
            _reraise_interrupt(exc)  # rolled back: the rows are still the caller's to write
            raise _error(self.path, exc, "write to") from exc


def _has_sweep_runs(con: Any) -> bool:
    return bool(con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'sweep_runs'").fetchone()[0])


def _error(path: Path, exc: BaseException, doing: str) -> StoreError:
    """A DuckDB error met while ``doing`` ("open", "read", "write to") the store, as one line:
    for damage, what is wrong and what can be done."""
    text = " ".join(str(exc).split())  # DuckDB's messages may run over several lines
    if "replaying WAL" in text:
        return StoreError(
            f"store {path} is damaged: its write-ahead log {path}.wal cannot be replayed "
            f"({text}); move {path}.wal aside to open the store as of its last checkpoint (the "
            "runs committed after it are lost), or restore the store from a copy if there is one")
    if any(marker in text for marker in _DAMAGE):
        return _damaged(path, f"DuckDB cannot read it ({text})")
    return StoreError(f"cannot {doing} store {path}: {text}")


def _damaged(path: Path, what: str) -> StoreError:
    return StoreError(f"store {path} is damaged: {what}; {_RECOVERY}")


def _identity(path: Path) -> Optional[Tuple[int, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _reraise_interrupt(exc: BaseException) -> None:
    """DuckDB turns Ctrl-C during a query into its own error; make it Ctrl-C again."""
    if type(exc).__name__ == "InterruptException" or str(exc) == "Query interrupted":
        raise KeyboardInterrupt from None


def _rollback(con: Any) -> None:
    try:
        con.execute("ROLLBACK")
    except Exception:  # no transaction open: nothing to undo
        pass


# ---------------------------------------------------------------------------------------------
# opening


def open_store(path: Union[str, "os.PathLike[str]"], create: bool = False,
               read_only: Optional[bool] = None) -> Store:
    """Open a results store; with ``create``, make a new one if the file does not exist.

    By default a store opened without ``create`` is read-only. Raises StoreError for a file that
    is not a tcpenergy store, has another schema version or is damaged (cut short; opened for
    writing, also a block DuckDB cannot read back); such a file is not modified.
    """
    path = Path(path)
    read_only = (not create) if read_only is None else read_only
    if not path.exists():
        if not create:
            raise StoreError(f"no store at {path}")
        created = _create(path)
        if created is not None:
            return created
        # Another process created it meanwhile: open its store, as if it had been there before.
    con = _checked(path, every_block=not read_only)
    if read_only:
        return Store(path, con, read_only=True)
    con.close()
    return Store(path, _connect(path, read_only=False), read_only=False)


def check_store(path: Union[str, "os.PathLike[str]"]) -> None:
    """Raise StoreError unless ``path`` is an intact store of this schema version, with every
    block of its tables read back; the file is opened read-only."""
    _checked(Path(path), every_block=True).close()


def _checked(path: Path, every_block: bool) -> Any:
    """A read-only connection to the store at ``path``, once it is found to be a store of this
    schema version, not cut short, and (``every_block``) with every row of it readable.
    Checked read-only: a file that turns out not to be a store, or damaged, is never opened for
    writing."""
    if not path.exists():
        raise StoreError(f"no store at {path}")
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a store")
    _check_magic(path)
    con = _connect(path, read_only=True)
    try:
        _check_size(con, path)
        _check_meta(con, path)
        if every_block:
            _check_blocks(con, path)
    except BaseException:
        con.close()
        raise
    return con


def _check_magic(path: Path) -> None:
    try:
        with open(path, "rb") as f:
            head = f.read(12)
    except OSError as exc:
        raise StoreError(f"cannot read store {path}: {exc}") from None
    if head[8:12] != _MAGIC:
        raise StoreError(f"{path} is not a tcpenergy store (not a DuckDB database file)")


def _connect(path: Path, read_only: bool) -> Any:
    """A DuckDB connection; while another process holds the file, retried for up to
    LOCK_WAIT_SECONDS."""
    import duckdb

    # A writer gets one thread: its batches are small, and the cores belong to the runs.
    config = {} if read_only else {"threads": 1}
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only, config=config)
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower():
                raise _error(path, exc, "open") from None
            if time.monotonic() >= deadline:
                raise StoreError(f"store {path} is in use by another process (a sweep still "
                                 "running?); run the command again when it has finished"
                                 ) from None
            time.sleep(_LOCK_POLL_SECONDS)
        except duckdb.Error as exc:
            raise _error(path, exc, "open") from None


def _check_size(con: Any, path: Path) -> None:
    """A file shorter than the blocks it uses has lost its end. (DuckDB's header may count more
    blocks than the file holds: free blocks at the end are cut off after the header is written;
    so the blocks in use are the measure. A cut that only loses free blocks loses no data.)"""
    import duckdb

    try:
        block_size, _, used = con.execute("PRAGMA database_size").fetchone()[2:5]
        size = os.path.getsize(path)
    except duckdb.Error as exc:
        raise _error(path, exc, "read") from None
    except OSError as exc:
        raise StoreError(f"cannot read store {path}: {exc}") from None
    need = _HEADER_BYTES + int(used) * int(block_size)
    if size < need:
        raise _damaged(path, f"cut short: the file has {size:,} bytes, its blocks in use need at "
                             f"least {need:,}")


def _check_blocks(con: Any, path: Path) -> None:
    """Read every row of every table back, so that DuckDB checks the checksum of every block
    that holds them: a store is written only when all of it is intact. (About 0.3 s per 100,000
    runs.)"""
    import duckdb

    tables = ["meta", "runs"] + (["sweep_runs"] if _has_sweep_runs(con) else [])
    try:
        for table in tables:
            con.execute(f"SELECT bit_xor(hash(t)) FROM {table} t").fetchall()
    except duckdb.Error as exc:
        _reraise_interrupt(exc)
        raise _error(path, exc, "read") from None


def _check_meta(con: Any, path: Path) -> None:
    import duckdb

    try:
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    except duckdb.CatalogException:  # no meta table
        meta = {}
    except duckdb.Error as exc:
        raise _error(path, exc, "read") from None
    if meta.get("format") != FORMAT:
        raise StoreError(f"{path} is not a tcpenergy store (a DuckDB database without its "
                         f"meta table entry format = {FORMAT!r})")
    version = meta.get("schema_version")
    if version != SCHEMA_VERSION:
        raise StoreError(f"store {path} has schema version {version}; this tcpenergy "
                         f"({__version__}) reads schema version {SCHEMA_VERSION}")


def _create(path: Path) -> Optional[Store]:
    """A new, empty store; None if another process created ``path`` first.

    Built under a temporary name and published under ``path`` only when complete, so a process
    killed while creating it never leaves a half-made store (which a re-run would refuse); and
    published by an exclusive operation, so of several processes creating the same store at once
    exactly one does (a rename would let each replace the store of the one before, which may
    already hold its runs)."""
    if not path.parent.is_dir():
        raise StoreError(f"cannot create store {path}: directory does not exist: {path.parent}")
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.creating")
    try:
        con = _connect(tmp, read_only=False)
        try:
            for statement in _SCHEMA:
                con.execute(statement)
            con.executemany("INSERT INTO meta VALUES (?, ?)", [
                ["format", FORMAT], ["schema_version", SCHEMA_VERSION],
                ["created_by", __version__]])
        finally:
            con.close()
        created = _publish(tmp, path)
    except BaseException as exc:
        if isinstance(exc, Exception) and not isinstance(exc, StoreError):
            _reraise_interrupt(exc)
            raise StoreError(f"cannot create store {path}: {exc}") from exc
        raise
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)
    if not created:
        return None
    return Store(path, _connect(path, read_only=False), read_only=False)


# Errors of os.link on a file system without hard links (FAT, some network file systems).
_NO_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS, errno.EMLINK}


def _publish(tmp: Path, path: Path) -> bool:
    """Give the finished store ``tmp`` the name ``path`` unless that name exists; whether it did.
    Where hard links are not supported, the store is copied into a file created exclusively
    (another process opening it during the copy sees a file that is not yet a store)."""
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        return False
    try:
        with os.fdopen(fd, "wb") as out, open(tmp, "rb") as source:
            shutil.copyfileobj(source, out)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return True
