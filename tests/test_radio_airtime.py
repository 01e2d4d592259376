"""The radio PHY of the built-in profiles (docs/models/profiles.md, "Radio PHY"), as
`tcpenergy profiles NAME` shows it, and the frame counts of the energy record."""

from __future__ import annotations

import tcpenergy
from tcpenergy import devices

WAVELAN_80211B = ("singh2002-toshiba-wavelan", "agrawal2003-samsung-wavelan-turbo")


def _figures(name: str) -> dict:
    return {f.key: f for f in devices.figures(devices.get(name))}


def test_80211b_profiles_show_11mbps_long_preamble_and_36_mac_bytes_with_published_sources():
    # Seed 000 §5, seed 002 §5, seed 003 §III: 11 Mb/s; IEEE 802.11b-1999 §18.2: 192 us.
    for name in WAVELAN_80211B:
        figures = _figures(name)
        assert figures["radio.phy.rate"].value == "11Mbps"
        assert figures["radio.phy.preamble"].value == "192us"
        assert figures["radio.phy.mac_overhead"].value == 36
        for key in ("radio.phy.rate", "radio.phy.preamble", "radio.phy.mac_overhead"):
            assert figures[key].source and not figures[key].estimated, key
        assert "seed 003 §III" in figures["radio.phy.rate"].source


def test_wavelan_modem_phy_is_marked_estimated_and_the_ideal_nic_has_none():
    modem = _figures("donckers2002-wavelan-modem")
    assert modem["radio.phy.preamble"].value == "254us"  # seed 001 §1.2
    assert all(modem[k].estimated for k in ("radio.phy.rate", "radio.phy.preamble", "radio.phy.mac_overhead"))
    assert not any(key.startswith("radio.phy") for key in _figures("ideal-nic-0.3"))


def test_profile_listing_prints_the_phy_figures(cli):
    result = cli("profiles", "singh2002-toshiba-wavelan")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    for key, value in (("radio.phy.rate", "11Mbps"), ("radio.phy.preamble", "192us"),
                       ("radio.phy.mac_overhead", "36")):
        line = next(line for line in lines if key in line)
        assert line.split()[-1] == value, line


def test_energy_record_counts_the_frames_each_radio_sent_and_heard(quickstart):
    record = tcpenergy.run(quickstart, **{"path.forward.impairments": []})
    sender, receiver = record["energy"]["sender"], record["energy"]["receiver"]
    # Loss-free: the receiver heard in the window every frame the sender sent in it.
    assert sender["radio_tx_frames"] == receiver["radio_rx_frames"] > record["flow"]["data_segments_sent"]
    assert sender["radio_tx_bytes"] == receiver["radio_rx_bytes"]
    # 802.11b airtime: n * 192 us + (bytes + 36 n) * 8 / 11 Mbit/s, rounded up per frame.
    n, b = sender["radio_tx_frames"], sender["radio_tx_bytes"]
    exact_ns = n * 192_000 + (b + 36 * n) * 8_000 / 11
    assert exact_ns <= sender["radio_tx_s"] * 1e9 < exact_ns + n
