"""`tcpenergy reproduce SEED --sensitivity KEY`: where each energy claim holds as one device-profile
figure is swept (tcpenergy/reproduce/sensitivity.py, tcpenergy/report/sensitivity.py,
docs/reproduce/README.md "Sensitivity").

The end-to-end tests run seed 003 on a tiny plan (its timestamps experiment, 1 MB, no loss, 2 seeds),
so that a sweep takes seconds: seed 003 §III-B.2 (claim S003-C04) says turning timestamps off saves
energy; the Samsung profile estimates the PAWS check at a few tens of cycles, so in the model it does
not, until the check is made expensive.
"""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path

import pytest

from tcpenergy import devices
from tcpenergy.reproduce import claims as C
from tcpenergy.reproduce import seed000 as S0
from tcpenergy.reproduce.seed000 import claims as E0
from tcpenergy.reproduce import seed003 as S3
from tcpenergy.reproduce import sensitivity as sens
from tcpenergy.reproduce.common import Experiment, load_runs, profile_table
from tcpenergy.report import sensitivity as render

H, D, K, N = C.HOLDS, C.DOES_NOT_HOLD, C.CONSISTENCY, C.NOT_MODELLED
SACK = sens.KNOBS["cpu.cycles.sack_block_processed"]


def _toshiba_as_documented():
    """The Toshiba profile with the figures docs/models/profiles.md gives (so that these tests do not
    follow later re-estimates): 400 cycles per SACK block, 3 cycles/byte, 7.0 W at 500 MHz, base
    17.26 W, radio idle 0.74 W between 0.05 W asleep and 0.90 W receiving."""
    profile = profile_table(devices.get("singh2002-toshiba-wavelan"))
    profile["cpu"].update(active_power_w=7.0, frequency_hz=500e6)
    profile["cpu"]["cycles"].update(sack_block_processed=400.0, per_byte=3.0)
    profile["platform"]["base_power_w"] = 17.26
    profile["radio"].update(idle_power_w=0.74, sleep_power_w=0.05, rx_power_w=0.9)
    return profile


TOSHIBA = _toshiba_as_documented()
VALUES = SACK.points(TOSHIBA)  # 40, 126, 400, 1,260, 4,000, 12,600, 40,000 cycles


def _reading(knob=SACK, profile=TOSHIBA):
    return sens.Reading(knob.key, knob.unit, lambda v: knob.physical(v, profile), knob.context(profile))


# --------------------------------------------------------------------------------------------
# Where a claim holds, from its statuses at the swept values (pure)
# --------------------------------------------------------------------------------------------

def test_holding_above_a_threshold_reads_as_greater_or_equal_with_its_physical_cost():
    statuses = [D, D, D, D, H, H, H]
    assert sens.holding_bands(VALUES, statuses) == [sens.Band(4000, 40000, 1260, None)]
    text = sens.statement(_reading(), VALUES, statuses, 400)
    # 4,000 cycles x 7 W / 500 MHz = 56 µJ per block.
    assert text == ("holds for sack_block_processed >= 4,000 cycles (>= 56 µJ per SACK block processed at "
                    "7 W / 500 MHz); does not hold at the profile value 400 cycles")
    assert sens.condition(_reading(), VALUES, statuses).startswith(
        "holds if cpu.cycles.sack_block_processed >= 4,000 cycles (>= 56 µJ")


def test_holding_below_a_threshold_reads_as_less_or_equal():
    statuses = [H, H, D, D, D, D, D]
    assert sens.holding_bands(VALUES, statuses) == [sens.Band(40, 126, None, 400)]
    assert sens.statement(_reading(), VALUES, statuses, 400).startswith("holds for sack_block_processed <= 126 cycles")


def test_holding_in_a_band_reads_as_an_interval_and_names_the_profile_verdict():
    statuses = [D, D, H, H, D, D, D]
    assert sens.holding_bands(VALUES, statuses) == [sens.Band(400, 1260, 126, 4000)]
    text = sens.statement(_reading(), VALUES, statuses, 400)
    assert text.startswith("holds for sack_block_processed in [400, 1,260] cycles ([5.6, 17.6] µJ")
    assert text.endswith("; holds at the profile value 400 cycles")


def test_two_bands_are_joined_by_or():
    text = sens.condition(_reading(), VALUES, [H, D, D, D, D, D, H])
    assert " <= 40 cycles " in text and " or cpu.cycles.sack_block_processed >= 40,000 cycles " in text


def test_a_claim_that_never_holds_or_always_holds_says_so_over_the_swept_span():
    assert sens.statement(_reading(), VALUES, [D] * 7, 400) == \
        "holds at no swept value of sack_block_processed in [40, 40,000] cycles"
    # A consistency check holds too: it just could not have failed.
    assert sens.statement(_reading(), VALUES, [H, K, H, H, K, H, H], 400) == \
        "holds at every swept value of sack_block_processed in [40, 40,000] cycles"
    assert sens.statement(_reading(), VALUES, [N] * 7, 400) == "not modelled at any value"
    assert sens.holding_bands(VALUES, [N] * 7) == []


# --------------------------------------------------------------------------------------------
# The registry, --values, and usage errors (exit 2, one line, nothing written)
# --------------------------------------------------------------------------------------------

def test_cycle_costs_sweep_geometrically_from_a_tenth_to_a_hundred_times_the_profile_value():
    assert VALUES == [40, 126, 400, 1260, 4000, 12600, 40000]
    assert SACK.scale == sens.GEOMETRIC
    # docs/models/profiles.md: 14 nJ per cycle on the Toshiba (7.0 W / 500 MHz).
    number, text = SACK.physical(400, TOSHIBA)
    assert math.isclose(number, 5.6) and text == "µJ per SACK block processed"
    per_byte = sens.KNOBS["cpu.cycles.per_byte"]
    assert per_byte.points(TOSHIBA)[0] == 0.3 and per_byte.points(TOSHIBA)[-1] == 300
    number, text = per_byte.physical(3.0, TOSHIBA)
    assert math.isclose(number, 42.0) and text == "nJ per payload byte"


def test_power_sweeps_are_linear_over_their_plausible_range_and_always_hold_the_profile_value():
    for key in ("platform.base_power_w", "radio.idle_power_w", "cpu.active_power_w"):
        knob = sens.KNOBS[key]
        base = sens.profile_value(TOSHIBA, key)
        values = sens.sweep_values(knob.points(TOSHIBA), base)
        assert knob.scale == sens.LINEAR and base in values and values == sorted(set(values)), key
    idle = sens.sweep_values(sens.KNOBS["radio.idle_power_w"].points(TOSHIBA), 0.74)
    # Seed 001 §1.2's mode order: sleep <= idle <= receive.
    assert idle[0] == TOSHIBA["radio"]["sleep_power_w"] and idle[-1] == TOSHIBA["radio"]["rx_power_w"]
    assert sens.sweep_values([0.0, 8.63, 17.26, 25.9], 17.26) == [0.0, 8.63, 17.26, 25.9]


def test_every_registered_key_is_a_figure_of_every_reproduction_profile():
    for name in ("singh2002-toshiba-wavelan", "agrawal2003-samsung-wavelan-turbo"):
        profile = profile_table(devices.get(name))
        for key, knob in sens.KNOBS.items():
            assert knob.points(profile), (name, key)


def test_unknown_key_exits_2_with_one_line_naming_it_and_the_supported_keys(cli, tmp_path):
    out = tmp_path / "out"
    result = cli("reproduce", "seed-003", "--out", out, "--sensitivity", "cpu.cycles.nonsense")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "'cpu.cycles.nonsense'" in lines[0]
    assert all(key in lines[0] for key in sens.KNOBS)
    assert not out.exists()


@pytest.mark.parametrize("values, said", [("40,abc", "'abc' is not a number"), ("40,-5", "-5 is negative"),
                                          ("40,,400", "'' is not a number"), ("inf", "'inf' is not a number")])
def test_values_must_be_non_negative_numbers(cli, tmp_path, values, said):
    out = tmp_path / "out"
    result = cli("reproduce", "seed-003", "--out", out, "--sensitivity", "cpu.active_power_w", "--values", values)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and "--values" in lines[0]
    assert not out.exists()


def test_values_without_a_key_exit_2(cli, tmp_path):
    result = cli("reproduce", "seed-003", "--out", tmp_path / "out", "--values", "1,2")
    assert result.exit_code == 2 and "--values needs --sensitivity" in result.stderr


def test_parse_values_reads_numbers_in_any_float_notation():
    assert sens.parse_values(" 40, 400,4e3 ,0") == [40.0, 400.0, 4000.0, 0.0]


# --------------------------------------------------------------------------------------------
# The experiment transform
# --------------------------------------------------------------------------------------------

def test_the_swept_figure_is_set_in_both_nodes_profiles_as_inline_tables_and_nothing_else_changes():
    import tcpenergy

    from tcpenergy.records import flatten

    exp = S3.experiments(quick=True)[0]
    changed = sens.with_figure(exp, "cpu.cycles.ack_received", 13000.0)
    named = flatten(profile_table(devices.get(S3.DEVICE)))
    for node in ("sender", "receiver"):
        table = flatten(changed.base["energy"][node])
        assert table["cpu.cycles.ack_received"] == 13000.0
        differ = {k for k in set(table) | set(named) if table.get(k) != named.get(k)}
        assert differ == {"cpu.cycles.ack_received", "name", "description"}, node
        assert table["name"] == f"{S3.DEVICE}+cpu.cycles.ack_received=13000"
    assert exp.base["energy"]["sender"] == S3.DEVICE  # the original experiment is untouched
    tcpenergy.validate(changed.base)


def test_an_experiment_that_sweeps_the_figure_itself_is_noted():
    whatif = next(e for e in S0.experiments(quick=True) if e.name == S0.WHATIF)
    notes = sens.overridden(whatif, "platform.base_power_w")
    assert len(notes) == 1 and "sender's platform.base_power_w itself" in notes[0]
    assert sens.overridden(whatif, "cpu.cycles.ack_received") == []


# --------------------------------------------------------------------------------------------
# Claims that read no energy metric do not move; which sweeps the other values run
# --------------------------------------------------------------------------------------------

def _value_run(value, statuses, skipped=()):
    return sens.ValueRun(value, Path("."), {cid: {"id": cid, "status": s} for cid, s in statuses.items()},
                         list(skipped), 0, 0, 0.0)


def test_a_non_energy_claim_that_changes_verdict_fails_the_sweep_naming_it():
    base = _value_run(400, {"E1": D, "T1": H})
    other = _value_run(4000, {"E1": H, "T1": D})
    with pytest.raises(sens.SensitivityError, match=r"T1 holds at 400 but does_not_hold at 4,000"):
        sens.check_non_energy_unchanged(base, [other], frozenset({"E1"}), {"E1": {"a"}, "T1": {"a"}}, "k")


def test_energy_claims_may_change_and_claims_of_sweeps_not_rerun_are_not_compared():
    base = _value_run(400, {"E1": D, "T1": H, "T2": H})
    other = _value_run(4000, {"E1": H, "T1": H, "T2": D}, skipped=["drops"])
    compared = sens.check_non_energy_unchanged(base, [other], frozenset({"E1"}),
                                               {"E1": {"a"}, "T1": {"a"}, "T2": {"drops"}}, "k")
    assert compared == ["T1"]


def test_each_verdict_lists_the_sweeps_it_read_so_the_sweep_knows_what_to_rerun():
    import pandas as pd

    attempted = C.mark_settings(pd.DataFrame(
        [{"sweep": sweep, "seed": seed, "status": "ok", "label.x": x, "value": 1.0}
         for sweep in ("drops", "random") for x in (1, 2) for seed in (1, 2)]))

    def reading(*sweeps):
        def evaluate():
            C.note(attempted[attempted["sweep"].isin(sweeps)])
            return C.verdict(True, "read", "")
        return evaluate

    entry = {"id": "T-C01", "claim": "c", "where": "test"}
    assert C.judge(entry, reading("random", "drops"), attempted)["sweeps"] == ["drops", "random"]
    assert C.judge(entry, reading("random"), attempted)["sweeps"] == ["random"]
    assert C.judge(entry, lambda: C.not_modelled("no model"), attempted)["sweeps"] == []
    run = _value_run(400, {"T-C01": H})
    run.records["T-C01"]["sweeps"] = ["random"]
    assert sens.sweeps_by_claim(run) == {"T-C01": {"random"}}


def test_other_values_run_only_the_sweeps_energy_claims_read():
    base = _value_run(400, {"E1": D, "E2": N, "T1": H})
    read = {"E1": {"random", "bursty"}, "E2": set(), "T1": {"drops"}}
    assert sens.needed_sweeps(base, frozenset({"E1", "E2"}), read) == {"random", "bursty"}
    # An energy claim judged from runs that recorded no sweep: the record is not trusted, run all.
    assert sens.needed_sweeps(_value_run(400, {"E1": D}), frozenset({"E1"}), {}) is None


# --------------------------------------------------------------------------------------------
# S000-C01 under a swept idle power
# --------------------------------------------------------------------------------------------

def _random_runs_drawing(p_idle_w):
    """Random-loss runs whose sender energy is P_idle x B/tau plus a fixed transmit cost (seed 000
    §2.1, Eq. (1)-(2)): the accounting the claim's fit checks."""
    import pandas as pd

    rows = []
    for i, goodput in enumerate((0.4e6, 0.7e6, 1.0e6, 1.3e6, 1.6e6)):
        for seed in (1, 2):
            seconds = 8 * 5e6 / goodput
            rows.append({"sweep": S0.RANDOM, "seed": seed, "status": "ok", "label.i": i,
                         "flow.bytes_delivered": 5e6, "flow.goodput_bps": goodput,
                         "energy.sender.total_j": p_idle_w * seconds + 3.0})
    return pd.DataFrame(rows)


def test_s000_c01_compares_the_fitted_slope_with_the_idle_power_of_the_profile_the_runs_used_seed000_s2_1():
    entry = [e for e in C.load_claims(S0.CLAIMS) if e["id"] == "S000-C01"]
    named = profile_table(S0.DEVICE)
    swept = sens.set_figure(named, "platform.base_power_w", named["platform"]["base_power_w"] / 2)
    p_idle = swept["platform"]["base_power_w"] + swept["radio"]["idle_power_w"]
    runs = _random_runs_drawing(p_idle)
    [record] = E0.evaluate(runs, entry, sender_profile=swept)
    assert record["status"] == K, record["evidence"]
    assert f"P_idle = {p_idle:.2f} W" in record["evidence"] and swept["name"] in record["evidence"]
    # Compared with the named profile instead, the same (correct) accounting would not hold.
    [against_named] = E0.evaluate(runs, entry)
    assert against_named["status"] == D and S0.DEVICE in against_named["evidence"]
    # And runs that drew the named profile's idle power hold against it by default.
    named_idle = named["platform"]["base_power_w"] + named["radio"]["idle_power_w"]
    assert E0.evaluate(_random_runs_drawing(named_idle), entry)[0]["status"] == K


# --------------------------------------------------------------------------------------------
# Figure and checklist notes (rendering)
# --------------------------------------------------------------------------------------------

def _document(scale=sens.GEOMETRIC, values=(40, 400, 4000), profile=400):
    return {"paper": "seed-000", "key": "cpu.cycles.sack_block_processed", "unit": "cycles", "scale": scale,
            "quick": False, "profile": {"name": "singh2002-toshiba-wavelan", "value": profile},
            "values": list(values), "context": "at 7 W / 500 MHz", "physical": [[v * 0.014, "µJ"] for v in values],
            "claims": [{"id": "S000-C05", "energy": True, "statuses": [D, D, H], "base_status": D,
                        "statement": "holds for ...",
                        "condition": "holds if cpu.cycles.sack_block_processed >= 4,000 cycles"},
                       {"id": "S000-C10", "energy": True, "statuses": [K, K, K], "base_status": K,
                        "statement": "holds at every ...", "condition": "holds at every ..."},
                       {"id": "S000-C06", "energy": False, "statuses": [H, H, H], "base_status": H}]}


def test_the_figure_has_one_row_per_energy_claim_and_a_log_x_axis_for_a_geometric_sweep():
    fig = render.draw_figure(_document())
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["S000-C05", "S000-C10"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["40", "400\n(profile)", "4,000"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["holds", "consistency", "does not hold"]
    linear = render.draw_figure(_document(sens.LINEAR, (0, 8.63, 17.26), 17.26))
    assert linear.axes[0].get_xscale() == "linear"


def test_checklist_rows_of_energy_claims_that_do_not_hold_get_their_holds_if_note():
    records = [{"id": "S000-C05", "status": D, "claim": "E[SACK] > E[NewReno]", "evidence": "e", "explanation": "x"},
               {"id": "S000-C10", "status": K, "claim": "c", "evidence": "e", "explanation": "x"},
               {"id": "S000-C06", "status": D, "claim": "t", "evidence": "e", "explanation": "x"}]
    section = C.checklist_section(records, "intro")
    [(heading, body, md)] = render.annotate_checklist([section], [_document()])
    assert heading == "Claims checklist"
    row = body[body.index('<tr id="claim-S000-C05">'):]
    row = row[:row.index("</tr>")]
    assert '<div class="sensitivity-note">holds if cpu.cycles.sack_block_processed &gt;= 4,000 cycles</div>' in row
    assert body.count("sensitivity-note") == 1  # not on the consistency check, not on the non-energy claim
    line = next(line for line in md.splitlines() if line.startswith("| S000-C05 |"))
    assert "| does not hold; holds if cpu.cycles.sack_block_processed >= 4,000 cycles |" in line


# --------------------------------------------------------------------------------------------
# End to end on a tiny seed-003 plan
# --------------------------------------------------------------------------------------------

def _tiny_plan(quick: bool = False):
    """Seed 003's timestamps experiment (§III-B.2: TS on/off x header prediction, MTU 2296) and the
    MTU 1500 column of its SACK experiment (which the report plots), 1 MB, no loss, 2 seeds."""
    def base(mtu):
        out = S3.base(mtu=mtu)
        out["path"]["forward"]["impairments"] = []
        out["traffic"]["bytes"] = "1MB"
        return out

    return [Experiment(S3.MTU_SACK, "tiny: SACK on/off, MTU 1500", base(1500),
                       {"path.mtu": [1500], "tcp.variant": ["sack", "newreno"]}, 2),
            Experiment(S3.TIMESTAMPS, "tiny: timestamps x header prediction, MTU 2296", base(2296),
                       {"tcp.timestamps": [True, False], "tcp.header_prediction": ["standard", "predict_first"]}, 2)]


KEY = "cpu.cycles.paws_check"
SAMSUNG = profile_table(devices.get(S3.DEVICE))
PAWS = SAMSUNG["cpu"]["cycles"]["paws_check"]  # the profile's estimate (40 cycles when written)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    from typer.testing import CliRunner

    from tcpenergy.cli import app

    out = tmp_path_factory.mktemp("sensitivity") / "seed-003"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S3, "experiments", _tiny_plan)
        runner = CliRunner()
        main = runner.invoke(app, ["reproduce", "seed-003", "--quick", "--out", str(out), "--jobs", "2"])
        assert main.exit_code == 0, main.output
        result = runner.invoke(app, ["reproduce", "seed-003", "--quick", "--out", str(out), "--jobs", "2",
                                     "--sensitivity", KEY, "--values", "100000"])
    return out, result


def _csv(out):
    with open(out / "sensitivity" / KEY / "sensitivity.csv", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_sweep_exits_0_and_prints_where_the_timestamps_claim_holds(swept):
    _, result = swept
    assert result.exit_code == 0, result.output
    assert "S003-C04" in result.stdout and ">= 100,000 cycles" in result.stdout


def test_the_timestamps_claim_holds_only_once_the_paws_check_is_expensive_seed003_s3_b2(swept):
    out, _ = swept
    document = json.loads((out / "sensitivity" / KEY / "sensitivity.json").read_text(encoding="utf-8"))
    assert document["values"] == [PAWS, 100000] and document["profile"]["value"] == PAWS
    c04 = next(c for c in document["claims"] if c["id"] == "S003-C04")
    assert c04["energy"] and c04["statuses"] == [D, H]
    cpu = SAMSUNG["cpu"]
    uj = sens.round_sig(1e5 * cpu["active_power_w"] / cpu["frequency_hz"] * 1e6)
    assert c04["statement"].startswith(f"holds for paws_check >= 100,000 cycles (>= {sens.figure_text(uj)} µJ per PAWS "
                                       f"check at {cpu['active_power_w']:g} W / {cpu['frequency_hz'] / 1e6:g} MHz)")
    assert c04["statement"].endswith(f"does not hold at the profile value {PAWS:g} cycles")


def test_both_nodes_pay_the_swept_cost_and_the_protocol_does_not_notice(swept):
    out, _ = swept
    def runs(value):
        frame = load_runs(out / "sensitivity" / KEY / value / "runs.duckdb")
        return frame[frame["sweep"] == S3.TIMESTAMPS].sort_values(["cell", "seed"])

    cheap, dear = runs(sens.value_name(PAWS)), runs("100000")
    # PAWS runs per segment carrying timestamps, on the standard path (predict_first skips it).
    on = ((cheap["tcp.timestamps"] == True) & (cheap["tcp.header_prediction"] == "standard")).to_numpy()  # noqa: E712
    assert on.sum() == 2
    for node in ("sender", "receiver"):
        col = f"energy.{node}.breakdown_j.cpu"
        assert (dear[col].to_numpy()[on] > cheap[col].to_numpy()[on]).all(), node
    # The energy meter does not feed back into the protocol: same transfers at both values.
    for col in ("flow.completion_s", "flow.segments_sent", "flow.goodput_bps"):
        assert list(dear[col]) == list(cheap[col]), col


def test_non_energy_claims_keep_their_verdict_at_every_value(swept):
    out, _ = swept
    rows = _csv(out)
    non_energy = {}
    for row in rows:
        if row["energy"] == "false":
            non_energy.setdefault(row["claim"], set()).add(row["status"])
    assert non_energy and all(len(statuses) == 1 for statuses in non_energy.values())
    assert {row["value"] for row in rows} == {f"{PAWS:.6g}", "100000"}


def test_summary_figure_and_report_section_are_written(swept):
    out, _ = swept
    directory = out / "sensitivity" / KEY
    for name in ("summary.md", "sensitivity.png", "sensitivity.svg"):
        assert (directory / name).is_file(), name
    summary = (directory / "summary.md").read_text(encoding="utf-8")
    assert "![claims x cpu.cycles.paws_check](sensitivity.png)" in summary and "| S003-C04 | does not hold |" in summary
    html = (out / "report" / "index.html").read_text(encoding="utf-8")
    assert '<section id="sensitivity">' in html and '<a href="#sensitivity">Sensitivity</a>' in html
    assert 'src="figures/sensitivity-cpu-cycles-paws-check.png"' in html
    assert (out / "report" / "figures" / "sensitivity-cpu-cycles-paws-check.png").is_file()
    row = html[html.index('<tr id="claim-S003-C04">'):]
    assert "holds if cpu.cycles.paws_check &gt;= 100,000 cycles" in row[:row.index("</tr>")]
    md = (out / "report" / "report.md").read_text(encoding="utf-8")
    assert "## Sensitivity" in md


def test_a_value_is_the_papers_own_pipeline_with_the_figure_set_only_the_kept_sweeps_and_no_report(
        tmp_path, monkeypatch):
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    monkeypatch.setattr(S3, "experiments", _tiny_plan)
    outcome = S3.run(tmp_path, quick=True, jobs=2, progress=False, log=lambda _: None, part=S3.OPTIONS,
                     transform=lambda exp: sens.with_figure(exp, KEY, 5000.0), keep={S3.TIMESTAMPS},
                     report=False)
    assert outcome.skipped == [S3.MTU_SACK] and outcome.report_files == []
    assert not (tmp_path / "report").exists()
    assert sorted(p.name for p in (tmp_path / "sweeps").iterdir()) == [f"{S3.TIMESTAMPS}.base.toml",
                                                                        f"{S3.TIMESTAMPS}.sweep.toml"]
    base = tomllib.loads((tmp_path / "sweeps" / f"{S3.TIMESTAMPS}.base.toml").read_text(encoding="utf-8"))
    for node in ("sender", "receiver"):
        assert base["energy"][node]["cpu"]["cycles"]["paws_check"] == 5000.0, node
    stored = load_runs(tmp_path / "runs.duckdb")
    assert set(stored["sweep"]) == {S3.TIMESTAMPS} and len(stored) == 4 * 2
    assert set(stored["energy.sender"]) == {f"{S3.DEVICE}+{KEY}=5000"}
    c04 = next(r for r in outcome.claims if r["id"] == "S003-C04")
    assert c04["sweeps"] == [S3.TIMESTAMPS]


def test_a_claim_wrongly_declared_independent_of_the_profile_stops_the_sweep_with_exit_1(swept, monkeypatch):
    from typer.testing import CliRunner

    from tcpenergy.cli import app
    from tcpenergy.reproduce.seed003 import claims as seed003_claims

    out, _ = swept
    before = (out / "sensitivity" / KEY / "sensitivity.json").read_bytes()
    monkeypatch.setattr(S3, "experiments", _tiny_plan)
    monkeypatch.setattr(seed003_claims, "ENERGY_CLAIMS", seed003_claims.ENERGY_CLAIMS - {"S003-C04"})
    result = CliRunner().invoke(app, ["reproduce", "seed-003", "--quick", "--out", str(out), "--jobs", "2",
                                      "--sensitivity", KEY, "--values", "100000"])  # resumes: no new run
    assert result.exit_code == 1
    assert f"S003-C04 does_not_hold at {sens.figure_text(PAWS)} but holds at 100,000" in result.output
    assert (out / "sensitivity" / KEY / "sensitivity.json").read_bytes() == before  # nothing half-written
