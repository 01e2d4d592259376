"""The installed package carries what it needs at run time."""

from __future__ import annotations

from importlib.resources import files

from tcpenergy import devices


def test_every_builtin_profile_ships_as_toml_in_the_package():
    names = devices.names()
    assert names
    shipped = files("tcpenergy") / "profiles"
    for name in names:
        assert (shipped / f"{name}.toml").is_file(), name


def test_package_ships_type_information():
    assert (files("tcpenergy") / "py.typed").is_file()
    assert (files("tcpenergy") / "_engine.pyi").is_file()


def test_package_ships_the_wireshark_dissector_for_e2tcp_capture_files():
    # docs/capture.md#e2tcp-files: tshark -X lua_script:<this file> reads *.e2tcp.pcap.
    script = files("tcpenergy") / "wireshark" / "e2tcp.lua"
    assert script.is_file()
    assert 'DissectorTable.get("wtap_encap")' in script.read_text()
