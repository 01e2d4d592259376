"""The sweep file: expansion into runs, rtt, seeds, and one clear error (exit 2) for a bad one."""

from __future__ import annotations

import pytest
from sweep_support import QUICKSTART, sweep_text, write_sweep

import tcpenergy
from tcpenergy.experiments import SweepSpecError
from tcpenergy.experiments.plan import make_plan
from tcpenergy.experiments.spec import expand, one_way


def test_axes_expand_as_cartesian_product_first_axis_slowest_then_seeds(tmp_path):
    spec = tcpenergy.load_sweep(write_sweep(tmp_path / "s.toml", {
        "tcp.variant": ["reno", "sack"], "path.mtu": [512, 1500, 9000]}, repetitions=2))
    runs = expand(spec)
    assert [(r.labels["tcp.variant"], r.labels["path.mtu"], r.seed) for r in runs] == [
        (v, m, s) for v in ("reno", "sack") for m in (512, 1500, 9000) for s in (1, 2)]
    assert [r.cell for r in runs] == [c for c in range(6) for _ in range(2)]
    assert runs[0].overrides == {"traffic.bytes": "100KB", "tcp.variant": "reno", "path.mtu": 512}
    assert list(runs[0].labels) == ["tcp.variant", "path.mtu"]


def test_rtt_axis_sets_both_one_way_delays_to_half_and_keeps_rtt_label(tmp_path):
    spec = tcpenergy.load_sweep(write_sweep(tmp_path / "s.toml", {"rtt": ["15ms", "40ms"]}))
    first, second = expand(spec)
    assert first.labels == {"rtt": "15ms"}
    assert first.overrides["path.forward.delay"] == first.overrides["path.reverse.delay"] == "7500us"
    assert second.overrides["path.forward.delay"] == "20000us"
    assert "rtt" not in first.overrides
    normalized = tcpenergy.validate(QUICKSTART, **first.overrides)
    assert normalized["path"]["forward"]["delay"] == normalized["path"]["reverse"]["delay"]


@pytest.mark.parametrize("rtt, half", [("15ms", "7500us"), ("1s", "500000us"), ("3us", "1500ns"),
                                       ("0.5ms", "250us"), ("1min", "30000000us"), ("2ns", "1ns")])
def test_rtt_halves_exactly_into_us_or_ns(rtt, half):
    assert one_way(rtt) == half


@pytest.mark.parametrize("rtt", ["3ns", "15", "fast", 40, "-2ms"])
def test_rtt_that_cannot_be_halved_exactly_is_refused(rtt):
    with pytest.raises(ValueError):
        one_way(rtt)


def test_repetitions_give_seeds_one_to_n(tmp_path):
    spec = tcpenergy.load_sweep(write_sweep(tmp_path / "s.toml", {"path.mtu": [512]}, repetitions=4))
    assert [r.seed for r in expand(spec)] == [1, 2, 3, 4]


def test_explicit_seeds_replace_repetitions(tmp_path):
    spec = tcpenergy.load_sweep(write_sweep(tmp_path / "s.toml", {"path.mtu": [512]},
                                            repetitions=10, seeds=[7, 3, 11]))
    assert [r.seed for r in expand(spec)] == [7, 3, 11]


def test_no_axes_is_one_cell_and_default_is_one_repetition(tmp_path):
    spec = tcpenergy.load_sweep(write_sweep(tmp_path / "s.toml", {}))
    assert [(r.cell, r.seed, r.labels) for r in expand(spec)] == [(0, 1, {})]


def test_base_is_relative_to_the_sweep_file_and_name_defaults_to_its_stem(tmp_path):
    (tmp_path / "scen").mkdir()
    (tmp_path / "scen" / "b.toml").write_text(QUICKSTART.read_text())
    (tmp_path / "sweeps").mkdir()
    path = write_sweep(tmp_path / "sweeps" / "loss.toml", {"path.mtu": [512]}, base="../scen/b.toml")
    spec = tcpenergy.load_sweep(path)
    assert spec.sweep_name == "loss"
    assert spec.default_store() == tmp_path / "sweeps" / "loss.duckdb"
    assert spec.base_scenario.source == tmp_path / "sweeps" / ".." / "scen" / "b.toml"


def test_sweep_from_a_dict_with_an_inline_base_table():
    spec = tcpenergy.load_sweep({"base": {"traffic": {"kind": "bulk", "bytes": "10KB"}},
                                 "axes": {"tcp.variant": ["reno"]}, "name": "inline"})
    assert spec.sweep_name == "inline"
    assert len(expand(spec)) == 1


def test_run_key_is_scenario_hash_seed_and_engine_version(tmp_path):
    spec = tcpenergy.load_sweep(write_sweep(tmp_path / "s.toml", {"rtt": ["40ms"]}, seeds=[5]))
    (run,) = make_plan(spec).runs
    assert run.run_key == f"{run.cell.scenario_hash}-5-{tcpenergy.engine_version()}"
    assert len(run.cell.scenario_hash) == 16
    # "40ms" and the base's own "20ms" delays are the same scenario, whatever the name says.
    renamed = tcpenergy.load_sweep(write_sweep(tmp_path / "t.toml", {"path.mtu": [1500]}, seeds=[5],
                                               name="other"))
    assert make_plan(renamed).runs[0].cell.scenario_hash == run.cell.scenario_hash


def test_cells_that_are_the_same_scenario_run_once(tmp_path):
    spec = tcpenergy.load_sweep(write_sweep(tmp_path / "s.toml",
                                            {"path.forward.delay": ["20ms", "20000us"]}))
    plan = make_plan(spec)
    assert len(plan.runs) == 1 and plan.duplicates == 1


BASE = f"base = {str(QUICKSTART)!r}\n".replace("'", '"')

# (sweep file text, text the one-line message must contain)
BAD_SPECS = [
    pytest.param(sweep_text({"path.forward.colour": [1]}),
                 ['axes."path.forward.colour"', "path.forward.colour", "expected one of `rate`"],
                 id="unknown-axis-key"),
    pytest.param(sweep_text({"tcp.variant": []}), ['axes."tcp.variant"', "at least one value"],
                 id="empty-axis"),
    pytest.param(sweep_text({"path.mtu": [512]}, repetitions=0), ["repetitions", ">= 1", "got 0"],
                 id="zero-repetitions"),
    pytest.param(sweep_text({"path.mtu": [512]}, repetitions=-3), ["repetitions", ">= 1"],
                 id="negative-repetitions"),
    pytest.param("repetitions = 2\n", ["base", "required"], id="missing-base"),
    pytest.param(sweep_text({}, base="no/such/base.toml"), ["base", "not found", "base.toml"],
                 id="missing-base-file"),
    pytest.param(BASE + "[axes\n", ["invalid TOML", "line 2"], id="bad-toml"),
    pytest.param(BASE + "colour = 1\n", ["colour", "unknown sweep key", "base, name, repetitions"],
                 id="unknown-sweep-key"),
    pytest.param(sweep_text({"rtt": ["15ms", 40]}), ["axes.rtt", "duration", "got 40"],
                 id="rtt-not-a-duration"),
    pytest.param(sweep_text({"tcp.variant": ["reno", "vegas"]}),
                 ["tcp.variant", "vegas", "expected one of `tahoe`"], id="bad-later-axis-value"),
    pytest.param(sweep_text({"path.mtu": [512]}, seeds=[1, 1]), ["seeds", "more than once"],
                 id="repeated-seed"),
    pytest.param(sweep_text({"tcp.variant": ["reno"]}, fixed={"tcp.flavour": 1}),
                 ["set", "tcp.flavour"], id="unknown-set-key"),
    pytest.param(sweep_text({"rtt": ["15ms"], "path.forward.delay": ["1ms"]}),
                 ["path.forward.delay", "conflicts with rtt"], id="rtt-and-delay-axes"),
]


@pytest.mark.parametrize("text, expected", BAD_SPECS)
def test_bad_sweep_exits_2_naming_the_field_and_creates_no_store(cli, tmp_path, text, expected):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    result = cli("sweep", path)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    for text in expected:
        assert text in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]


def test_bad_sweep_from_the_api_raises_sweep_spec_error_with_field():
    with pytest.raises(SweepSpecError) as info:
        tcpenergy.load_sweep({"base": str(QUICKSTART), "axes": {"path.colour": [1]}})
    assert info.value.path == 'axes."path.colour"'
    assert "path.colour" in info.value.message
    assert isinstance(info.value, tcpenergy.TcpEnergyError)


def test_missing_sweep_file_exits_2(cli, tmp_path):
    result = cli("sweep", tmp_path / "nowhere.toml")
    assert result.exit_code == 2
    assert "sweep file not found" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_shipped_example_sweep_is_the_900_run_grid_docs_experiments_describes():
    from pathlib import Path

    path = Path(__file__).parent.parent / "sweeps" / "random-loss.toml"
    spec = tcpenergy.load_sweep(path)
    runs = expand(spec)
    assert spec.name == "random-loss" and len(runs) == 900
    # Every cell is a valid scenario (checked without running it).
    for run in runs[::10]:
        tcpenergy.validate(spec.base_scenario, **run.overrides)
