"""The figures of the 2020-2021 phone profiles (LTE, 5G NSA low-band, 5G NSA mmWave), derived from
the data Narayanan et al. released with "A Variegated Look at 5G in the Wild" (SIGCOMM 2021).

The data are not shipped (the release carries no licence); run this on a checkout of the authors'
artifact repository (github.com/SIGCOMM21-5G/artifact) to see where every figure comes from:

    python -m tcpenergy.calibration.narayanan2021 PATH/TO/artifact

Two estimates, each documented in docs/models/cellular.md#reading-narayanan:

* **Timers from RRC-Probe** (`RRC-Probe/data/*.csv`): a server sends the phone one packet after an
  idle interval (0 to 20 s in 0.1 s steps) and times the reply. While the phone is still connected
  the round trip is the path's plus the wait for the next DRX on-duration; once it is idle, the wait
  for a paging occasion plus the promotion. So the RTT against the interval is a sawtooth whose
  period is the DRX cycle before the inactivity timer expires and the paging cycle after it:
  :func:`probe_timers` finds where it changes (the tail) and fits each sawtooth (cycle, promotion).
* **Power from the controlled transfers** (`Data-Transfer-Power/MN-Transfer`): one phone, iperf at
  fixed target rates, per-second power from a power monitor. :func:`power_model` fits Huang et
  al.'s model ``P = beta + alpha_u * t_u + alpha_d * t_d`` to every second of one network's runs,
  both directions together, as Huang et al. (MobiSys 2012) did for LTE. The power is the whole
  phone's; the phone's own draw is the median of the authors' baseline measurements
  (`Power-Model/MN-Wild/data-processed/baseline_power.csv`), :func:`baseline_power`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

# 3GPP TS 36.331 longDRX-CycleStartOffset values (ms) a fit may choose from, and the paging cycles
# (defaultPagingCycle: 32, 64, 128, 256 radio frames of 10 ms).
DRX_CYCLES_MS = (20, 32, 40, 64, 80, 128, 160, 256, 320, 512, 640, 1024, 1280, 2048, 2560)
PAGING_CYCLES_MS = (320, 640, 1280, 2560)
# A reply more than this above the path's RTT means the phone had gone idle: in connected mode it
# waits at most one DRX cycle (320 ms for every trace here), in idle mode a promotion of about
# 300 ms plus up to a paging cycle.
IDLE_MARGIN_MS = 450.0
# Past the tail, the paging fit starts this much later, and the DRX fit ends this much earlier,
# so neither sees the other regime.
FIT_GUARD_MS = 1000, 500

# The traces each profile's timers come from, and the network type its power runs carry.
PROFILES = {
    "narayanan2021-lte-phone": ("S20US_162_Verizon_4G.csv", "LTE"),
    "narayanan2021-5g-nsa-lowband-phone": ("RASPBERRY_670_Verizon_NSAlow.csv", "NSALow"),
    "narayanan2021-5g-nsa-mmwave-phone": ("SALMONBERRY_299_Verizon_NSAmmwave.csv", "mmwave"),
}


@dataclass(frozen=True)
class Sawtooth:
    """``rtt = offset + ((phase - interval) mod cycle)``, all in ms: a reply waits for the next
    listening window, which recurs every `cycle`."""

    cycle_ms: int
    offset_ms: float
    phase_ms: int
    # Median absolute residual of the fit, and of a flat line through the same points.
    residual_ms: float
    flat_residual_ms: float


@dataclass(frozen=True)
class ProbeTimers:
    base_rtt_ms: float          # back-to-back probes: the path with the radio connected
    tail_s: float               # the inactivity timer: idle from this interval on
    misclassified: int          # intervals on the wrong side of the tail (a measure of its blur)
    paging: Sawtooth            # after the tail
    drx: Sawtooth               # before it, from 1 s on
    continuous_reception_ms: float  # the longest interval whose reply did not wait for DRX

    @property
    def promotion_ms(self) -> float:
        """The paging sawtooth's floor above the path's RTT: the promotion (and the reply's
        processing, which the path's RTT does not see twice)."""
        return self.paging.offset_ms - self.base_rtt_ms


@dataclass(frozen=True)
class PowerModel:
    network: str
    samples: int
    beta_mw: float              # the whole phone, no data moving
    alpha_u_mw_per_mbps: float
    alpha_d_mw_per_mbps: float
    r2: float


def read_probe(path: Path) -> Any:
    """One RRC-Probe trace: the median RTT (ms, the mean of its two clocks) per idle interval,
    over the probes the authors kept (no other traffic between two probes)."""
    import pandas as pd

    d = pd.read_csv(path)
    d = d[d["KeepOrDrop"] == "YEP"]
    rtt = (d["RTT1"] + d["RTT2"]) / 2
    return rtt.groupby(d["interval"]).median().sort_index()


def fit_sawtooth(interval_ms: Any, rtt_ms: Any, cycles: Sequence[int]) -> Sawtooth:
    """The cycle and phase (1 ms grid) whose waits best explain the RTTs, by median residual."""
    import numpy as np

    iv = np.asarray(interval_ms, dtype=np.int64)
    rtt = np.asarray(rtt_ms, dtype=float)
    flat = float(np.median(np.abs(rtt - np.median(rtt))))
    best: Sawtooth | None = None
    for cycle in cycles:
        for phase in range(cycle):
            wait = (phase - iv) % cycle
            offset = float(np.median(rtt - wait))
            residual = float(np.median(np.abs(rtt - wait - offset)))
            if best is None or residual < best.residual_ms:
                best = Sawtooth(cycle, offset, phase, residual, flat)
    assert best is not None
    return best


def probe_timers(medians: Any) -> ProbeTimers:
    """The machine's timers from one trace's median RTT per idle interval (seconds -> ms)."""
    import numpy as np

    iv = np.round(medians.index.to_numpy(dtype=float) * 1000).astype(np.int64)
    rtt = medians.to_numpy(dtype=float)
    base = float(rtt[iv == iv.min()][0])
    idle = rtt > base + IDLE_MARGIN_MS
    # The change point with the fewest intervals on the wrong side (the earliest on a tie).
    wrong = [int(idle[:k].sum() + (~idle[k:]).sum()) for k in range(len(iv))]
    k = int(np.argmin(wrong))
    tail_ms = int(iv[k])
    after = iv >= tail_ms + FIT_GUARD_MS[0]
    before = (iv >= 1000) & (iv <= tail_ms - FIT_GUARD_MS[1])
    paging = fit_sawtooth(iv[after], rtt[after], PAGING_CYCLES_MS)
    drx = fit_sawtooth(iv[before], rtt[before], DRX_CYCLES_MS)
    # Continuous reception: replies within the path's RTT plus half the DRX fit's spread.
    waited = rtt > base + max(50.0, 2 * drx.residual_ms)
    first_wait = int(np.argmax(waited)) if waited.any() else len(iv)
    cr_ms = float(iv[first_wait - 1]) if first_wait > 0 else 0.0
    return ProbeTimers(base, tail_ms / 1000, wrong[k], paging, drx, cr_ms)


def power_model(transfers: Any, network: str) -> PowerModel:
    """Huang et al.'s linear model fitted to every second of one network's controlled runs."""
    import numpy as np

    g = transfers[transfers["network type"] == network].dropna(subset=["throughput", "avg_power"])
    up = (g["direction"] == "uplink").to_numpy()
    thr = g["throughput"].to_numpy(dtype=float)
    x = np.column_stack([np.ones(len(g)), np.where(up, thr, 0.0), np.where(up, 0.0, thr)])
    y = g["avg_power"].to_numpy(dtype=float)
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ coef
    r2 = 1.0 - float(resid @ resid) / float(((y - y.mean()) ** 2).sum())
    return PowerModel(network, len(g), float(coef[0]), float(coef[1]), float(coef[2]), r2)


def baseline_power(path: Path) -> float:
    """The median of the authors' baseline runs (mW): the phone on, screen on, radio idle."""
    import pandas as pd

    return float(pd.read_csv(path)["base_power"].dropna().median())


def derive(artifact: Path) -> dict[str, dict[str, Any]]:
    """Every profile's figures, with the fits behind them."""
    import pandas as pd

    transfers = pd.read_csv(artifact / "Data-Transfer-Power/MN-Transfer/data-processed/MN-Transfer_combined.csv")
    base = baseline_power(artifact / "Power-Model/MN-Wild/data-processed/baseline_power.csv")
    out = {}
    for name, (trace, network) in PROFILES.items():
        timers = probe_timers(read_probe(artifact / "RRC-Probe/data" / trace))
        power = power_model(transfers, network)
        out[name] = {"trace": trace, "timers": timers, "power": power, "baseline_mw": base}
    return out


def _report(figures: dict[str, dict[str, Any]]) -> str:
    lines = []
    for name, f in figures.items():
        t: ProbeTimers = f["timers"]
        p: PowerModel = f["power"]
        lines += [
            f"{name}",
            f"  RRC-Probe {f['trace']}: path RTT {t.base_rtt_ms:.1f} ms; tail {t.tail_s:.1f} s "
            f"({t.misclassified} intervals on the wrong side)",
            f"    paging cycle {t.paging.cycle_ms} ms, promotion {t.promotion_ms:.0f} ms "
            f"(residual {t.paging.residual_ms:.1f} ms, flat {t.paging.flat_residual_ms:.1f})",
            f"    DRX cycle {t.drx.cycle_ms} ms (residual {t.drx.residual_ms:.1f} ms, flat "
            f"{t.drx.flat_residual_ms:.1f}); continuous reception {t.continuous_reception_ms:.0f} ms",
            f"  MN-Transfer {p.network}: {p.samples} s; beta {p.beta_mw:.1f} mW, alpha_u "
            f"{p.alpha_u_mw_per_mbps:.2f} mW/Mbps, alpha_d {p.alpha_d_mw_per_mbps:.3f} mW/Mbps (R^2 {p.r2:.3f})",
            f"  baseline {f['baseline_mw']:.1f} mW; radio beta {p.beta_mw - f['baseline_mw']:.1f} mW",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or not Path(args[0]).is_dir():
        print("usage: python -m tcpenergy.calibration.narayanan2021 PATH/TO/artifact "
              "(a checkout of github.com/SIGCOMM21-5G/artifact)", file=sys.stderr)
        return 2
    try:
        figures = derive(Path(args[0]))
    except (OSError, KeyError) as e:
        print(f"error: {args[0]} does not look like the artifact checkout: {e}", file=sys.stderr)
        return 1
    print(_report(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
