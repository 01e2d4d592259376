"""The 2020 phones on LTE and 5G NSA (docs/models/cellular.md#reading-narayanan): the estimators
that read their figures out of the data Narayanan et al. (SIGCOMM 2021) released recover a known
machine and a known power model, and the profiles built from them behave as their fits say."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcpenergy import api, devices
from tcpenergy.calibration import narayanan2021 as derive

REPO = Path(__file__).resolve().parents[1]
DOWNLOAD_5G = REPO / "scenarios" / "phone-5g-download.toml"
PHONES = ("narayanan2021-lte-phone", "narayanan2021-5g-nsa-lowband-phone", "narayanan2021-5g-nsa-mmwave-phone")


def _probe_replies(base_ms, drx_ms, cr_ms, tail_ms, paging_ms, promotion_ms, seed=1):
    """RRC-Probe as its phone would answer a machine with these timers: each probe arrives
    `interval` after the previous reply, which left right after a DRX on-duration (connected) or
    a paging occasion plus the promotion (idle); a few ms of jitter."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(200):
        iv = 100 * k
        if iv <= cr_ms:
            wait = 0
        elif iv < tail_ms:
            wait = (-iv) % drx_ms
        else:
            wait = (-(iv + promotion_ms)) % paging_ms + promotion_ms
        for _ in range(5):
            rtt = base_ms + wait + rng.normal(0, 3)
            rows.append({"interval": iv / 1000, "RTT1": rtt, "RTT2": rtt + 1, "KeepOrDrop": "YEP"})
    # Probes the authors dropped (other traffic in between) must not count.
    rows.append({"interval": 5.0, "RTT1": 5000, "RTT2": 5000, "KeepOrDrop": "BAD"})
    return pd.DataFrame(rows)


def test_probe_timers_recover_a_known_machine_from_its_replies(tmp_path):
    # The sawtooths of Narayanan et al. 2021 §4.2 (RRC-Probe): DRX before the inactivity timer,
    # paging plus promotion after it.
    trace = tmp_path / "probe.csv"
    _probe_replies(base_ms=60, drx_ms=320, cr_ms=300, tail_ms=10_200, paging_ms=1280, promotion_ms=300).to_csv(trace)
    t = derive.probe_timers(derive.read_probe(trace))
    assert t.tail_s == pytest.approx(10.2)
    # Misclassified: only the idle replies whose wait (page + promotion) is within the margin.
    quick = sum(1 for k in range(102, 200) if (-(100 * k + 300)) % 1280 + 300 <= derive.IDLE_MARGIN_MS)
    assert abs(t.misclassified - quick) <= 1, (t.misclassified, quick)
    assert t.drx.cycle_ms == 320
    assert t.paging.cycle_ms == 1280
    assert t.promotion_ms == pytest.approx(300, abs=5)
    assert t.continuous_reception_ms == 300
    # Each fit explains its sawtooth far better than a flat line would.
    assert t.paging.residual_ms < t.paging.flat_residual_ms / 10
    assert t.drx.residual_ms < t.drx.flat_residual_ms / 10


@pytest.mark.parametrize("drx_ms, tail_ms", [(80, 10_200), (320, 5_100)])
def test_probe_timers_follow_the_drx_cycle_and_the_timer(tmp_path, drx_ms, tail_ms):
    trace = tmp_path / "probe.csv"
    _probe_replies(60, drx_ms, 300, tail_ms, 1280, 350, seed=drx_ms).to_csv(trace)
    t = derive.probe_timers(derive.read_probe(trace))
    assert (t.drx.cycle_ms, t.tail_s) == (drx_ms, tail_ms / 1000)


def test_power_model_recovers_huangs_linear_model_from_per_second_samples():
    # Huang et al. 2012 §4's model P = beta + alpha_u t_u + alpha_d t_d, fitted as Narayanan et
    # al.'s controlled transfers give it: one direction at a time, per-second power.
    rng = np.random.default_rng(7)
    beta, au, ad = 5300.0, 11.4, 1.66
    rows = []
    for direction, alpha, rates in (("downlink", ad, (1, 100, 500, 1000, 2000)), ("uplink", au, (1, 50, 100, 200))):
        for r in rates:
            for _ in range(50):
                thr = r * rng.uniform(0.97, 1.0)
                rows.append({"network type": "mmwave", "direction": direction, "throughput": thr,
                             "avg_power": beta + alpha * thr + rng.normal(0, 30)})
    rows.append({"network type": "LTE", "direction": "uplink", "throughput": 10.0, "avg_power": 1e6})
    m = derive.power_model(pd.DataFrame(rows), "mmwave")
    assert m.samples == 450
    assert m.beta_mw == pytest.approx(beta, rel=0.01)
    assert m.alpha_u_mw_per_mbps == pytest.approx(au, rel=0.03)
    assert m.alpha_d_mw_per_mbps == pytest.approx(ad, rel=0.03)
    assert m.r2 > 0.99


def test_the_derivation_refuses_a_directory_that_is_not_the_artifact(tmp_path, capsys):
    assert derive.main([str(tmp_path)]) == 1
    out = capsys.readouterr()
    assert "does not look like the artifact" in out.err and not out.out
    assert derive.main([]) == 2
    assert "usage:" in capsys.readouterr().err


def test_5g_phone_profiles_list_every_figure_with_a_source_and_mark_the_estimates():
    for name in PHONES:
        figures = devices.figures(devices.get(name))
        assert all(f.source for f in figures), [f.key for f in figures if not f.source]
        by_key = {f.key: f for f in figures}
        # Measured: the fitted power model and the probe's timers. Estimated: what the release lacks.
        for key in ("radio.tx_power_w", "radio.rrc.downlink_j_per_mbit", "radio.wake_time",
                    "radio.rrc.tail.1.duration", "radio.rrc.tail.1.drx.cycle", "radio.rrc.paging.cycle"):
            assert not by_key[key].estimated and "Narayanan" in by_key[key].source, (name, key)
        for key in ("platform.base_power_w", "radio.idle_power_w", "radio.wake_power_w", "radio.rrc.tail.0.duration"):
            assert by_key[key].estimated, (name, key)


def _per_bit(profile, rate, size):
    r = api.run(DOWNLOAD_5G, **{"energy.receiver": profile, "path.forward.rate": rate,
                                "traffic.bytes": size, "energy.after_completion": "0s"})
    assert r["complete"]
    e = r["energy"]["receiver"]
    assert math.isclose(sum(e["breakdown_j"].values()), e["total_j"], rel_tol=1e-12)
    return e["per_bit_total_uj"]


def test_mmwave_costs_less_per_bit_than_lte_at_their_own_rates_and_more_at_the_same_low_rate():
    # The fits (Narayanan et al. 2021 §4.3 data): mmWave's connected power is about 6x LTE's and
    # its per-Mbit cost about 7x smaller, so it wins only when its rate pays for its power.
    mmwave, lte = "narayanan2021-5g-nsa-mmwave-phone", "narayanan2021-lte-phone"
    assert _per_bit(mmwave, "1Gbps", "50MB") < _per_bit(lte, "60Mbps", "50MB")
    assert _per_bit(mmwave, "10Mbps", "5MB") > _per_bit(lte, "10Mbps", "5MB")


def _web_keepalive():
    """scenarios/phone-web-keepalive.toml as a table, to be changed."""
    import tomllib

    return tomllib.loads((REPO / "scenarios" / "phone-web-keepalive.toml").read_text())


def _mmwave_phone_with_tail(name, tail):
    """The mmWave phone under another name, with the tail states given (its own tail and more)."""
    base = devices.get("narayanan2021-5g-nsa-mmwave-phone")
    phone = copy.deepcopy({k: v for k, v in base.items() if k not in ("estimated", "sources")})
    phone["name"] = name
    phone["radio"]["rrc"]["tail"] = tail(phone["radio"]["rrc"]["tail"], phone["radio"]["tx_power_w"])
    return phone


def _keepalive_phone(profile):
    # The keep-alive of scenarios/phone-web-keepalive.toml alone, every 15 s: longer than the
    # 10.2 s connected tail, shorter than the tail plus a 20 s RRC_INACTIVE.
    scenario = _web_keepalive()
    scenario["flows"] = [f for f in scenario["flows"] if f["name"] == "keepalive"]
    scenario["flows"][0]["traffic"]["interval"] = "15s"
    scenario["nodes"]["phone"] = {"profile": profile}
    return api.run(scenario)["nodes"]["phone"]


def test_keepalives_that_find_the_radio_in_rrc_inactive_pay_a_resume_instead_of_a_promotion():
    # 3GPP TS 38.331 §5.3.13: a resume from RRC_INACTIVE instead of a setup from RRC_IDLE. The
    # mmWave phone, with an RRC_INACTIVE of illustrative figures (none published are at hand)
    # after its connected tail: 20 s, RAN paging every 1.28 s, a 80 ms resume at beta.
    with_inactive = _mmwave_phone_with_tail("mmwave-phone-with-inactive", lambda tail, beta: tail + [
        {"state": "rrc_inactive", "duration": "20s", "power_w": 0.0,
         "drx": {"cycle": "1280ms", "on": "1ms", "power_w": 0.0},
         "resume": {"delay": "80ms", "power_w": beta}}])
    idle = _keepalive_phone("narayanan2021-5g-nsa-mmwave-phone")
    resumed = _keepalive_phone(with_inactive)
    # Eight keep-alives (2 s, 17 s, ..., 107 s): the first from RRC_IDLE, the other seven 15 s
    # after the last: a promotion each without RRC_INACTIVE, a resume each with it.
    promotion = 0.365
    assert idle["radio_wakeups"] == resumed["radio_wakeups"] == 8
    assert idle["radio_waking_s"] == pytest.approx(8 * promotion, abs=1e-9)
    assert resumed["radio_waking_s"] == pytest.approx(promotion + 7 * 0.080, abs=1e-9)
    # RRC_INACTIVE draws nothing here but keeps the radio out of RRC_IDLE for 20 s after each tail.
    assert resumed["radio_sleep_s"] < idle["radio_sleep_s"] - 7 * 4.0


def test_kernel_tcp_to_a_phone_in_rrc_inactive_resumes_once_per_burst_as_the_simulated_linux_stack_does():
    # Kernel mode (docs/emulation.md) through the same gate: 30 kB every 1.5 s to a phone whose
    # connected tail is 200 ms and whose RRC_INACTIVE lasts 2 s (illustrative timers). Each
    # burst after the first finds it inactive and pays one 80 ms resume, in the kernel as in
    # the simulator's Linux stack (whose ACKs, unlike the textbook stack's 200 ms delayed ACK,
    # all leave within the 200 ms tail: docs/models/cellular.md#tests).
    from tcpenergy.emulate.run import emulate

    phone = _mmwave_phone_with_tail("short-timers", lambda _, beta: [
        {"state": "continuous_reception", "duration": "200ms", "power_w": beta},
        {"state": "rrc_inactive", "duration": "2s", "power_w": 0.0,
         "drx": {"cycle": "320ms", "on": "1ms", "power_w": 0.0},
         "resume": {"delay": "80ms", "power_w": beta}},
    ])
    scenario = _web_keepalive()
    scenario.update(name="inactive-bursts", stop_after="6s")
    scenario["nodes"]["phone"] = {"profile": phone}
    scenario["flows"] = [{"name": "web", "from": "server", "to": "phone", "transport": "tcp",
                          "traffic": {"kind": "on_off", "message": 30000, "interval": "1500ms", "distribution": "fixed"},
                          "start": "500ms", "stop": "5s"}]
    scenario["tcp"] = {"stack": "linux-6"}
    simulated = api.run(scenario)
    kernel = emulate(scenario, lag_bound_ms=20.0)
    assert kernel["complete"], kernel.get("stop")
    # Three bursts, 1.5 s apart: a promotion from RRC_IDLE, then two resumes.
    for record in (simulated, kernel):
        node = record["nodes"]["phone"]
        assert record["flows"][0]["bytes_delivered"] == 90_000
        assert node["radio_wakeups"] == 3, node["radio_wakeups"]
        assert node["radio_waking_s"] == pytest.approx(0.365 + 2 * 0.080, abs=1e-6)
