"""The Dask executor stores the same runs and results as the local one."""

from __future__ import annotations

import logging

import pytest
from sweep_support import results, stored, write_sweep

import tcpenergy

distributed = pytest.importorskip("distributed")

AXES = {"tcp.variant": ["reno", "sack"], "path.forward.impairments.0.p": [0.0, 0.05]}


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=logging.ERROR) as cluster:
        yield cluster


def test_dask_sweep_on_a_scheduler_address_equals_the_local_sweep(tmp_path, cluster):
    path = write_sweep(tmp_path / "grid.toml", AXES, repetitions=5)
    local = tcpenergy.sweep(path, jobs=1, progress=False)
    on_dask = tcpenergy.sweep(path, store=tmp_path / "dask.duckdb", executor="dask",
                              scheduler=cluster.scheduler_address, progress=False)
    assert (on_dask.ran, on_dask.failed) == (20, 0)
    assert results(tmp_path / "dask.duckdb") == results(local.store)
    # Everything but timing is the same, labels and normalized scenarios included.
    assert stored(tmp_path / "dask.duckdb") == stored(local.store)


def test_dask_sweep_with_a_client_resumes_like_the_local_one(tmp_path, cluster):
    path = write_sweep(tmp_path / "grid.toml", AXES, repetitions=3)
    part = write_sweep(tmp_path / "part.toml", AXES, seeds=[2], name="grid")
    with distributed.Client(cluster) as client:
        first = tcpenergy.sweep(part, store=tmp_path / "grid.duckdb", executor="dask",
                                scheduler=client, progress=False)
        rest = tcpenergy.sweep(path, executor="dask", scheduler=client, progress=False)
        assert client.status == "running"  # a client passed in stays open
    assert (first.ran, rest.ran, rest.skipped) == (4, 8, 4)
    tcpenergy.sweep(path, store=tmp_path / "local.duckdb", jobs=1, progress=False)
    assert results(tmp_path / "grid.duckdb") == results(tmp_path / "local.duckdb")


def test_sweep_command_with_the_dask_executor_and_a_scheduler(cli, tmp_path, cluster):
    path = write_sweep(tmp_path / "grid.toml", AXES)
    result = cli("sweep", path, "--executor", "dask", "--scheduler", cluster.scheduler_address)
    assert result.exit_code == 0, result.output
    assert "4 runs: 4 ran (0 failed)" in result.stdout


def test_scheduler_without_the_dask_executor_exits_2_and_creates_no_store(cli, tmp_path):
    path = write_sweep(tmp_path / "grid.toml", AXES)
    result = cli("sweep", path, "--scheduler", "tcp://127.0.0.1:1")
    assert result.exit_code == 2 and "--executor dask" in result.stderr
    assert not path.with_suffix(".duckdb").exists()


def test_dask_executor_without_an_address_runs_on_its_own_local_cluster(tmp_path):
    path = write_sweep(tmp_path / "grid.toml", AXES, repetitions=2)
    own = tcpenergy.sweep(path, store=tmp_path / "own.duckdb", executor="dask", jobs=2,
                          progress=False)
    assert (own.ran, own.failed) == (8, 0)
    local = tcpenergy.sweep(path, jobs=1, progress=False)
    assert results(own.store) == results(local.store)
