"""Runs frames for the report tests, shaped like ``Store.runs()``: run columns, result columns
and ``label.<axis>`` columns."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Dict, Iterable, Sequence, Tuple

import pandas as pd

import tcpenergy
from tcpenergy.experiments.frame import flatten_scenario

QUICKSTART = Path(__file__).resolve().parent.parent / "scenarios" / "quickstart.toml"
E_COL = "energy.sender.per_bit_total_uj"
EI_COL = "energy.sender.per_bit_idealized_uj"
TAU_COL = "flow.goodput_bps"
LOSS = "label.path.forward.impairments.0.p"


def sweep_frame(variants=("reno", "newreno", "sack"), losses=(0.01, 0.05),
                rtts=("20ms", "80ms"), mtus=(512, 1500), seeds=(1, 2, 3),
                size="200KB") -> pd.DataFrame:
    """A small S000-like sweep from real engine runs (small transfers keep it fast)."""
    scenario = tcpenergy.load_scenario(QUICKSTART)
    base = flatten_scenario(scenario.normalized)
    records, labels, settings = [], [], []
    for variant, loss, rtt, mtu in itertools.product(variants, losses, rtts, mtus):
        one_way = f"{int(rtt[:-2]) * 500}us"
        overrides = {"tcp.variant": variant, "path.forward.impairments.0.p": loss,
                     "path.forward.delay": one_way, "path.reverse.delay": one_way,
                     "path.mtu": mtu, "traffic.bytes": size}
        for seed in seeds:
            records.append(tcpenergy.run(scenario, seed=seed, **overrides))
            labels.append({"label.tcp.variant": variant, LOSS: loss, "label.rtt": rtt,
                           "label.path.mtu": mtu})
            settings.append({**base, **overrides})   # the scenario keys a store's frame carries
    frame = tcpenergy.to_frame(records)
    settings_frame = pd.DataFrame(settings)
    settings_frame = settings_frame[[c for c in settings_frame.columns if c not in frame.columns]]
    frame = pd.concat([frame, pd.DataFrame(labels), settings_frame], axis=1)
    frame["run_key"] = [f"run-{i}" for i in range(len(frame))]
    frame["status"] = "ok"
    frame["error"] = None
    frame["sweep"] = "report-test"
    frame["wall_s"] = 0.001
    return frame


def synthetic_frame(means: Dict[Tuple[str, str], float], seed_offsets: Sequence[float],
                    rtts: Iterable[str] = ("10ms", "50ms", "100ms"),
                    rtt_effect: float = 5.0) -> pd.DataFrame:
    """One run per (condition, variant, RTT, seed) with every metric column equal to
    ``mean + rtt_effect * (i - mid) + seed_offsets[seed]``: the per-seed mean over RTT is then
    exactly ``mean + seed_offsets[seed]``, so its mean and spread are known."""
    rtts = list(rtts)
    mid = (len(rtts) - 1) / 2
    rows = []
    for (condition, variant), mean in means.items():
        for i, rtt in enumerate(rtts):
            for seed, offset in enumerate(seed_offsets, start=1):
                value = mean + rtt_effect * (i - mid) + offset
                rows.append({"label.tcp.variant": variant, "label.rtt": rtt,
                             "label.path.mtu": condition, "seed": seed, "status": "ok",
                             "error": None, E_COL: value, EI_COL: value, TAU_COL: value})
    return pd.DataFrame(rows)
