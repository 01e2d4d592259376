"""A standing fuzz test: a few hundred generated scenarios, from fixed seeds, run through the
Python API (the path a user's script takes across the engine's boundary).

Two generators: mutations of the shipped scenario files (values within and beyond their allowed
ranges, wrong types, unknown keys) and small random networks (chains of links with random rates,
delays, queues, impairments and flows of every traffic kind, started and stopped at random).
Every scenario must either be refused with one clean line naming its key, or run to a record that
keeps the accounting invariants (docs/units-and-scenarios.md, docs/models/energy.md):

- every energy breakdown sums to its total, and no energy is negative;
- a node's radio times sum to the measurement window;
- nothing leaves an interface faster than its rate: a link's bytes over the run, a flow's
  throughput over its first hop, its goodput over its slowest hop, goodput within throughput;
- a link sends no more than it was given, and delivers no more than it sent;
- the same scenario and seed give the same record;
- every confidence interval over the runs contains its mean.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

import tcpenergy
from tcpenergy.exceptions import EngineError, ScenarioError
from tcpenergy.experiments.stats import summarize

SCENARIOS = sorted((Path(__file__).parent.parent / "scenarios").glob("*.toml"))
# Rounding slack for sums of many floating-point terms.
REL = 1e-9
RADIO_TIMES = ("radio_tx_s", "radio_rx_s", "radio_idle_s", "radio_sleep_s", "radio_waking_s",
               "radio_overhear_s")


def rate_text(rng: random.Random) -> Tuple[str, float]:
    kbps = rng.choice([1, 8, 64, 256, 1000, 2000, 11000])  # within the default radio's 11 Mbit/s
    return f"{kbps}kbps", kbps * 1e3


def impairment(rng: random.Random) -> Dict[str, Any]:
    kind = rng.choice(["bernoulli", "bernoulli", "gilbert_elliott", "reorder", "jitter", "outage"])
    if kind == "bernoulli":
        return {"kind": kind, "p": rng.choice([0.0, 0.01, 0.1, 0.5, 1.0])}
    if kind == "gilbert_elliott":
        state = lambda per, lo, hi: {"per": per, "min": lo, "max": hi}  # noqa: E731
        return {"kind": kind, "good": state(0.0, "100ms", "1s"), "bad": state(rng.random(), "10ms", "300ms")}
    if kind == "reorder":
        return {"kind": kind, "fraction": rng.random() * 0.3, "extra_delay": "30ms"}
    if kind == "jitter":
        return {"kind": kind, "min": "0ms", "max": f"{rng.randint(1, 40)}ms", "keep_order": rng.random() < 0.5}
    return {"kind": kind, "down": f"{rng.randint(50, 800)}ms", "every": "2s"}


def traffic(rng: random.Random, transport: str) -> Dict[str, Any]:
    kinds = ["bulk", "timed", "on_off"] if transport == "tcp" else ["cbr", "on_off"]
    kind = rng.choice(kinds)
    if kind == "bulk":
        return {"kind": kind, "bytes": f"{rng.choice([1, 10, 60, 300])}KB"}
    if kind == "timed":
        return {"kind": kind, "duration": rng.choice(["1us", "10ms", "500ms", "2s"])}
    if kind == "cbr":
        return {"kind": kind, "rate": f"{rng.choice([8, 64, 512, 4000])}kbps",
                "packet": rng.choice([20, 200, 1400])}
    # A datagram fits one packet; a TCP message may span several.
    sizes = [1, 100, 3000] if transport == "tcp" else [1, 100, 1400]
    return {"kind": kind, "message": rng.choice(sizes), "interval": rng.choice(["5ms", "100ms", "1s"]),
            "distribution": rng.choice(["fixed", "exponential"])}


def random_chain(rng: random.Random) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """A chain n0 - n1 - ... with random links and flows along it; the scenario and, for the
    checks, each link direction's rate and each flow's hops."""
    n = rng.randint(2, 4)
    names = [f"n{i}" for i in range(n)]
    links, rates = [], {}
    for i in range(n - 1):
        text, bps = rate_text(rng)
        link: Dict[str, Any] = {"between": [names[i], names[i + 1]], "rate": text,
                                "delay": f"{rng.randint(0, 50)}ms", "queue": rng.choice([1, 5, 50])}
        if rng.random() < 0.5:
            link["forward"] = {"impairments": [impairment(rng)]}
        links.append(link)
        rates[f"{names[i]}->{names[i + 1]}"] = rates[f"{names[i + 1]}->{names[i]}"] = bps
    flows, hops = [], {}
    for k in range(rng.randint(1, 3)):
        a, b = rng.sample(range(n), 2)
        transport = rng.choice(["tcp", "udp"])
        flow: Dict[str, Any] = {"name": f"f{k}", "from": names[a], "to": names[b], "transport": transport,
                                "traffic": traffic(rng, transport)}
        if transport == "tcp":
            flow["tcp"] = {"variant": rng.choice(["reno", "newreno", "sack", "cubic", "e2tcp", "tahoe"])}
        if rng.random() < 0.3:
            flow["start"] = f"{rng.randint(0, 1500)}ms"
        if rng.random() < 0.4 or flow["traffic"]["kind"] in ("cbr", "on_off"):
            flow["stop"] = f"{rng.randint(1600, 4000)}ms"
        step = 1 if b > a else -1
        hops[flow["name"]] = [f"{names[i]}->{names[i + step]}" for i in range(a, b, step)]
        flows.append(flow)
    scenario = {"name": "fuzz-chain", "stop_after": f"{rng.randint(1, 5)}s",
                "nodes": {name: {} for name in names}, "links": links, "flows": flows,
                "energy": {"radio_policy": rng.choice(["always_on", "ideal", "idle_timeout"])}}
    return scenario, {"rates": rates, "hops": hops}


# Mutations of a shipped file, as --set overrides: (key, values), with values within and beyond
# the allowed ranges. Keys of the other scenario form, and unknown keys, must be refused cleanly too.
COMMON: List[Tuple[str, List[Any]]] = [
    ("stop_after", ["1s", "3s", "0s", "-1s", "1ns", 5, "0.5ns", "1000000000h"]),
    ("tcp.variant", ["tahoe", "reno", "newreno", "sack", "ecn", "elfn", "ecn-elfn", "cubic", "e2tcp",
                     "responsive", "smooth", "bogus"]),
    ("tcp.min_rto", ["1ms", "200ms", "1ns", "0s"]),
    ("tcp.initial_window", [1, 4, 0, -2, 1.5]),
    ("energy.radio_policy", ["always_on", "ideal", "idle_timeout", "sometimes"]),
]
SINGLE_PATH: List[Tuple[str, List[Any]]] = [
    ("path.mtu", [68, 296, 576, 1500, 9000, 0, 70000]),
    ("path.forward.rate", ["1kbps", "64kbps", "2Mbps", "11Mbps", "0bps", "-5Mbps", "9999999999Gbps"]),
    ("path.forward.delay", ["0ms", "1ms", "300ms", "-1ms"]),
    ("path.forward.queue", [1, 10, 0, 2000000]),
    ("path.forward.impairments", [[], [{"kind": "bernoulli", "p": 0.05}], [{"kind": "bernoulli", "p": 1.0}],
                                  [{"kind": "bernoulli", "p": 2.0}], [{"kind": "nope"}]]),
    ("traffic.bytes", ["1B", "5KB", "100KB", "0B", "-1KB"]),
]
NETWORK: List[Tuple[str, List[Any]]] = [
    ("flows.0.start", ["0s", "500ms", "-1s"]),
    ("flows.0.traffic", [{"kind": "bulk", "bytes": "20KB"}, {"kind": "timed", "duration": "1us"},
                         {"kind": "cbr", "rate": "64kbps", "packet": 200},
                         {"kind": "on_off", "message": 100, "interval": "1ns"}]),
    ("flows.0.stop", ["1s", "2s"]),
    ("links.0.rate", ["1kbps", "1Mbps", "0bps"]),
    ("links.0.queue", [1, 100, 0]),
]
WRONG: List[Tuple[str, List[Any]]] = [("unknown_key", [1]), ("path.mtu", [1500]), ("flows.9.start", ["1s"])]


def mutated(rng: random.Random) -> Tuple[Path, Dict[str, Any]]:
    """A shipped scenario and overrides: kept small (at most 3 s simulated) and mutated."""
    path = rng.choice(SCENARIOS)
    network = "[nodes]" in path.read_text()
    pool = COMMON + (NETWORK if network else SINGLE_PATH)
    if network and "[[links]]" not in path.read_text():
        pool = [m for m in pool if not m[0].startswith("links.")]
    overrides: Dict[str, Any] = {"stop_after": f"{rng.randint(1, 3)}s"}
    for key, values in rng.sample(pool, rng.randint(1, 2)):
        overrides[key] = rng.choice(values)
    if rng.random() < 0.1:
        key, values = rng.choice(WRONG)
        overrides[key] = rng.choice(values)
    return path, overrides


def energy_objects(record: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    objects = {f"nodes.{k}": v for k, v in (record.get("nodes") or {}).items()}
    for end, e in (record.get("energy") or {}).items():
        if isinstance(e, dict):
            objects[f"energy.{end}"] = e
    return objects


def check_record(record: Dict[str, Any], rates: Optional[Dict[str, float]] = None,
                 hops: Optional[Dict[str, List[str]]] = None) -> None:
    window = record["energy"]["window_s"]
    assert window <= record["sim_time_s"] * (1 + REL) + 1e-12
    for name, e in energy_objects(record).items():
        parts = e["breakdown_j"]
        assert all(v >= 0 for v in parts.values()), (name, parts)
        for key in ("total_j", "idle_j", "idealized_j"):
            assert e[key] >= 0, (name, key, e[key])
        assert math.isclose(sum(parts.values()), e["total_j"], rel_tol=REL, abs_tol=1e-12), name
        radio = sum(e.get(k, 0.0) for k in RADIO_TIMES)
        assert math.isclose(radio, window, rel_tol=1e-9, abs_tol=1e-9), (name, radio, window)
    links = dict(record.get("links") or {})
    if "path" in record:
        links.update({f"path.{d}": c for d, c in record["path"].items()})
    for key, c in links.items():
        assert c["packets_delivered"] + c["dropped_channel"] <= c["packets_sent"], (key, c)
        if rates and key in rates:
            # Serialization at the link's rate: what left within the run fits in it.
            assert c["bytes_sent"] * 8 <= rates[key] * record["sim_time_s"] * (1 + REL), (key, c)
    flows = record.get("flows") or [dict(record["flow"], name="main", transport="tcp")]
    for f in flows:
        flow = f.get("flow", f)
        assert flow["goodput_bps"] <= flow["throughput_bps"] * (1 + REL) + 1e-9 or f.get("split"), f["name"]
        if rates and hops and hops.get(f["name"]):
            route = hops[f["name"]]
            assert flow["throughput_bps"] <= rates[route[0]] * (1 + REL), (f["name"], flow["throughput_bps"])
            assert flow["goodput_bps"] <= min(rates[h] for h in route) * (1 + REL), (f["name"], flow["goodput_bps"])


def run_or_refuse(scenario: Any, overrides: Dict[str, Any], seed: int) -> Optional[Dict[str, Any]]:
    """The record, or None when the scenario is refused with one clean line naming its key."""
    try:
        return tcpenergy.run(scenario, seed=seed, **overrides)
    except ScenarioError as exc:
        message = str(exc)
        assert "\n" not in message and message.strip(), message
        assert "Traceback" not in message and "panicked" not in message, message
        return None
    except EngineError as exc:  # an internal failure is a defect, whatever the input
        pytest.fail(f"engine error for {overrides}: {exc}")


@pytest.fixture(scope="module")
def fuzzed() -> List[Dict[str, Any]]:
    rng = random.Random(20261127)
    records: List[Dict[str, Any]] = []
    for i in range(250):
        path, overrides = mutated(rng)
        record = run_or_refuse(path, overrides, seed=1 + i % 3)
        if record is not None:
            check_record(record)
            record["parameters"]["fuzz"] = "mutated"
            records.append(record)
    for i in range(150):
        scenario, shape = random_chain(rng)
        record = run_or_refuse(scenario, {}, seed=1 + i % 3)
        assert record is not None, json.dumps(scenario)
        check_record(record, shape["rates"], shape["hops"])
        if i % 10 == 0:
            again = tcpenergy.run(scenario, seed=1 + i % 3)
            assert json.dumps(again, sort_keys=True) == json.dumps(record, sort_keys=True), "same seed, same record"
        record["parameters"]["fuzz"] = f"chain-{len(scenario['nodes'])}"
        records.append(record)
    return records


def test_generated_scenarios_are_refused_cleanly_or_run_with_every_invariant_kept(fuzzed):
    # Most generated scenarios run; the invariants are checked as each is generated.
    assert sum(r["parameters"]["fuzz"] != "mutated" for r in fuzzed) == 150
    assert sum(r["parameters"]["fuzz"] == "mutated" for r in fuzzed) >= 100


def test_every_interval_over_the_fuzzed_runs_contains_its_mean(fuzzed):
    frame = tcpenergy.to_frame(fuzzed)
    metrics = [c for c in frame.columns if c.startswith(("network.", "energy.sender.", "flow."))
               and frame[c].dtype.kind in "fi"]
    table = summarize(frame, by=["parameters.fuzz"], metrics=metrics, include_incomplete=True)
    table = table[table["n"] > 1]
    assert len(table) > 100
    for level in ("90", "95"):
        low, high, mean = table[f"ci{level}_low"], table[f"ci{level}_high"], table["mean"]
        inside = (low <= mean) & (mean <= high)
        assert inside.all(), table.loc[~inside, ["parameters.fuzz", "metric", "mean", f"ci{level}_low",
                                                 f"ci{level}_high", "ci_method"]].to_string()
