"""`tcpenergy calibrate`: fitting profile figures to measured energies (docs/calibration.md).

The measurements here are simulated with a KNOWN profile whose figures differ from the starting
profile's; the calibration must find those figures again, to the 6 significant digits it writes.
"""

from __future__ import annotations

import csv
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

import tcpenergy
from tcpenergy.calibration.design import Outcome, build_design, with_figures
from tcpenergy.calibration.keys import resolve_fit
from tcpenergy.calibration.measurements import quantity_of, read_measurements, split_overrides
from tcpenergy.calibration.profile_in import load_profile
from tcpenergy.calibration.profile_out import to_toml
from tcpenergy import devices
from tcpenergy.exceptions import EngineError, ScenarioError
from tcpenergy.scenario import parse_assignment

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
START = "singh2002-toshiba-wavelan"
# The known profile: the starting profile with three figures changed.
TRUTH = {"platform.base_power_w": 12.0, "cpu.cycles.per_byte": 40.0,
         "cpu.cycles.sack_block_processed": 4000.0}
FIT = ",".join(TRUTH)
# Written figures carry 6 significant digits; the CPU meter's ns rounding is exact at 500 MHz.
WRITTEN_PRECISION = 1e-5

SCENARIO = """\
name = "calibration-test"
seed = 1
[path.forward]
rate = "2Mbps"
delay = "20ms"
impairments = [{ kind = "bernoulli", p = 0.01 }]
[tcp]
variant = "sack"
[traffic]
kind = "bulk"
bytes = "200kB"
"""

# (id, overrides, seed, node, quantity): losses, MTUs, variants, rates, both nodes, all three
# measured quantities.
ROWS = [
    ("sack-snd", "", 1, "sender", "energy_j"),
    ("sack-rcv", "", 1, "receiver", "energy_j"),
    ("loss5-snd", "path.forward.impairments.0.p=0.05", 2, "sender", "energy_per_bit_uj"),
    ("loss5-rcv", "path.forward.impairments.0.p=0.05", 2, "receiver", "energy_j"),
    ("newreno576-snd", "tcp.variant=newreno; path.mtu=576", 3, "sender", "energy_j"),
    ("reno1000-rcv", "tcp.variant=reno; path.mtu=1000; path.forward.impairments.0.p=0.03", 4,
     "receiver", "power_w"),
    ("clean-snd", "path.forward.impairments.0.p=0.0", 5, "sender", "power_w"),
    ("mtu576-loss8-snd", "path.mtu=576; path.forward.impairments.0.p=0.08", 6, "sender", "energy_j"),
    ("fast-rcv", 'path.forward.rate="5Mbps"', 7, "receiver", "energy_j"),
    ("ts-loss3-snd", "tcp.timestamps=true; path.forward.impairments.0.p=0.03", 8, "sender",
     "energy_j"),
]
QUANTITIES = ("energy_j", "energy_per_bit_uj", "power_w")
HEADER = ("id", "scenario", "overrides", "seed", "node") + QUANTITIES


def _write_csv(path: Path, rows) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        writer.writerows(rows)
    return path


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> Path:
    """measurements.csv simulated with the TRUTH profile, full float precision."""
    folder = tmp_path_factory.mktemp("calibration")
    (folder / "transfer.toml").write_text(SCENARIO)
    scenario = tcpenergy.load_scenario(folder / "transfer.toml")
    truth = with_figures(load_profile(START), TRUTH)
    rows = []
    for row_id, overrides, seed, node, quantity in ROWS:
        pairs = [parse_assignment(item) for item in split_overrides(overrides)]
        record = tcpenergy.run(scenario, seed=seed, **dict(pairs), **{f"energy.{node}": truth})
        value = repr(quantity_of(record, node, quantity))
        rows.append((row_id, "transfer.toml", overrides, seed, node)
                    + tuple(value if q == quantity else "" for q in QUANTITIES))
    return _write_csv(folder / "measurements.csv", rows)


@pytest.fixture(scope="module")
def result(measured):
    return tcpenergy.calibrate(measured, START, fit=FIT, holdout=0.2, seed=3)


def _rewrite(measured: Path, tmp_path: Path, edit) -> Path:
    """A copy of the measurements (and scenario) with ``edit(rows)`` applied to the data rows."""
    (tmp_path / "transfer.toml").write_text((measured.parent / "transfer.toml").read_text())
    with open(measured, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))[1:]
    return _write_csv(tmp_path / "measurements.csv", edit(rows))


# --- recovering a known profile --------------------------------------------------------------


def test_recovers_the_known_profiles_figures_from_its_simulated_measurements(result):
    """docs/calibration.md "Weights and the fit": exact affine design + NNLS finds the figures."""
    for key, true_value in TRUTH.items():
        assert result.fitted[key] == pytest.approx(true_value, rel=WRITTEN_PRECISION), key
        low, high = result.intervals[key]
        assert low <= true_value * (1 + WRITTEN_PRECISION) and high >= true_value * (1 - WRITTEN_PRECISION)
    starts = {f.key: f.start for f in result.figures}
    profile = devices.get(START)
    assert starts == {"platform.base_power_w": profile["platform"]["base_power_w"],
                      "cpu.cycles.per_byte": profile["cpu"]["cycles"]["per_byte"],
                      "cpu.cycles.sack_block_processed": profile["cpu"]["cycles"]["sack_block_processed"]}


def test_card_interface_times_are_recovered_like_cycle_costs_docs_models_energy_card(tmp_path):
    """The card interface's per-packet and per-byte times set CPU busy time only (energy.md, "Card
    interface"), so the energy is affine in them: rows simulated with known times, at several
    MTUs and losses so that packets and bytes vary apart, give those times back."""
    (tmp_path / "transfer.toml").write_text(SCENARIO)
    scenario = tcpenergy.load_scenario(tmp_path / "transfer.toml")
    truth_figures = {"card.frame_us": 80.0, "card.byte_ns": 500.0}
    truth = with_figures(load_profile(START), truth_figures)
    rows = []
    for row_id, overrides, seed, node, quantity in ROWS[:6]:
        pairs = [parse_assignment(item) for item in split_overrides(overrides)]
        record = tcpenergy.run(scenario, seed=seed, **dict(pairs), **{f"energy.{node}": truth})
        value = repr(quantity_of(record, node, quantity))
        rows.append((row_id, "transfer.toml", overrides, seed, node)
                    + tuple(value if q == quantity else "" for q in QUANTITIES))
    fitted = tcpenergy.calibrate(_write_csv(tmp_path / "m.csv", rows), START,
                                 fit=",".join(truth_figures), resamples=50)
    for key, value in truth_figures.items():
        assert fitted.fitted[key] == pytest.approx(value, rel=WRITTEN_PRECISION), key
    assert load_profile(START)["card"]["frame_us"] != truth_figures["card.frame_us"]


def test_active_power_and_a_card_time_are_not_fitted_together():
    with pytest.raises(ScenarioError, match="card.frame_us cannot be fitted together"):
        resolve_fit("cpu.active_power_w,card.frame_us", load_profile(START))


def test_held_out_rows_are_predicted_by_the_fitted_profile_and_not_by_the_start(result):
    """docs/calibration.md "Holdout": a fifth of the rows, drawn with the seed, are not fitted."""
    assert (result.n_fit, result.n_holdout) == (8, 2)
    assert result.rms("holdout") < WRITTEN_PRECISION
    assert result.rms("fit") < WRITTEN_PRECISION
    # The starting profile (17.26 W base) is far off, so the checks above can fail.
    assert result.rms("holdout", "rel_error_start") > 0.2
    assert result.rms("fit", "rel_error_start") > 0.2


def test_rows_report_measured_start_fitted_errors_and_role_per_row(result, measured):
    rows = result.rows
    assert list(rows["id"]) == [r[0] for r in ROWS]
    assert set(rows["role"]) == {"fit", "holdout"}
    assert list(rows["quantity"]) == [r[4] for r in ROWS]
    np.testing.assert_allclose(rows["rel_error"], (rows["fitted"] - rows["measured"]) / rows["measured"])
    np.testing.assert_allclose(rows["rel_error_start"],
                               (rows["start"] - rows["measured"]) / rows["measured"])


def test_written_profile_is_valid_and_reproduces_the_measurements_in_the_engine(result, measured):
    """The TOML loads, the engine accepts it inline, and a run with it gives the measured energy."""
    profile = tomllib.loads(result.toml())
    assert profile["name"] == f"{START}-calibrated"
    for key in TRUTH:
        source = profile["sources"][key]
        assert source.startswith("calibrated: tcpenergy calibrate on measurements.csv "
                                 "(8 fit rows, 2 held out); 95% CI [")
    assert "platform.base_power_w" in profile["estimated"]
    assert "cpu.cycles.*" in profile["estimated"]
    record = tcpenergy.run(measured.parent / "transfer.toml", seed=1, **{"energy.sender": profile})
    with open(measured, newline="", encoding="utf-8") as handle:
        first = next(csv.DictReader(handle))
    assert record["energy"]["sender"]["total_j"] == pytest.approx(float(first["energy_j"]),
                                                                  rel=WRITTEN_PRECISION)
    # As a starting profile of another calibration, it is already the answer.
    again = tcpenergy.calibrate(measured, _save(result, measured.parent / "fitted.toml"), fit=FIT,
                                seed=3, resamples=50)
    assert again.rms("fit", "rel_error_start") < WRITTEN_PRECISION


def _save(result, path: Path) -> Path:
    path.write_text(result.toml())
    return path


def test_fitting_a_published_figure_lists_it_as_estimated(measured):
    """A calibrated radio.tx_power_w (published, seed 003 §III) is no longer a published figure."""
    fitted = tcpenergy.calibrate(measured, START, fit="platform.base_power_w,radio.tx_power_w",
                                 resamples=50)
    assert "radio.tx_power_w" in fitted.profile["estimated"]
    assert fitted.profile["sources"]["radio.tx_power_w"].startswith("calibrated:")


def test_parquet_measurements_give_the_same_fit_as_csv(measured, result, tmp_path):
    import pandas as pd

    frame = pd.read_csv(measured, dtype=str, keep_default_na=False)
    parquet = measured.parent / "measurements.parquet"
    frame.to_parquet(parquet, index=False)
    from_parquet = tcpenergy.calibrate(parquet, START, fit=FIT, holdout=0.2, seed=3)
    assert from_parquet.fitted == result.fitted
    assert from_parquet.intervals == result.intervals


# --- determinism and the command line -------------------------------------------------------


def test_same_seed_gives_identical_profile_and_report(cli, measured, tmp_path):
    outputs = []
    for attempt in ("a", "b"):
        out, report = tmp_path / f"{attempt}.toml", tmp_path / f"{attempt}.csv"
        run = cli("calibrate", measured, "--profile", START, "--fit", FIT, "--holdout", "0.2",
                  "--seed", "11", "--out", out, "--report", report)
        assert run.exit_code == 0, run.output
        table = run.stdout[:run.stdout.index("wrote ")]  # the last line names the output files
        outputs.append((out.read_bytes(), report.read_bytes(), table))
    assert outputs[0] == outputs[1]
    assert "platform.base_power_w" in outputs[0][2] and "RMS relative error" in outputs[0][2]


def test_holdout_draw_depends_on_the_seed():
    from tcpenergy.calibration.fit import choose_holdout

    ids = [str(i) for i in range(20)]
    draws = {tuple(choose_holdout(ids, 0.25, seed)) for seed in range(5)}
    assert len(draws) > 1
    assert all(sum(draw) == 5 for draw in draws)
    assert choose_holdout(ids, 0.25, 7) == choose_holdout(ids, 0.25, 7)


def test_holdout_rows_names_the_rows_kept_out(cli, measured, tmp_path):
    report = tmp_path / "rows.csv"
    run = cli("calibrate", measured, "--profile", START, "--fit", FIT, "--holdout-rows",
              "sack-rcv,fast-rcv", "--out", tmp_path / "p.toml", "--report", report)
    assert run.exit_code == 0, run.output
    with open(report, newline="", encoding="utf-8") as handle:
        roles = {row["id"]: row["role"] for row in csv.DictReader(handle)}
    assert {k for k, v in roles.items() if v == "holdout"} == {"sack-rcv", "fast-rcv"}


def test_profile_name_option_names_the_written_profile(cli, measured, tmp_path):
    out = tmp_path / "named.toml"
    run = cli("calibrate", measured, "--profile", START, "--fit", "platform.base_power_w",
              "--name", "lab-laptop", "--out", out)
    assert run.exit_code == 0, run.output
    assert tomllib.loads(out.read_text())["name"] == "lab-laptop"


# --- the affine premise ----------------------------------------------------------------------


def _fake_rows(measured: Path):
    return read_measurements(measured).rows[:2]


def test_a_response_that_is_not_affine_in_a_figure_stops_as_a_bug(measured):
    """docs/calibration.md "The design matrix": three runs per key must lie on a line."""
    def quadratic(row, profile):
        base = profile["platform"]["base_power_w"]
        return Outcome(value=base * base, per_joule=1.0, timeline=(1,), operations=0,
                       cpu_power_w=0.0)

    with pytest.raises(EngineError, match="not affine in platform.base_power_w"):
        build_design(_fake_rows(measured), load_profile(START), ["platform.base_power_w"], quadratic)


def test_a_figure_that_moves_the_timeline_stops_as_a_bug(measured):
    def moving(row, profile):
        base = profile["platform"]["base_power_w"]
        return Outcome(value=base, per_joule=1.0, timeline=(base,), operations=0, cpu_power_w=0.0)

    with pytest.raises(EngineError, match="changed the simulated timeline"):
        build_design(_fake_rows(measured), load_profile(START), ["platform.base_power_w"], moving)


def test_every_fittable_figure_passes_the_affinity_check_under_every_radio_policy(measured, tmp_path):
    """The engine's meters (energy/meter.rs, energy/cpu.rs): powers and cycle costs change no
    event; checked at 500 MHz (exact ns per cycle) and 90 MHz (rounded busy time)."""
    from tcpenergy.calibration.keys import AFFINE_KEYS

    def policies(rows):
        policy = ["", "energy.radio_policy=ideal",
                  'energy.radio_policy=idle_timeout; energy.timeout="2ms"']
        out = []
        for i, row in enumerate(rows[:3]):
            row = list(row)
            row[2] = "; ".join(x for x in (row[2], policy[i]) if x)
            out.append(row)
        return out

    rows = read_measurements(_rewrite(measured, tmp_path, policies)).rows
    for name in (START, "agrawal2003-samsung-wavelan-turbo"):
        design = build_design(rows, load_profile(name), AFFINE_KEYS)
        assert design.slopes.shape == (3, len(AFFINE_KEYS))
        assert np.all(design.slopes >= 0)


def test_rows_weigh_by_relative_error_so_a_1_j_and_a_500_j_run_count_alike():
    """docs/calibration.md "Weights and the fit": residuals are (q - m) / m. One figure, two rows
    that disagree by 10 %: the fit splits the relative error between them, where unweighted least
    squares would follow the 500 J row alone."""
    from tcpenergy.calibration.fit import nnls, weighted_system

    slopes, offset, measured = np.array([[1.0], [500.0]]), np.zeros(2), np.array([1.1, 500.0])
    theta = nnls(*weighted_system(slopes, offset, measured))
    # d/dθ [((θ - 1.1) / 1.1)² + (θ - 1)²] = 0
    expected = (1.1 / 1.21 + 1.0) / (1.0 / 1.21 + 1.0)
    assert theta[0] == pytest.approx(expected, rel=1e-12)
    assert nnls(slopes, measured - offset)[0] == pytest.approx(1.0, abs=1e-6)


def test_nnls_stops_a_figure_at_zero_instead_of_going_negative():
    from tcpenergy.calibration.fit import nnls

    slopes = np.array([[1.0, 1.0], [1.0, 2.0], [1.0, 3.0]])
    measured = slopes @ np.array([2.0, -0.5])  # the unconstrained answer is negative
    theta = nnls(slopes, measured)
    assert theta[1] == 0.0 and theta[0] > 0


# --- which keys ------------------------------------------------------------------------------


def test_default_keys_are_the_estimated_affine_figures_with_active_power_over_cycle_costs():
    keys, notes = resolve_fit(None, load_profile(START))
    assert keys == ["platform.base_power_w", "radio.idle_power_w", "radio.wake_power_w",
                    "cpu.active_power_w"]
    assert any("radio.wake_time" in note for note in notes)
    assert any("cpu.frequency_hz" in note for note in notes)
    assert any("cpu.cycles.*" in note for note in notes)


def test_default_fit_leaves_out_figures_no_row_depends_on(measured):
    # All rows run with the radio always on: the wake power never counts.
    fitted = tcpenergy.calibrate(measured, START, resamples=50)
    assert "radio.wake_power_w" not in fitted.fitted
    assert any(note.startswith("radio.wake_power_w not fitted") for note in fitted.notes)


def test_cycle_glob_expands_to_every_cycle_cost():
    keys, _ = resolve_fit("cpu.cycles.*", load_profile(START))
    assert len(keys) == 14 and all(k.startswith("cpu.cycles.") for k in keys)


def test_cycle_keys_are_the_engines_table_in_its_order():
    import json
    from tcpenergy._native import engine
    from tcpenergy.calibration.keys import CYCLE_KEYS, unit
    table = json.loads(engine.cycle_figures())
    assert CYCLE_KEYS == tuple(f["key"] for f in table)
    assert CYCLE_KEYS[:3] == ("cpu.cycles.segment_sent", "cpu.cycles.segment_received",
                              "cpu.cycles.per_byte")
    assert unit("cpu.cycles.per_byte") == "cycles/byte" and unit("cpu.cycles.ack_sent") == "cycles"
    assert all(f["doc"] for f in table)


def test_a_profile_omitting_a_figure_with_a_default_loads_with_it_and_can_fit_it():
    profile = load_profile("singh2002-toshiba-wavelan")
    del profile["cpu"]["cycles"]["paws_check"]
    loaded = load_profile(profile)
    assert loaded["cpu"]["cycles"]["paws_check"] == 0
    keys, _ = resolve_fit("cpu.cycles.paws_check", loaded)
    assert keys == ["cpu.cycles.paws_check"]
    del profile["cpu"]["cycles"]["segment_sent"]
    with pytest.raises(Exception, match="segment_sent"):
        load_profile(profile)


def test_overrides_split_at_semicolons_outside_quotes_and_brackets():
    text = 'name="a;b"; path.forward.impairments=[{kind="bernoulli", p=0.1}]; path.mtu=576'
    assert split_overrides(text) == ['name="a;b"',
                                     'path.forward.impairments=[{kind="bernoulli", p=0.1}]',
                                     "path.mtu=576"]


# --- bad input: one line naming the row or key, exit 2, no output file ----------------------


def _set(row_id: str, column: str, value: str):
    index = HEADER.index(column)

    def edit(rows):
        for row in rows:
            if row[0] == row_id:
                row[index] = value
        return rows

    return edit


def _keep(n: int):
    return lambda rows: rows[:n]


BAD_ROWS = [
    pytest.param(_set("sack-rcv", "overrides", 'path.mtu="large"'), (),
                 ["row sack-rcv:", "path.mtu"], id="scenario-fails-validation"),
    pytest.param(_set("sack-rcv", "scenario", "missing.toml"), (),
                 ["row sack-rcv:", "not found"], id="scenario-file-missing"),
    pytest.param(_set("sack-rcv", "energy_j", "-3.5"), (),
                 ["row sack-rcv: energy_j: must be a positive number"], id="negative-energy"),
    pytest.param(_set("sack-rcv", "energy_j", "0"), (),
                 ["row sack-rcv: energy_j: must be a positive number"], id="zero-energy"),
    pytest.param(_set("sack-rcv", "energy_j", ""), (),
                 ["row sack-rcv: no measured value"], id="missing-energy"),
    pytest.param(_set("sack-rcv", "power_w", "20"), (),
                 ["row sack-rcv: more than one measured value (energy_j, power_w)"],
                 id="two-measured-columns"),
    pytest.param(_set("sack-rcv", "node", "relay"), (),
                 ["row sack-rcv: node:", "sender", "receiver"], id="unknown-node"),
    pytest.param(_set("sack-rcv", "seed", "-1"), (), ["row sack-rcv: seed:"], id="bad-seed"),
    pytest.param(None, ("--fit", "radio.colour_w"),
                 ["--fit: unknown profile key 'radio.colour_w'", "platform.base_power_w"],
                 id="unknown-fit-key"),
    pytest.param(None, ("--fit", "cpu.frequency_hz"),
                 ["--fit: cpu.frequency_hz cannot be fitted", "not affine"], id="clock-not-affine"),
    pytest.param(None, ("--fit", "radio.*"),
                 ["--fit: radio.wake_time (matched by radio.*) cannot be fitted"],
                 id="wake-time-not-affine"),
    pytest.param(None, ("--fit", "cpu.active_power_w,cpu.cycles.per_byte"),
                 ["cpu.active_power_w and cpu.cycles.per_byte cannot be fitted together"],
                 id="product-of-figures"),
    pytest.param(_keep(2), ("--fit", FIT),
                 ["2 fit rows cannot determine 3 figures"], id="fewer-rows-than-figures"),
    pytest.param(None, ("--fit", "platform.base_power_w,radio.tx_power_w,radio.rx_power_w,"
                                 "radio.idle_power_w"),
                 ["cannot tell", "radio.idle_power_w"], id="inseparable-figures"),
    pytest.param(None, ("--fit", "radio.sleep_power_w"),
                 ["--fit: radio.sleep_power_w: no fit row"], id="figure-no-row-depends-on"),
    pytest.param(None, ("--holdout-rows", "nobody"),
                 ["--holdout-rows: no row has id 'nobody'"], id="unknown-holdout-row"),
    pytest.param(None, ("--holdout", "1.5"), ["--holdout: must be a fraction"], id="bad-holdout"),
]


def _assert_user_error(run, expected, tmp_path, out_names=("out.toml", "rows.csv")):
    assert run.exit_code == 2, run.output
    assert run.stdout == ""
    assert run.stderr.startswith("error: ")
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    for text in expected:
        assert text in run.stderr, run.stderr
    for name in out_names:
        assert not (tmp_path / name).exists()


@pytest.mark.parametrize("edit, options, expected", BAD_ROWS)
def test_bad_input_exits_2_with_one_line_naming_the_row_or_key_and_writes_nothing(
        cli, measured, tmp_path, edit, options, expected):
    source = _rewrite(measured, tmp_path, edit) if edit else measured
    options = options or ("--fit", FIT)
    run = cli("calibrate", source, "--profile", START, *options,
              "--out", tmp_path / "out.toml", "--report", tmp_path / "rows.csv")
    _assert_user_error(run, expected, tmp_path)


def test_unknown_profile_exits_2_listing_the_builtin_profiles(cli, measured, tmp_path):
    run = cli("calibrate", measured, "--profile", "toaster-3000", "--out", tmp_path / "out.toml")
    _assert_user_error(run, ["--profile: unknown profile 'toaster-3000'", START], tmp_path)


def test_invalid_profile_file_names_the_key_inside_it(cli, measured, tmp_path):
    bad = tmp_path / "bad.toml"
    profile = load_profile(START)
    profile["radio"]["tx_power_w"] = -1.0
    bad.write_text(to_toml(profile))
    run = cli("calibrate", measured, "--profile", bad, "--out", tmp_path / "out.toml")
    _assert_user_error(run, [f"--profile {bad}: radio.tx_power_w:"], tmp_path)


@pytest.mark.parametrize("name, content", [
    ("missing.csv", None),
    ("broken.parquet", b"this is not parquet"),
    ("measurements.txt", b"id,scenario\n"),
], ids=["missing-file", "unreadable-parquet", "unsupported-extension"])
def test_unreadable_measurements_exit_2_naming_the_file(cli, tmp_path, name, content):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    run = cli("calibrate", path, "--profile", START, "--out", tmp_path / "out.toml")
    _assert_user_error(run, ["error: measurements:", name], tmp_path)


def test_unknown_column_is_refused_listing_the_columns(cli, measured, tmp_path):
    with open(measured, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    source = tmp_path / "extra.csv"
    with open(source, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([row + [name] for row, name in
                                      zip(rows, ["energy_J"] + [""] * (len(rows) - 1))])
    run = cli("calibrate", source, "--profile", START, "--out", tmp_path / "out.toml")
    _assert_user_error(run, ["unknown column 'energy_J'", "energy_j"], tmp_path)


def test_api_raises_scenario_error_with_the_row_as_path(measured, tmp_path):
    source = _rewrite(measured, tmp_path, _set("fast-rcv", "node", "router"))
    with pytest.raises(ScenarioError) as caught:
        tcpenergy.calibrate(source, START, fit=FIT)
    assert caught.value.path == "row fast-rcv"


# --- the README example ----------------------------------------------------------------------


def _readme_command() -> list:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Calibrating a device profile"):]
    block = section[section.index("```sh") + len("```sh"):section.index("```", section.index("```sh") + 5)]
    command = " ".join(line.rstrip("\\").strip() for line in block.strip().splitlines())
    words = shlex.split(command)
    assert words[:2] == ["tcpenergy", "calibrate"]
    return words[2:]


def test_readme_calibration_example_runs_on_the_example_files(cli, tmp_path):
    args = _readme_command()
    # Outputs go to a temporary directory; inputs are the repository's example files.
    for option in ("--out", "--report"):
        if option in args:
            i = args.index(option) + 1
            args[i] = str(tmp_path / Path(args[i]).name)
    args[0] = str(REPO / args[0])
    run = cli("calibrate", *args)
    assert run.exit_code == 0, run.output
    out = Path(args[args.index("--out") + 1])
    profile = tomllib.loads(out.read_text())
    assert profile["name"].endswith("-calibrated")
    assert profile["sources"]["platform.base_power_w"].startswith(
        "calibrated: tcpenergy calibrate on measurements.csv")
    tcpenergy.validate(REPO / "examples" / "calibration" / "transfer.toml",
                       **{"energy.sender": profile})


def test_a_measurement_above_a_fully_busy_cpu_is_refused_for_cycle_costs_docs_energy_cpu(
        cli, measured, tmp_path):
    # CPU busy time is capped at the measurement window (docs/models/energy.md, CPU), so a mean
    # power far above base + radio + active CPU power cannot be explained by any cycle cost.
    source = _write_csv(tmp_path / "high.csv", [("too-high", str(measured.parent / "transfer.toml"),
                                                 "", 1, "sender", "", "", "500")])
    run = cli("calibrate", source, "--profile", START, "--fit", "cpu.cycles.per_byte",
              "--out", tmp_path / "out.toml", "--report", tmp_path / "rows.csv")
    _assert_user_error(run, ["row too-high: no cycle cost or card time explains 500 W", "fit a power figure instead"],
                       tmp_path)
