"""Many profiles, one simulation (``run(..., profiles=[...])``), and profiles named by file
(tcpenergy/api.py, tcpenergy/profile_files.py; docs/units-and-scenarios.md "Several profiles in
one run" and "Device profiles")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tcpenergy
from tcpenergy import _engine, devices
from tcpenergy.calibration.profile_out import to_toml
from tcpenergy.exceptions import ScenarioError

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = REPO / "scenarios"
TOSHIBA = "singh2002-toshiba-wavelan"


def _without_parameters(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "parameters"}


def _costlier(name: str = TOSHIBA) -> dict:
    """A built-in profile with other meter figures (same radio PHY), as a calibration writes one."""
    p = json.loads(json.dumps(devices.get(name)))
    p["name"] = f"{name}-costlier"
    p["platform"]["base_power_w"] *= 1.5
    p["radio"]["idle_power_w"] *= 0.8
    p["cpu"]["cycles"]["per_byte"] *= 10
    p["cpu"]["active_power_w"] *= 2
    return p


# A single path, a wired network, an 802.11 network, and 802.11 power save.
@pytest.mark.parametrize("scenario", ["quickstart.toml", "chain-3hop.toml", "agrawal-single-hop.toml", "wifi-psm.toml"])
def test_pricing_under_two_profiles_gives_each_the_record_of_a_separate_run(scenario):
    loaded = tcpenergy.load_scenario(SCENARIOS / scenario)
    normalized = tcpenergy.validate(loaded)
    slots = ([f"nodes.{n}.profile" for n in normalized["nodes"]] if "nodes" in normalized
             else ["energy.sender", "energy.receiver"])
    costlier = {slot: _costlier() for slot in slots}
    policy = {} if normalized["energy"]["radio_policy"] == "psm" else {"energy.radio_policy": "ideal"}
    profiles = [costlier, {**{slot: "agrawal2003-samsung-wavelan-turbo" for slot in slots}, **policy}]

    record = tcpenergy.run(loaded, profiles=profiles)
    priced = tcpenergy.profile_records(record)
    assert len(priced) == 2
    own = tcpenergy.run(loaded)
    assert _without_parameters({k: v for k, v in record.items() if k != "profiles"}) == _without_parameters(own)
    for profile, got in zip(profiles, priced):
        alone = tcpenergy.run(loaded, **profile)
        assert _without_parameters(got) == _without_parameters(alone)
        assert _without_parameters(got) != _without_parameters(own)

    # The engine's whole records are the separate runs' byte for byte.
    encoded = tcpenergy.api.encode_profiles(loaded, [], profiles)
    texts = _engine.run_each_profile(loaded.to_json(), None, [], encoded)
    assert texts[0] == _engine.run(loaded.to_json(), None, [])
    for overrides, text in zip(encoded, texts[1:]):
        assert text == _engine.run(loaded.to_json(), None, overrides)


def test_a_profile_name_alone_prices_every_node_under_it(quickstart):
    record = tcpenergy.run(quickstart, profiles=["agrawal2003-samsung-wavelan-turbo"])
    alone = tcpenergy.run(quickstart, **{"energy.sender": "agrawal2003-samsung-wavelan-turbo",
                                         "energy.receiver": "agrawal2003-samsung-wavelan-turbo"})
    assert _without_parameters(tcpenergy.profile_records(record)[0]) == _without_parameters(alone)


def test_without_further_profiles_the_record_has_no_profiles_key(quickstart):
    assert "profiles" not in tcpenergy.run(quickstart)


@pytest.mark.parametrize("scenario, profile, path", [
    ("wifi-psm.toml", {"energy.radio_policy": "always_on"}, "profiles.0.energy.radio_policy"),
    ("quickstart.toml", {"energy.sender": "ideal-nic-0.3"}, "profiles.0.energy.sender.radio.phy"),
    ("quickstart.toml", {"tcp.variant": "reno"}, "profiles.0.tcp.variant"),
    ("agrawal2003-battery.toml", {"nodes.sender.profile": TOSHIBA}, "profiles.0.nodes.sender.profile"),
])
def test_a_profile_that_would_change_the_run_is_refused_naming_the_setting(scenario, profile, path):
    with pytest.raises(ScenarioError) as err:
        tcpenergy.run(SCENARIOS / scenario, profiles=[profile])
    assert err.value.path == path


# ---------------------------------------------------------------------------------------------
# Profiles named by file


@pytest.fixture
def calibrated(tmp_path) -> Path:
    path = tmp_path / "calibrated.toml"
    path.write_text(to_toml(_costlier(), ["A profile as tcpenergy calibrate writes one."]), encoding="utf-8")
    return path


def test_set_names_a_calibrated_profile_by_file_path(cli, quickstart, calibrated, monkeypatch):
    monkeypatch.chdir(calibrated.parent)
    by_path = cli("run", quickstart, "--set", "energy.sender=calibrated.toml", "--format", "json")
    assert by_path.exit_code == 0, by_path.stderr
    inline = tcpenergy.run(quickstart, **{"energy.sender": _costlier()})
    got = json.loads(by_path.stdout)
    assert got["energy"] == inline["energy"]
    assert got["parameters"]["energy.sender"] == "calibrated.toml"


def test_a_scenario_file_names_a_profile_file_relative_to_itself(tmp_path, calibrated, monkeypatch):
    from tcpenergy import toml_writer

    scenario_dir = tmp_path / "scenarios"
    (scenario_dir / "profiles").mkdir(parents=True)
    calibrated.rename(scenario_dir / "profiles" / "cal.toml")
    data = tcpenergy.api.read_toml(SCENARIOS / "quickstart.toml")
    data.setdefault("energy", {})["receiver"] = "profiles/cal.toml"
    scenario = scenario_dir / "q.toml"
    scenario.write_text(toml_writer.dumps(data), encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # not the scenario's directory
    by_file = tcpenergy.run(scenario)
    data["energy"]["receiver"] = _costlier()
    assert by_file["energy"] == tcpenergy.run(data)["energy"]


def test_a_network_node_names_its_profile_by_file(tmp_path, calibrated):
    data = tcpenergy.api.read_toml(SCENARIOS / "chain-3hop.toml")
    name = next(iter(data["nodes"]))
    data["nodes"][name] = {**(data["nodes"][name] or {}), "profile": str(calibrated)}
    by_file = tcpenergy.run(data)
    data["nodes"][name]["profile"] = _costlier()
    assert by_file["nodes"] == tcpenergy.run(data)["nodes"]


@pytest.mark.parametrize("content, said", [
    (None, "profile file not found"),
    ("radio = [", "invalid TOML"),
    ('name = "x"\n[platform]\nbase_power_w = 1.0\n', "missing field"),
])
def test_a_missing_or_malformed_profile_file_is_one_line_naming_the_key_and_the_file(cli, quickstart, tmp_path,
                                                                                   content, said):
    path = tmp_path / "p.toml"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    result = cli("run", quickstart, "--set", f"energy.sender={path}")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: energy.sender: ") and said in lines[0], lines
    assert str(path) in lines[0]


# ---------------------------------------------------------------------------------------------
# Sweeps that differ only in profiles (tcpenergy/experiments/profiles.py)


def _profile_sweeps(tmp_path: Path, profiles) -> list:
    import sweep_support as support
    from tcpenergy import toml_writer

    files = []
    for k, profile in enumerate(profiles):
        data = tcpenergy.api.read_toml(SCENARIOS / "quickstart.toml")
        data["energy"]["sender"] = profile
        data["energy"]["receiver"] = profile
        base = tmp_path / f"base{k}.toml"
        base.write_text(toml_writer.dumps(data), encoding="utf-8")
        files.append(support.write_sweep(tmp_path / f"s{k}.toml", {"tcp.variant": ["reno", "sack"],
                                                                  # A cell setting a profile itself keeps it.
                                                                  "energy.receiver": [TOSHIBA, "agrawal2003-samsung-wavelan-turbo"]},
                                         base=base, repetitions=2, name="priced"))
    return files


def test_sweeps_that_differ_only_in_profiles_store_what_each_sweep_alone_stores(tmp_path):
    import sweep_support as support
    from tcpenergy.experiments.profiles import sweep_profiles

    files = _profile_sweeps(tmp_path, [TOSHIBA, _costlier(), "agrawal2003-samsung-wavelan-turbo"])
    together = [tmp_path / f"together{k}.duckdb" for k in range(len(files))]
    outcomes = sweep_profiles(files, together, jobs=1, progress=False)
    assert [o.ran for o in outcomes] == [8, 8, 8]
    for k, spec in enumerate(files):
        alone = tmp_path / f"alone{k}.duckdb"
        tcpenergy.sweep(spec, store=alone, jobs=1, progress=False)
        assert support.stored(together[k]) == support.stored(alone)
        # Each sweep of its own now finds every run stored.
        assert tcpenergy.sweep(spec, store=together[k], jobs=1, progress=False).ran == 0


def test_sweeps_whose_bases_differ_beyond_profiles_are_refused(tmp_path):
    from tcpenergy.experiments.errors import SweepSpecError
    from tcpenergy.experiments.profiles import sweep_profiles

    files = _profile_sweeps(tmp_path, [TOSHIBA, TOSHIBA])
    text = files[1].read_text(encoding="utf-8").replace('"traffic.bytes" = "100KB"', '"traffic.bytes" = "200KB"')
    files[1].write_text(text, encoding="utf-8")
    with pytest.raises(SweepSpecError):
        sweep_profiles(files, [tmp_path / "a.duckdb", tmp_path / "b.duckdb"], jobs=1, progress=False)
