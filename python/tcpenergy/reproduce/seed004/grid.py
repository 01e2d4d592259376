"""The procedure behind the reading ``calibration-path`` (readings.yaml): the §5.1 path's queue chosen
on a grid by the paper's reported goodputs, never by a claim's verdict.

    python -m tcpenergy.reproduce.seed004.grid [--seconds 600] [--seeds 1 2 3]

For each queue of the grid, the three calibration protocols run on a 140 Mbit/s, 1 ms path (Eq. 8:
a = 5 with the aggressive TCP's 112 Mbit/s of goodput gives Tmax = 140 Mbit/s); the queue whose mean
goodputs are closest to §5.1's (sum of absolute differences, Mbit/s) is the one taken.
"""

from __future__ import annotations

import argparse
from typing import Dict, Iterable, Sequence, Tuple

# §5.1: useful data in 600 s (GB, read as 10^9 bytes), as Mbit/s of goodput.
PAPER_GOODPUT_MBPS = {"conservative": 6.3e9 * 8 / 600 / 1e6, "aggressive": 8.4e9 * 8 / 600 / 1e6,
                      "newreno": 6.1e9 * 8 / 600 / 1e6}
RATE = "140Mbps"
QUEUES = (5, 10, 15, 20, 100)


def goodput_mbps(queue: int, variant: str, seconds: int, seed: int, rate: str = RATE) -> float:
    from tcpenergy import api
    from tcpenergy.reproduce import readings
    from tcpenergy.reproduce import seed004 as S

    with readings.active(readings.check(S.PAPER_ID, S.__name__, {})):
        scenario = S.calibration_base(seconds)
    scenario["links"][0].update({"rate": rate, "queue": queue})
    scenario["tcp"]["variant"] = variant
    scenario["seed"] = seed
    return float(api.run(scenario)["network"]["goodput_bps"]) / 1e6


def distances(seconds: int = 600, seeds: Sequence[int] = (1, 2, 3),
              queues: Iterable[int] = QUEUES) -> Dict[int, Tuple[float, Dict[str, float]]]:
    """queue -> (sum of |mean goodput - paper's|, the mean goodput per protocol), in Mbit/s."""
    out = {}
    for queue in queues:
        means = {v: sum(goodput_mbps(queue, v, seconds, s) for s in seeds) / len(seeds) for v in PAPER_GOODPUT_MBPS}
        out[queue] = (sum(abs(means[v] - PAPER_GOODPUT_MBPS[v]) for v in means), means)
    return out


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(prog="python -m tcpenergy.reproduce.seed004.grid", description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args(list(argv) if argv else None)
    table = distances(args.seconds, args.seeds)
    for queue, (total, means) in table.items():
        print(f"queue {queue:3d}: sum {total:6.1f} Mbit/s  " + ", ".join(f"{v} {g:.1f}" for v, g in means.items()))
    print(f"taken: {min(table, key=lambda q: table[q][0])} packets")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
