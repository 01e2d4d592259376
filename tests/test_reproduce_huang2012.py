"""`tcpenergy reproduce huang-2012` (Huang et al., MobiSys 2012: LTE, 3G and Wi-Fi transfer energy
with promotion and tail; LTE's tail timer): end to end in quick mode, the setup's readings, and
each claim's rule judged on crafted runs that satisfy the claim and on runs that violate it."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from reproduce_support import quick_reproduction
from tcpenergy.reproduce import claims as C
from tcpenergy.reproduce import readings
from tcpenergy.reproduce import rules as R
from tcpenergy.reproduce import huang2012 as H
from tcpenergy.reproduce.huang2012 import claims as E
from tcpenergy.topology import duration_ns

IDS = [f"H12-C{i:02d}" for i in range(1, 7)]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    return quick_reproduction(tmp_path_factory, "huang-2012")


def test_quick_reproduction_judges_all_six_claims_with_evidence_and_a_report(quick_run):
    out, result = quick_run
    assert result.exit_code == 0, result.output
    records = {r["id"]: r for r in json.loads((out / "claims.json").read_text(encoding="utf-8"))}
    assert sorted(records) == IDS
    for r in records.values():
        assert r["status"] in C.STATUSES and r["evidence"], r
        if r["status"] != C.HOLDS:
            assert r["explanation"], r
    # The ratio over real users' traces needs the paper's traces: the only claim outside the model.
    assert [i for i, r in records.items() if r["status"] == C.NOT_MODELLED] == ["H12-C05"]
    for cid in ("H12-C01", "H12-C02", "H12-C03", "H12-C04", "H12-C06"):
        assert records[cid]["runs"] == records[cid]["complete"] > 0, cid
    md = (out / "report" / "report.md").read_text(encoding="utf-8")
    assert "Claims checklist" in md and "## Tail timer" in md and "## Transfers" in md


def test_rules_cover_every_claim_and_none_needs_code():
    ids = {e["id"] for e in C.load_claims(H.CLAIMS)}
    ruleset = R.load_rules(H.RULES)
    assert set(ruleset.rules) == ids == set(IDS)
    assert not E.CODE and not any(getattr(r, "code", None) for r in ruleset.rules.values())


# --------------------------------------------------------------------------------------------
# The setup
# --------------------------------------------------------------------------------------------

def under(**overrides):
    """The huang-2012 readings in force: the taken ones, with ``overrides`` (key -> alternative)."""
    return readings.active(readings.check(H.PAPER_ID, H.__name__, {k.replace("_", "-"): v for k, v in overrides.items()}))


def _tail_s(profile) -> float:
    return sum(duration_ns(stage["duration"]) for stage in profile["radio"]["rrc"]["tail"]) / 1e9


def test_table1_tail_timer_gives_the_profiles_own_long_drx_stage_huang2012_table1():
    """T_tail = 11.576 s from the last packet (Table 1): the long-DRX stage set for it is the
    profile's own, so the sweep's longest timer is the paper's."""
    profile = H.lte_profile()
    assert H.long_drx_duration(11.576, profile) == "11456000us"
    assert profile["radio"]["rrc"]["tail"][2]["duration"] == "11456ms"
    with pytest.raises(ValueError, match="longer than the stages before long DRX"):
        H.long_drx_duration(0.1, profile)


def test_every_download_is_metered_past_each_radios_whole_tail_huang2012_s3():
    """The paper charges a transfer its tail: the meter must run past the longest tail of the
    three phones (LTE's 11.576 s), whichever radio the transfer uses."""
    after = duration_ns(H.AFTER_COMPLETION) / 1e9
    for tech, name in H.PROFILES.items():
        base = H.transfer_base(tech)
        assert base["energy"]["receiver"] == name and base["energy"]["sender"] == H.SERVER
        assert after > _tail_s(H.common.profile_table(name)), tech
    assert duration_ns(H.TAIL_AFTER) / 1e9 >= max(H.TAIL_S)


def test_link_rates_follow_the_reading_and_lte_keeps_its_measured_13_and_6_mbit():
    for alt in ("mid", "low", "high"):
        with under(link_rates=alt):
            rates = {t: (H.transfer_base(t)["path"]["forward"]["rate"], H.transfer_base(t)["path"]["reverse"]["rate"])
                     for t in H.PROFILES}
        assert rates == H.LINK_RATES[alt]
        assert rates["lte"] == ("13Mbps", "6Mbps")


def test_tail_traffic_reading_chooses_the_flows_and_the_phone_leads_the_first_flow():
    with under():
        flows = [f["name"] for f in H.tail_base()["flows"]]
        first = H.experiments(quick=True)[0]
    assert flows == ["keepalive", "web"]
    assert first.name == H.TAIL and first.base["flows"][0]["from"] == "phone"
    with under(tail_traffic="keepalive"):
        assert [f["name"] for f in H.tail_base()["flows"]] == ["keepalive"]


def test_a_transfer_is_charged_its_promotion_data_and_tail_by_the_reading_transfer_energy():
    """The paper's decomposition of a transfer's energy (reading transfer-energy, taken): RRC_IDLE
    before the first packet and the phone's base power are left out; the alternatives add them."""
    parts = {"radio_tx": 0.1, "radio_rx": 1.0, "radio_idle": 12.0, "radio_sleep": 0.5, "radio_transitions": 0.3}
    row = {"sweep": f"{H.TRANSFER}-lte", "label.traffic.bytes": 1_000_000, "flow.bytes_delivered": 1_000_000,
           "energy.receiver.total_j": 14.2, "energy.receiver.radio_idle_s": 11.6, "energy.receiver.radio_wakeups": 1,
           **{f"energy.receiver.breakdown_j.{k}": v for k, v in parts.items()}}
    expected = {"promotion-data-tail": 13.4, "radio": 13.9, "phone": 14.2}
    for alt, joules in expected.items():
        with under(transfer_energy=alt):
            out = H.add_metrics(pd.DataFrame([row])).iloc[0]
        assert out["huang.transfer_j"] == pytest.approx(joules), alt
        assert out["huang.uj_per_bit"] == pytest.approx(joules / 8e6 * 1e6), alt
    assert (out["huang.tech"], out["huang.size_mb"], out["huang.size_class"], out["huang.promotions"]) == ("lte", 1.0, "mid", 1)


def test_a_sensitivity_sweep_takes_the_lte_phone_as_its_reference_profile():
    """`--sensitivity KEY` reads its reference from the first experiment's first flow's source:
    the tail-timer sweep comes first and its first flow leaves the phone."""
    from tcpenergy.reproduce import sensitivity

    _, reference, values, _ = sensitivity.plan(H.PAPER_ID, "radio.idle_power_w", [0.5], quick=True)
    assert reference["name"] == H.PROFILES["lte"]
    assert values == [0.5, reference["radio"]["idle_power_w"]]


# --------------------------------------------------------------------------------------------
# Each rule on crafted runs: it holds where the claim holds and fails where the claim fails
# --------------------------------------------------------------------------------------------

SEEDS = (1, 2, 3)
SIZES = (10_000, 100_000, 1_000_000, 10_000_000, 50_000_000)
# Crafted radios (not the model's results): promotion and tail energy (J), data energy per MB (J).
RADIOS = {"lte": (0.3, 12.0, 1.4), "3g": (0.4, 7.0, 5.7), "wifi": (0.01, 0.06, 1.3)}
TAILS = (1.0, 3.0, 5.0, 8.0, 11.576)


def crafted() -> pd.DataFrame:
    """Runs whose figures satisfy every claim: a short download costs LTE the most, bulk per bit
    orders 3G > LTE > Wi-Fi, the tail dominates a short LTE download, and a longer tail timer
    costs energy and saves promotions."""
    rows = []
    for tech, (promotion, tail, per_mb) in RADIOS.items():
        for size in SIZES:
            data = per_mb * size / 1e6
            for seed in SEEDS:
                energy = promotion + tail + data
                rows.append({"sweep": f"{H.TRANSFER}-{tech}", "seed": seed, "status": "ok", "complete": True,
                             "label.traffic.bytes": size, "huang.tech": tech, "huang.size_mb": size / 1e6,
                             "huang.size_class": H.size_class(size), "huang.transfer_j": energy,
                             "huang.promotion_j": promotion, "huang.tail_j": tail, "huang.data_j": data,
                             "huang.tail_s": 10.0, "huang.radio_j": energy, "flow.goodput_bps": 1e7,
                             "huang.uj_per_bit": energy / (size * 8) * 1e6})
    for t in TAILS:
        for seed in SEEDS:
            rows.append({"sweep": H.TAIL, "seed": seed, "status": "ok", "complete": True,
                         f"label.{H.TAIL_KEY}": f"{t}s", "huang.t_tail_s": t,
                         "huang.radio_j": 10.0 + 7.0 * t + 0.1 * seed, "huang.promotions": 9.0 - 0.4 * t})
    return pd.DataFrame(rows)


def set_where(frame: pd.DataFrame, column: str, value, **where) -> pd.DataFrame:
    frame = frame.copy()
    mask = pd.Series(True, index=frame.index)
    for key, want in where.items():
        mask &= frame[key.replace("__", ".")] == want
    frame.loc[mask, column] = value
    return frame


def verdict(cid: str, frame: pd.DataFrame) -> str:
    entry = next(e for e in C.load_claims(H.CLAIMS) if e["id"] == cid)
    return E.evaluate(frame, [entry])[0]["status"]


def short_energy_above_lte(frame, tech):
    """``tech``'s short downloads cost more than LTE's; the third radio stays below LTE."""
    lte = frame[(frame["huang.tech"] == "lte") & (frame["huang.size_class"] == "short")]["huang.transfer_j"].max()
    return set_where(frame, "huang.transfer_j", lte * 2, huang__tech=tech, huang__size_class="short")


VIOLATIONS = {
    "H12-C01": {
        "3G above LTE": lambda f: short_energy_above_lte(f, "3g"),
        "Wi-Fi above LTE": lambda f: short_energy_above_lte(f, "wifi"),
        "LTE tied with 3G within 1 %": lambda f: set_where(
            f, "huang.transfer_j", f[(f["huang.tech"] == "3g") & (f["huang.size_mb"] == 0.01)]["huang.transfer_j"].iloc[0]
            * 1.005, huang__tech="lte", huang__size_mb=0.01),
        "no short download run": lambda f: f[f["huang.size_class"] != "short"],
    },
    "H12-C02": {
        "LTE above 3G per bit": lambda f: set_where(f, "huang.uj_per_bit", 10.0, huang__tech="lte", huang__size_mb=50),
        "LTE below Wi-Fi per bit": lambda f: set_where(f, "huang.uj_per_bit", 1e-3, huang__tech="lte", huang__size_mb=10),
        "no bulk download run": lambda f: f[f["huang.size_class"] != "bulk"],
    },
    "H12-C03": {
        "promotion above the tail": lambda f: set_where(f, "huang.promotion_j", 20.0, huang__tech="lte"),
        "data above the tail": lambda f: set_where(f, "huang.data_j", 20.0, huang__tech="lte", huang__size_mb=0.1),
    },
    "H12-C04": {
        "energy flat in T_tail": lambda f: set_where(f, "huang.radio_j", 50.0, sweep=H.TAIL),
        "energy falls at one step": lambda f: set_where(f, "huang.radio_j", 5.0, sweep=H.TAIL, huang__t_tail_s=5.0),
        "promotions flat (every gap longer than any timer)": lambda f: set_where(f, "huang.promotions", 4.0,
                                                                                    sweep=H.TAIL),
    },
    "H12-C06": {
        "per bit rises at one step": lambda f: set_where(f, "huang.uj_per_bit", 100.0, huang__tech="lte",
                                                         huang__size_mb=1),
        "per bit flat at the bulk end": lambda f: set_where(f, "huang.uj_per_bit", 0.5, huang__tech="lte",
                                                            huang__size_class="bulk"),
    },
}


@pytest.mark.parametrize("cid", sorted(VIOLATIONS))
def test_each_rule_holds_on_runs_satisfying_its_claim(cid):
    assert verdict(cid, crafted()) == C.HOLDS


@pytest.mark.parametrize("cid, case", [(cid, case) for cid, cases in sorted(VIOLATIONS.items()) for case in cases])
def test_each_rule_fails_on_runs_violating_its_claim(cid, case):
    assert verdict(cid, VIOLATIONS[cid][case](crafted())) == C.DOES_NOT_HOLD, case


def test_the_users_traces_ratio_is_not_modelled_with_its_reason():
    entry = next(e for e in C.load_claims(H.CLAIMS) if e["id"] == "H12-C05")
    record = E.evaluate(crafted(), [entry])[0]
    assert record["status"] == C.NOT_MODELLED and "traces" in record["explanation"]
