"""Writes the delivery-opportunity traces beside it, in Mahimahi's format (one whole number of
milliseconds per line, each line one opportunity to deliver 1504 bytes; docs/models/network.md,
"Trace-driven links"). Deterministic: running it again gives the same files.

- ``lte-like.down``: 8 s of an LTE-like downlink whose capacity varies. The rate takes a random
  walk in steps of 100 ms between 1 and 10 Mbit/s, with two fades to 0.3 Mbit/s of 0.4 to
  0.6 s (4.62 Mbit/s on average over the 8 s); the base station grants the accumulated
  capacity in bursts, in a millisecond drawn with probability 0.4, as cellular schedulers do,
  so several opportunities often share a timestamp and some milliseconds have none.
- ``constant-3mbps.up``: the one line ``4``, one opportunity every 4 ms, 3.008 Mbit/s (the
  traces/README's way of writing a fixed-rate link).

These are our own traces. The public cellular traces recorded with Saturator (Winstein et al.,
NSDI 2013) are in the ``traces/`` directory of the mahimahi repository (GPL-3.0; not copied
here); the link reads them as they are: ``trace = "/path/to/TMobile-LTE-short.down"``.

    python3 scenarios/traces/make_traces.py
"""

from __future__ import annotations

import random
from pathlib import Path

HERE = Path(__file__).parent
OPPORTUNITY_BITS = 1504 * 8


def lte_like(seconds: int = 8, seed: int = 2013) -> list:
    rng = random.Random(seed)
    rate = 6e6
    fades = {rng.randrange(10, seconds * 10 // 2), rng.randrange(seconds * 10 // 2, seconds * 10 - 6)}
    lines, credit, fade_left = [], 0.0, 0
    for step in range(seconds * 10):
        if step in fades:
            fade_left = rng.randint(4, 6)
        rate = min(10e6, max(1e6, rate + rng.gauss(0, 0.8e6)))
        current = 0.3e6 if fade_left > 0 else rate
        fade_left = max(0, fade_left - 1)
        for ms in range(step * 100, (step + 1) * 100):
            credit += current / 1000 / OPPORTUNITY_BITS
            if rng.random() < 0.4 and credit >= 1:
                whole = int(credit)
                lines += [ms] * whole
                credit -= whole
    # The last timestamp is the period: end the trace at its full length.
    lines.append(seconds * 1000)
    return lines


def main() -> None:
    (HERE / "lte-like.down").write_text("".join(f"{t}\n" for t in lte_like()))
    (HERE / "constant-3mbps.up").write_text("4\n")


if __name__ == "__main__":
    main()
