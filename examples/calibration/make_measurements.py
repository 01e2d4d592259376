"""Write measurements.csv: synthetic measurements for the calibration example.

The "measured" values are simulated with a reference profile (the Toshiba profile with a 12.5 W
base power and 25 cycles per byte) and rounded to 5 significant digits, as a meter would print
them; `tcpenergy calibrate` should find those two figures again. Run from anywhere:

    python examples/calibration/make_measurements.py
"""

import csv
from pathlib import Path

import tcpenergy
from tcpenergy.calibration.design import with_figures
from tcpenergy.calibration.measurements import quantity_of, split_overrides
from tcpenergy.calibration.profile_in import load_profile
from tcpenergy.scenario import parse_assignment

HERE = Path(__file__).resolve().parent
REFERENCE = {"platform.base_power_w": 12.5, "cpu.cycles.per_byte": 25.0}

# (id, overrides, seed, node, measured quantity)
ROWS = [
    ("loss1-snd", "", 1, "sender", "energy_j"),
    ("loss1-rcv", "", 1, "receiver", "energy_j"),
    ("loss5-snd", "path.forward.impairments.0.p=0.05", 2, "sender", "energy_j"),
    ("loss5-rcv", "path.forward.impairments.0.p=0.05", 2, "receiver", "energy_per_bit_uj"),
    ("mtu576-snd", "path.mtu=576; tcp.variant=newreno", 3, "sender", "energy_j"),
    ("mtu576-rcv", "path.mtu=576; tcp.variant=newreno", 3, "receiver", "energy_j"),
    ("clean-snd", "path.forward.impairments.0.p=0.0", 4, "sender", "power_w"),
    ("fast-rcv", 'path.forward.rate="11Mbps"; path.reverse.rate="11Mbps"', 5, "receiver", "energy_j"),
]


def main() -> None:
    scenario = tcpenergy.load_scenario(HERE / "transfer.toml")
    reference = with_figures(load_profile("singh2002-toshiba-wavelan"), REFERENCE)
    quantities = ("energy_j", "energy_per_bit_uj", "power_w")
    with open(HERE / "measurements.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(("id", "scenario", "overrides", "seed", "node") + quantities)
        for row_id, overrides, seed, node, quantity in ROWS:
            pairs = [parse_assignment(item) for item in split_overrides(overrides)]
            record = tcpenergy.run(scenario, seed=seed, **dict(pairs), **{f"energy.{node}": reference})
            value = f"{quantity_of(record, node, quantity):.5g}"
            writer.writerow((row_id, "transfer.toml", overrides, seed, node)
                            + tuple(value if q == quantity else "" for q in quantities))


if __name__ == "__main__":
    main()
