"""A damaged store (cut short, or bytes overwritten) is refused by every command that opens it,
in one line that says what is wrong and what can be done, with exit status 2, no traceback, no
output and the file left as it was."""

from __future__ import annotations

import os
import random

import duckdb
import pytest
from sweep_support import small_grid_store, write_sweep

import tcpenergy
from tcpenergy.experiments import StoreError

HEADERS = 3 * 4096  # DuckDB's file header and its two database headers come before the blocks


@pytest.fixture(scope="module")
def intact(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("intact")
    return small_grid_store(tmp)


def _cut_to_half(path):
    os.truncate(path, path.stat().st_size // 2)


def _cut_4kb_from_the_end(path):
    os.truncate(path, path.stat().st_size - 4096)


def _overwrite(path, start, length):
    data = random.Random(7).randbytes(length)
    with open(path, "r+b") as f:
        f.seek(start)
        f.write(data)


def _random_bytes_in_the_runs_data(path):
    """Random bytes over the block that holds the runs table's data (not its checksum)."""
    con = duckdb.connect(str(path), read_only=True)
    block_size = con.execute("PRAGMA database_size").fetchone()[2]
    block = con.execute("SELECT max(block_id) FROM pragma_storage_info('runs') "
                        "WHERE persistent AND column_name = 'result'").fetchone()[0]
    con.close()
    _overwrite(path, HEADERS + block * block_size + 8, 4096)


def _random_bytes_after_the_headers(path):
    _overwrite(path, HEADERS, path.stat().st_size - HEADERS)


DAMAGE = [
    pytest.param(_cut_to_half, "cut short", id="cut-to-half"),
    pytest.param(_cut_4kb_from_the_end, "cut short", id="cut-4KB-from-the-end"),
    pytest.param(_random_bytes_in_the_runs_data, "DuckDB cannot read it", id="random-bytes-in-runs"),
    pytest.param(_random_bytes_after_the_headers, "DuckDB cannot read it", id="random-bytes-after-headers"),
]
COMMANDS = [
    pytest.param(["sweep", "SWEEP", "--jobs", "1", "--store", "STORE"], id="sweep"),
    pytest.param(["summarize", "STORE"], id="summarize"),
    pytest.param(["export", "STORE", "--format", "csv"], id="export"),
    pytest.param(["report", "STORE", "--out", "REPORT"], id="report"),
]


def _damaged(tmp_path, intact, damage):
    path = tmp_path / "damaged.duckdb"
    path.write_bytes(intact.read_bytes())
    damage(path)
    return path


@pytest.mark.parametrize("damage, what", DAMAGE)
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_refuses_a_damaged_store_in_one_line_and_leaves_it_unchanged(
        cli, tmp_path, intact, damage, what, command):
    path = _damaged(tmp_path, intact, damage)
    sweep_file = write_sweep(tmp_path / "s.toml", {"path.mtu": [512]})
    before = sorted(p.name for p in tmp_path.iterdir())
    content = path.read_bytes()
    names = {"STORE": path, "SWEEP": sweep_file, "REPORT": tmp_path / "report"}
    result = cli(*[names.get(a, a) for a in command])
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"error: store {path} is damaged"), result.stderr
    assert what in result.stderr
    assert "restore it from a copy" in result.stderr and "new store" in result.stderr
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_store_cut_short_says_how_many_bytes_its_blocks_need(tmp_path, intact):
    path = _damaged(tmp_path, intact, _cut_4kb_from_the_end)
    size = path.stat().st_size
    with pytest.raises(StoreError, match=f"cut short: the file has {size:,} bytes, its blocks in use need "
                                         f"at least {size + 4096:,}"):
        tcpenergy.open_store(path)


def test_an_intact_store_whose_trailing_free_blocks_were_cut_off_by_duckdb_opens(tmp_path):
    # After a checkpoint frees the last blocks, DuckDB shortens the file but its header still
    # counts them: the file is shorter than header x block size, and yet intact.
    path = tmp_path / "grid.toml"
    write_sweep(path, {"tcp.variant": ["reno", "sack"]}, repetitions=2)
    store = tcpenergy.sweep(path, jobs=1, progress=False).store
    con = duckdb.connect(str(store))
    con.execute("CREATE TABLE filler AS SELECT repeat('x', 1000) || i AS x FROM range(20000) r(i)")
    con.execute("CHECKPOINT")
    con.execute("DROP TABLE filler")
    con.execute("CHECKPOINT")
    con.close()
    con = duckdb.connect(str(store), read_only=True)
    block, total, used = con.execute("PRAGMA database_size").fetchone()[2:5]
    con.close()
    assert store.stat().st_size < HEADERS + total * block and used < total
    with tcpenergy.open_store(store) as opened:
        assert opened.count() == 4


def test_a_store_whose_write_ahead_log_belongs_to_another_file_says_to_move_it_aside(tmp_path,
                                                                                  intact):
    path = tmp_path / "store.duckdb"
    path.write_bytes(intact.read_bytes())
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("PRAGMA disable_checkpoint_on_shutdown")
    con.execute("CREATE TABLE t(x INTEGER)")
    con.execute("INSERT INTO t VALUES (1)")
    con.close()
    os.replace(tmp_path / "other.duckdb.wal", tmp_path / "store.duckdb.wal")
    with pytest.raises(StoreError) as caught:
        tcpenergy.open_store(path)
    message = str(caught.value)
    assert "\n" not in message
    assert f"store {path} is damaged" in message and f"move {path}.wal aside" in message


@pytest.mark.parametrize("damage, what", DAMAGE)
def test_reproduce_refuses_a_damaged_store_in_its_output_directory_before_writing(
        cli, tmp_path, intact, damage, what):
    out = tmp_path / "out"
    out.mkdir()
    path = out / "runs.duckdb"
    path.write_bytes(intact.read_bytes())
    damage(path)
    content = path.read_bytes()
    result = cli("reproduce", "seed-001", "--out", out, "--quick", "--jobs", "1")
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"error: store {path} is damaged") and what in result.stderr
    assert path.read_bytes() == content
    assert sorted(p.name for p in out.iterdir()) == ["runs.duckdb"]
