"""Many profiles, one simulation: what pricing one run under several profiles saves.

    python benchmarks/profiles.py                 # engine, calibrate and --sensitivity
    python benchmarks/profiles.py --no-sensitivity

Each comparison is measured side by side in one invocation, the two ways alternating, so that a
busy machine slows both alike; reported are medians.

* engine: 7 profiles (the scenario's own and 6 with other CPU active power and base power) of the
  standard run (single path), scenarios/chain-3hop.toml (a wired network) and
  scenarios/agrawal-single-hop.toml (802.11): 7 separate runs (`_engine.run` with each profile's
  overrides) against one run priced 7 ways (`_engine.run_each_profile`), each returning every
  record as JSON text.
* calibrate: the design step of `tcpenergy calibrate` on examples/calibration (3 fitted keys, so
  7 profiles per row): one simulation per profile (`build_design(..., simulate=simulate_row)`, as
  before) against one per row (the default).
* sensitivity: `tcpenergy reproduce seed-000 --quick --sensitivity cpu.cycles.sack_block_processed
  --values 40,4000,40000` (4 values) with every value's runs simulated apart (`shared=False`)
  against the other values' runs shared; each into a fresh directory, end to end (claims judged at
  every value, figure written, no report).
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import tempfile
import time
from pathlib import Path

from run import STANDARD, _write_json, import_tcpenergy, machine, machine_line, print_table

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = {"standard run (single path)": STANDARD,
             "chain-3hop (wired network)": REPO / "scenarios" / "chain-3hop.toml",
             "agrawal-single-hop (802.11)": REPO / "scenarios" / "agrawal-single-hop.toml"}


def _median_pair(a, b, repeats: int) -> tuple:
    ta, tb = [], []
    for _ in range(repeats):
        for fn, out in ((a, ta), (b, tb)):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return statistics.median(ta), statistics.median(tb)


def engine_rows(tcpenergy, repeats: int) -> list:
    from tcpenergy import _engine
    from tcpenergy.api import encode_profiles

    rows = []
    for label, path in SCENARIOS.items():
        s = tcpenergy.load_scenario(path)
        normalized = tcpenergy.validate(s)
        slots = ([f"nodes.{n}.profile" for n in normalized["nodes"]] if "nodes" in normalized
                 else ["energy.sender", "energy.receiver"])
        profiles = []
        for k in range(1, 7):
            over = {}
            for slot in slots:
                table = tcpenergy.api._validate(s, [])  # noqa: SLF001 - the normalized profile of each node
                node = table
                for part in slot.split("."):
                    node = node[part]
                p = copy.deepcopy(node if isinstance(node, dict) else tcpenergy.devices.get(node))
                p["cpu"]["active_power_w"] *= 1 + k / 2
                p["platform"]["base_power_w"] *= 1 + k / 10
                over[slot] = p
            profiles.append(over)
        encoded = encode_profiles(s, [], profiles)
        text = s.to_json()
        apart = lambda: [_engine.run(text, None, [])] + [_engine.run(text, None, o) for o in encoded]  # noqa: E731
        shared = lambda: _engine.run_each_profile(text, None, [], encoded)  # noqa: E731
        assert apart() == shared(), label  # the same records, byte for byte
        a, b = _median_pair(apart, shared, repeats)
        rows.append({"what": label, "profiles": 7, "apart_ms": a * 1e3, "shared_ms": b * 1e3, "speedup": a / b})
    return rows


def calibrate_row(tcpenergy, repeats: int) -> dict:
    from tcpenergy.calibration.design import build_design, simulate_row
    from tcpenergy.calibration.measurements import read_measurements
    from tcpenergy.calibration.profile_in import load_profile

    rows = read_measurements(REPO / "examples" / "calibration" / "measurements.csv").rows
    start = load_profile("singh2002-toshiba-wavelan")
    keys = ["platform.base_power_w", "cpu.cycles.per_byte", "cpu.cycles.segment_sent"]
    apart = lambda: build_design(rows, start, keys, simulate_row)  # noqa: E731
    shared = lambda: build_design(rows, start, keys)  # noqa: E731
    assert (apart().slopes == shared().slopes).all()
    a, b = _median_pair(apart, shared, repeats)
    return {"what": f"calibrate design ({len(rows)} rows, 3 keys)", "profiles": 7, "apart_ms": a * 1e3,
            "shared_ms": b * 1e3, "speedup": a / b}


def sensitivity_row(repeats: int, jobs: int) -> dict:
    from tcpenergy.reproduce.sensitivity import run_sensitivity

    def once(shared: bool):
        with tempfile.TemporaryDirectory() as tmp:
            run_sensitivity("seed-000", tmp, "cpu.cycles.sack_block_processed", [40, 4000, 40000], quick=True,
                            jobs=jobs, progress=False, log=lambda _: None, refresh_report=False, shared=shared)

    a, b = _median_pair(lambda: once(False), lambda: once(True), repeats)
    return {"what": f"seed-000 --quick --sensitivity (4 values, {jobs} jobs)", "profiles": 4,
            "apart_ms": a * 1e3, "shared_ms": b * 1e3, "speedup": a / b}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=20, help="timed repeats of the engine and calibrate cases")
    ap.add_argument("--sensitivity-repeats", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-sensitivity", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    tcpenergy = import_tcpenergy()
    import tcpenergy.devices  # noqa: F401

    rows = engine_rows(tcpenergy, args.repeats) + [calibrate_row(tcpenergy, max(1, args.repeats // 4))]
    if not args.no_sensitivity:
        rows.append(sensitivity_row(args.sensitivity_repeats, args.jobs))
    print(machine_line())
    print_table(["case", "profiles", "apart (ms)", "one simulation (ms)", "speed-up"],
                [[r["what"], r["profiles"], r["apart_ms"], r["shared_ms"], f"{r['speedup']:.2f}x"] for r in rows])
    _write_json(args.json, {"machine": machine(), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
