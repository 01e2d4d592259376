"""The store: refused when it is not a tcpenergy store (file left as it was), and the export."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest
from sweep_support import small_grid_store, write_sweep

import tcpenergy
from tcpenergy.experiments import StoreError
from tcpenergy.experiments.store import SCHEMA_VERSION


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("store")
    return small_grid_store(tmp)


def _text_file(tmp_path):
    path = tmp_path / "notes.duckdb"
    path.write_text("these are my notes, not a store\n" * 10)
    return path


def _duckdb_without_meta(tmp_path):
    path = tmp_path / "other.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE things(x INTEGER)")
    con.execute("INSERT INTO things VALUES (1)")
    con.close()
    return path


def _other_schema_version(tmp_path, store_path):
    path = tmp_path / "future.duckdb"
    path.write_bytes(store_path.read_bytes())
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    con.close()
    return path


NOT_STORES = [
    pytest.param(lambda tmp, _: _text_file(tmp), "not a DuckDB database", id="text-file"),
    pytest.param(lambda tmp, _: _duckdb_without_meta(tmp), "not a tcpenergy store",
                 id="duckdb-without-meta"),
    pytest.param(_other_schema_version, "schema version 999", id="other-schema-version"),
]


@pytest.mark.parametrize("make, message", NOT_STORES)
def test_open_store_refuses_a_file_that_is_not_a_store_and_leaves_it_unchanged(
        tmp_path, store_path, make, message):
    path = make(tmp_path, store_path)
    before = path.read_bytes()
    with pytest.raises(StoreError, match=message):
        tcpenergy.open_store(path)
    with pytest.raises(StoreError, match=message):
        tcpenergy.open_store(path, create=True)
    assert path.read_bytes() == before
    assert isinstance(StoreError("x"), tcpenergy.TcpEnergyError)


@pytest.mark.parametrize("make, message", NOT_STORES)
@pytest.mark.parametrize("command", [["sweep", "SWEEP", "--jobs", "1", "--store", "STORE"],
                                     ["summarize", "STORE"], ["export", "STORE", "--format", "csv"]])
def test_commands_exit_2_on_a_file_that_is_not_a_store_and_leave_it_unchanged(
        cli, tmp_path, store_path, make, message, command):
    path = make(tmp_path, store_path)
    sweep_file = write_sweep(tmp_path / "s.toml", {"path.mtu": [512]})
    before = sorted(p.name for p in tmp_path.iterdir())
    content = path.read_bytes()
    args = [str(path) if a == "STORE" else str(sweep_file) if a == "SWEEP" else a for a in command]
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_missing_store_exits_2_for_summarize_and_export(cli, tmp_path):
    for args in (["summarize"], ["export", "--format", "csv"]):
        result = cli(*args[:1], tmp_path / "none.duckdb", *args[1:])
        assert result.exit_code == 2 and "no store at" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_new_store_has_meta_format_and_schema_version(store_path):
    with tcpenergy.open_store(store_path) as store:
        assert store.meta["format"] == "tcpenergy-store"
        assert store.meta["schema_version"] == SCHEMA_VERSION
        assert store.meta["created_by"] == tcpenergy.__version__
        assert store.read_only


def test_export_writes_the_flat_frame_next_to_the_store_by_default(cli, tmp_path, store_path):
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(store_path.read_bytes())
    with tcpenergy.open_store(copy) as store:
        frame = store.runs()
    result = cli("export", copy, "--format", "parquet")
    assert result.exit_code == 0, result.output
    parquet = pd.read_parquet(tmp_path / "copy.parquet")
    assert list(parquet.columns) == list(frame.columns)
    assert parquet["run_key"].tolist() == frame["run_key"].tolist()
    assert parquet["flow.goodput_bps"].tolist() == frame["flow.goodput_bps"].tolist()
    result = cli("export", copy, "--format", "csv", "--out", tmp_path / "runs.csv")
    assert result.exit_code == 0, result.output
    csv = pd.read_csv(tmp_path / "runs.csv")
    assert len(csv) == 12 and "label.path.forward.impairments.0.p" in csv.columns


def test_export_to_a_missing_directory_exits_2_and_writes_nothing(cli, tmp_path, store_path):
    result = cli("export", store_path, "--format", "csv", "--out", tmp_path / "no" / "x.csv")
    assert result.exit_code == 2 and "directory does not exist" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_export_that_fails_midway_leaves_no_partial_file(cli, tmp_path, store_path, monkeypatch):
    def half_then_fail(self, path, *args, **kwargs):
        with open(path, "w") as f:
            f.write("run_key,seed\npartial")
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", half_then_fail)
    target = tmp_path / "runs.csv"
    result = cli("export", store_path, "--format", "csv", "--out", target)
    assert result.exit_code == 1 and "disk full" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_store_open_elsewhere_is_a_store_error_not_a_crash(tmp_path, store_path):
    copy = tmp_path / "busy.duckdb"
    copy.write_bytes(store_path.read_bytes())
    with tcpenergy.open_store(copy):  # read-only, in this process
        with pytest.raises(StoreError, match="busy.duckdb"):
            tcpenergy.open_store(copy, create=True)
