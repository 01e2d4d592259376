"""Cellular radios with an RRC state machine (docs/models/cellular.md; Huang et al., MobiSys 2012):
the machine delays the frames that find the radio idle and charges its tail, in both scenario
forms and in kernel mode; bad timers and bad placements are refused naming the key."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import pytest

from tcpenergy import api, devices, toml_writer
from tcpenergy.emulate.run import emulate

REPO = Path(__file__).resolve().parents[1]
DOWNLOAD = REPO / "scenarios" / "phone-bulk-download.toml"
WEB = REPO / "scenarios" / "phone-web-keepalive.toml"

# Huang et al. 2012 Tables 1 and 3 (LTE): promotion 260.1 ms, tail 11.576 s after the last packet.
LTE_PROMOTION_S = 0.2601
LTE_TAIL_S = 11.576


def run(path, **overrides):
    return api.run(path, **overrides)


def test_a_download_to_an_idle_lte_phone_waits_one_promotion_and_is_charged_its_tail():
    # The server's SYN finds the phone in RRC_IDLE: it waits for a paging occasion (one begins at
    # 0, 43.2 ms long: the SYN reaches the radio at 35 ms, inside it) and the promotion. The
    # rest of the transfer keeps the radio connected; after it the tail runs its 11.576 s
    # within the 12 s the meter goes on for.
    phone = run(DOWNLOAD)
    wired = run(DOWNLOAD, **{"energy.receiver": "wired-host"})
    delay = phone["flow"]["completion_s"] - wired["flow"]["completion_s"]
    assert LTE_PROMOTION_S <= delay < LTE_PROMOTION_S + 0.1, delay
    e = phone["energy"]["receiver"]
    assert e["radio_wakeups"] == 1
    assert e["radio_waking_s"] == pytest.approx(LTE_PROMOTION_S, abs=1e-9)
    assert phone["energy"]["window_s"] == pytest.approx(phone["flow"]["completion_s"] + 12.0, abs=1e-9)
    assert LTE_TAIL_S <= e["radio_idle_s"] < 12.0
    # The tail is most of the energy of a 1 MB download (Huang et al. 2012 §5: the tail dominates
    # short transfers).
    assert e["breakdown_j"]["radio_idle"] > 0.5 * e["total_j"]
    assert math.isclose(sum(e["breakdown_j"].values()), e["total_j"], rel_tol=1e-12)
    window = phone["energy"]["window_s"]
    states = ("radio_tx_s", "radio_rx_s", "radio_idle_s", "radio_sleep_s", "radio_waking_s")
    assert math.isclose(sum(e[k] for k in states), window, rel_tol=1e-9)


def test_without_metering_after_completion_the_tail_is_cut_at_completion():
    e = run(DOWNLOAD, **{"energy.after_completion": "0s"})["energy"]["receiver"]
    assert e["radio_idle_s"] < 1.0


def test_the_same_seed_gives_the_same_cellular_record():
    assert run(WEB) == run(WEB)


@pytest.mark.parametrize("interval, connected_throughout", [("10s", True), ("120s", False)])
def test_a_keepalive_more_frequent_than_the_tail_keeps_the_radio_connected(interval, connected_throughout):
    # Huang et al. 2012 §5: traffic spaced closer than the tail timer never lets the radio idle.
    # Every 10 s (< 11.576 s) the phone is promoted once and stays connected; every 120 s it
    # idles between bursts and is promoted again for each.
    r = run(WEB, **{"flows.1.traffic.interval": interval})
    phone = r["nodes"]["phone"]
    if connected_throughout:
        assert phone["radio_wakeups"] == 1
        # Idle only at the start: the run starts in RRC_IDLE and the first page comes at the
        # paging occasion of 1280.2 ms (the first packet, at 1 s, waits for it).
        assert phone["radio_sleep_s"] == pytest.approx(1.2802, abs=1e-9)
    else:
        assert phone["radio_wakeups"] >= 3
        assert phone["radio_sleep_s"] > 30.0


def test_phone_profiles_list_every_rrc_figure_with_its_source():
    for name in ("huang2012-lte-phone", "huang2012-3g-phone", "huang2012-wifi-phone"):
        figures = devices.figures(devices.get(name))
        rrc = [f for f in figures if f.key.startswith("radio.rrc.")]
        assert any(f.key == "radio.rrc.tail.0.duration" for f in rrc), name
        assert all(f.source and "Huang" in f.source for f in rrc), [f.key for f in rrc if not f.source]


def _lte_inline():
    return copy.deepcopy(devices.get("huang2012-lte-phone"))


def test_a_negative_timer_is_refused_naming_the_key(cli, tmp_path):
    profile = _lte_inline()
    profile["radio"]["rrc"]["tail"][0]["duration"] = "-100ms"
    bad = tmp_path / "bad-phone.toml"
    bad.write_text(toml_writer.dumps(profile))
    out = tmp_path / "trace.csv"
    result = cli("run", DOWNLOAD, "--set", f'energy.receiver="{bad}"', "--trace", out)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: energy.receiver: ")
    assert "radio.rrc.tail.0.duration" in result.stderr and "invalid duration" in result.stderr
    assert not out.exists()


def test_a_cellular_radio_on_an_80211_channel_is_refused_naming_the_member(cli):
    result = cli("run", REPO / "scenarios" / "wifi-psm.toml", "--set", 'nodes.laptop.profile="huang2012-lte-phone"')
    assert result.exit_code == 2, result.output
    assert "channels.0.nodes.1" in result.stderr and "RRC" in result.stderr


def test_kernel_tcp_to_an_lte_phone_waits_for_the_promotion_and_meters_the_tail():
    # Kernel mode drives the machine's own TCP through the same gated link (docs/emulation.md):
    # the transfer starts only after the promotion, and the meter runs on for the tail.
    overrides = [("traffic.bytes", "300kB"), ("energy.after_completion", "1s")]
    record = emulate(str(DOWNLOAD), overrides=overrides, lag_bound_ms=20.0)
    assert record["complete"], record.get("stop")
    e = record["energy"]["receiver"]
    assert e["radio_wakeups"] == 1
    assert e["radio_waking_s"] == pytest.approx(LTE_PROMOTION_S, abs=1e-6)
    assert record["flow"]["completion_s"] > LTE_PROMOTION_S
    assert e["radio_idle_s"] >= 0.9


def test_a_phones_own_capture_metered_as_lte_gives_back_its_promotion_and_tail(tmp_path):
    # `tcpenergy analyze` (docs/models/cellular.md, "From a capture"): the frames of a capture
    # taken at the phone, over the run's window, lay out the same machine: the promotion before
    # the first frame, the tail after the last. A captured frame is an instant on the air and
    # the waits at the base station are not in a capture, so the connected time and the energy
    # agree to within the frames' airtime (under 1 %), not exactly.
    from tcpenergy.emulate.capture_energy import analyze
    record = api.run(DOWNLOAD, node_pcap=tmp_path)
    ran = record["energy"]["receiver"]
    seen = analyze(tmp_path / "receiver.pcap", "huang2012-lte-phone", "10.0.0.2",
                   window=(0, record["energy"]["window_s"]))["energy"]
    assert seen["radio_wakeups"] == ran["radio_wakeups"] == 1
    assert seen["radio_waking_s"] == pytest.approx(ran["radio_waking_s"], abs=1e-9)
    assert seen["radio_rx_bytes"] == ran["radio_rx_bytes"]
    connected = lambda e: e["radio_tx_s"] + e["radio_rx_s"] + e["radio_idle_s"]
    assert connected(seen) == pytest.approx(connected(ran), rel=0.01)
    assert seen["total_j"] == pytest.approx(ran["total_j"], rel=0.01)
