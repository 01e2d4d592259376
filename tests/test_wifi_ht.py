"""802.11n and 802.11ac channels from the front end (docs/models/wifi.md "802.11n and 802.11ac
PHY timing", "A-MPDU and block ack", "Adaptive power save", "Radios on 802.11n and 802.11ac
channels"): the phone scenario's record, the keys as `--set` overrides, bad settings as one line
naming the key, and the 802.11n laptop card's energy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tcpenergy
from tcpenergy import devices

REPO = Path(__file__).resolve().parents[1]
PHONE = REPO / "scenarios" / "wifi-ac-phone.toml"
LAPTOP = REPO / "scenarios" / "wifi-n-laptop.toml"


def run_json(cli, *args):
    result = cli("run", PHONE, "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_phone_scenario_aggregates_and_its_phone_sleeps_after_its_tail(cli):
    r = run_json(cli)
    ch = r["channels"]["bss"]
    # 80 MHz, one stream, MCS 9, short GI: 234 x 8 x 5/6 = 1560 bits per 3.6 us symbol.
    assert (ch["standard"], ch["data_rate_bps"]) == ("802.11ac", 433_333_333)
    assert ch["ampdus_sent"] > 0 and ch["block_acks_sent"] > 0
    assert ch["ampdu_mpdus"] / ch["ampdus_sent"] > 10
    assert ch["stations"]["phone"]["nulls_sent"] >= 1
    assert r["flows"][0]["bytes_delivered"] == 10_000_000
    phone = r["nodes"]["phone"]
    assert phone["radio_sleep_s"] > 0.5 * r["energy"]["window_s"]
    assert phone["breakdown_j"]["mac_control"] > 0


def test_turning_aggregation_off_slows_the_download(cli):
    on = run_json(cli)
    off = run_json(cli, "--set", "channels.0.ampdu=false")
    assert "ampdus_sent" not in off["channels"]["bss"]
    assert off["flows"][0]["completion_s"] > 2 * on["flows"][0]["completion_s"]


@pytest.mark.parametrize("override, key, text", [
    pytest.param("channels.0.mcs=10", "channels.0.mcs", "must be 0-9", id="mcs"),
    pytest.param('channels.0.bandwidth="160MHz"', "channels.0.bandwidth", '"80MHz"', id="bandwidth"),
    pytest.param("channels.0.spatial_streams=0", "channels.0.spatial_streams", "1-4", id="streams"),
    pytest.param('channels.0.guard_interval="800"', "channels.0.guard_interval", '"short"', id="gi"),
    pytest.param("channels.0.ampdu_max_mpdus=100", "channels.0.ampdu_max_mpdus", "1-64", id="ampdu"),
    pytest.param('channels.0.data_rate="54Mbps"', "channels.0.data_rate", "433333333bps (mcs 9)", id="rate"),
    pytest.param('channels.0.psm_timeout="soon"', "channels.0.psm_timeout", "", id="timeout"),
])
def test_bad_ht_settings_exit_2_with_one_line_naming_the_key(cli, override, key, text):
    result = cli("validate", PHONE, "--set", override)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {key}:"), result.stderr
    assert text in lines[0], lines[0]


def test_an_80211n_card_saturated_by_a_download_draws_between_its_idle_and_transmit_power_halperin_2010():
    # Halperin et al., HotPower 2010, single antenna, as ns-3's WifiRadioEnergyModel restates it:
    # 1.14 W transmit, 0.94 W receive, 0.82 W idle (docs/models/profiles.md#halperin2010-80211n-nic).
    radio = devices.get("halperin2010-80211n-nic")["radio"]
    assert (radio["tx_power_w"], radio["rx_power_w"], radio["idle_power_w"]) == (1.14, 0.94, 0.82)
    r = tcpenergy.run(LAPTOP, **{"energy.radio_policy": "always_on"})
    assert r["flows"][0]["bytes_delivered"] == 10_000_000
    assert r["channels"]["bss"]["data_rate_bps"] == 65_000_000  # HT20, one stream, MCS 7, long GI
    laptop = r["nodes"]["laptop"]
    window = r["energy"]["window_s"]
    # The card alone: no base power, no CPU, and with the radio always on it never sleeps.
    assert laptop["breakdown_j"]["base"] == laptop["breakdown_j"]["cpu"] == 0.0
    assert laptop["radio_sleep_s"] == laptop["radio_waking_s"] == 0.0
    assert laptop["radio_rx_s"] > 0.2 * window  # the download kept it receiving
    total = laptop["total_j"]
    assert radio["idle_power_w"] * window < total < radio["tx_power_w"] * window
    # Each second of the window is charged at the state's power, from the record's own times.
    rx_s = laptop["radio_rx_s"] + laptop["radio_overhear_s"]
    expected = (radio["tx_power_w"] * laptop["radio_tx_s"] + radio["rx_power_w"] * rx_s
                + radio["idle_power_w"] * laptop["radio_idle_s"])
    assert total == pytest.approx(expected, rel=1e-9)
