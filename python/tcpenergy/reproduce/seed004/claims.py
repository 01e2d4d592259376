"""The seed-004 claims that need code; the rest are rules (rules.yaml).

Code remains for arithmetic on the paper's own formulas (C01-C03), the spread of fairness over
repetitions (C15), the search for effort/goodput pairs that go together and apart (C26) and the
congestion-window trace of C30. Complete runs only; every verdict counts n complete / n run.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Sequence

from tcpenergy.reproduce import claims as C
from tcpenergy.reproduce import rules
from tcpenergy.reproduce import seed004 as S
from tcpenergy.reproduce.seed004 import RULES
from tcpenergy.reproduce.claims import Verdict

QUICK_NOTE = " (quick mode: fewer points and seeds, 30 s runs)"
ARITHMETIC = "arithmetic on the paper's own formulas and numbers, no runs: it checks the paper's reasoning."


def alpha_of(beta: float) -> float:
    """Seed 004 Eq. (1): the alpha that keeps TCP(alpha, beta) TCP-friendly, 4 (1 - beta^2) / 3."""
    return 4 * (1 - beta ** 2) / 3


def eee(tmax: float, t: float, g: float, a: float = 1.0, b: float = 0.3) -> float:
    """Seed 004 Eq. (3), EEE(a, b); a = 1, b = 0.3 is the ideal EEE (docs/models/metrics.md)."""
    return a * (t - g) / tmax + b * (tmax - t) / tmax


def c01(runs, attempted, entry) -> Verdict:
    a78, a05 = alpha_of(0.875), alpha_of(0.5)
    ok = abs(a78 - 0.31) <= 0.005 and abs(a05 - 1) < 1e-12
    ev = f"Eq. (1): alpha(7/8) = {a78:.4f} (the paper rounds it to 0.31), alpha(0.5) = {a05:g}."
    return C.consistency(ok, ev, ARITHMETIC, "Eq. (1) does not give the stated values.", {"alpha_7_8": a78, "alpha_0_5": a05})


def c02(runs, attempted, entry) -> Verdict:
    members = {"Responsive": (1.24, 0.25), "Smooth": (0.31, 0.875), "NewReno": (1.0, 0.5),
               "aggressive": (1.2, 1.0), "conservative": (0.3, 0.2)}
    on = {name: abs(alpha_of(b) - a) <= 0.02 for name, (a, b) in members.items()}
    expected = {"Responsive": True, "Smooth": True, "NewReno": True, "aggressive": False, "conservative": False}
    ok = on == expected
    ev = "Eq. (1) per member: " + "; ".join(f"{n} (alpha {a:g}, beta {b:g}): Eq. (1) gives {alpha_of(b):.3f}, "
                                          f"{'on' if on[n] else 'off'} the curve (within 0.02)"
                                          for n, (a, b) in members.items()) + "."
    return C.consistency(ok, ev, ARITHMETIC, "Some member is not where the claim puts it relative to Eq. (1).", on)


def c03(runs, attempted, entry) -> Verdict:
    nums = entry.get("numbers") or {}
    idle, perfect, example = eee(100, 0, 0), eee(100, 100, 100), eee(100, 99, 1)
    stated = float(nums.get("eee_example_stated", 0.993))
    ev = (f"EEE_ideal = (T - G)/Tmax + 0.3 (Tmax - T)/Tmax: T = G = 0 gives {idle:g}, G = T = Tmax gives {perfect:g} "
          f"(both also unit tests of the record metric, metrics::efficiency::tests); Tmax 100, T 99, G 1 gives "
          f"{example:.3f}, the paper states {stated:g}.")
    ok = abs(idle - 0.3) < 1e-12 and abs(perfect) < 1e-12 and abs(example - stated) < 5e-4
    return C.verdict(ok, ev, f"The stated example is an arithmetic slip: 0.98 + 0.3 x 0.01 = {example:.3f}, not "
                     f"{stated:g}; the two limits hold.", {"idle": idle, "perfect": perfect, "example": example})


def c15(runs, attempted, entry) -> Verdict:
    """Fairness over the repetitions of each §5.2 setting: the largest and the mean deviation from the
    setting's mean, against the paper's 0.08 and 0.00899 (within a factor 2)."""
    nums = entry.get("numbers") or {}
    sel = runs[runs["s004.group"] == S.TESTBED]
    C.note(attempted[attempted["s004.group"] == S.TESTBED])
    if not len(sel):
        raise KeyError("no complete runs of the §5.2 experiments")
    dev = (sel["network.jain_fairness"] - sel.groupby(["s004.x", "tcp.variant"])["network.jain_fairness"]
           .transform("mean")).abs()
    mx, mean = float(dev.max()), float(dev.mean())
    pmax, pmean = float(nums.get("max_dev", 0.08)), float(nums.get("avg_dev", 0.00899))
    ok = mx <= 2 * pmax and pmean / 2 <= mean <= 2 * pmean
    ev = (f"{len(sel)} runs, {sel.groupby(['s004.x', 'tcp.variant']).ngroups} settings: the deviation of Jain's index "
          f"from its setting's mean over the repetitions is at most {mx:.4f} (paper {pmax:g}) and {mean:.5f} on average "
          f"(paper {pmean:g}). Rule: the largest at most twice the paper's, the mean within a factor 2 of it.")
    return C.verdict(ok, ev, "The fairness of our runs varies over repetitions by a different amount than the "
                     "testbed's: the simulated flows start at fixed, evenly spread times and only the packet "
                     "errors and phases are random.", {"max_dev": mx, "mean_dev": mean})


def c26(runs, attempted, entry) -> Verdict:
    """Effort and goodput go together in §5.3.1 (PER <= 0.1) and apart in §5.3.2 (handoffs): in some
    cell of each, a protocol with more effort than another has more goodput (5.3.1) and less (5.3.2)."""
    found = {}
    for group, want_same, label in ((S.PER_SWEEP, True, "§5.3.1 (PER <= 0.1)"), (S.HANDOFF, False, "§5.3.2 (handoffs)")):
        part = runs[(runs["s004.group"] == group) & ((runs["s004.x"] <= 0.1) if group == S.PER_SWEEP else True)]
        C.note(attempted[attempted["s004.group"] == group])
        means = part.groupby(["s004.x", "tcp.variant"])[["s004.throughput_bps", "network.goodput_bps"]].mean()
        hits = []
        for x in sorted({k[0] for k in means.index}):
            cell = means.loc[x]
            for a in cell.index:
                for b in cell.index:
                    ta, tb = cell.loc[a, "s004.throughput_bps"], cell.loc[b, "s004.throughput_bps"]
                    ga, gb = cell.loc[a, "network.goodput_bps"], cell.loc[b, "network.goodput_bps"]
                    if ta > tb * (1 + C.TIE_REL) and ((ga > gb * (1 + C.TIE_REL)) if want_same else (ga * (1 + C.TIE_REL) < gb)):
                        hits.append(f"x={x:g}: {a} vs {b}")
        found[label] = hits
    ok = all(found.values())
    ev = "; ".join(f"{label}: {len(h)} pairs where more effort gives {'more' if 'PER' in label else 'less'} goodput "
                   f"({', '.join(h[:4])}{' ...' if len(h) > 4 else ''})" for label, h in found.items()) + \
        ". Rule: at least one such pair in each (effort and goodput beyond the 1 % tie)."
    return C.verdict(ok, ev, "In one of the two settings more effort never comes with the stated goodput.",
                     {k: len(v) for k, v in found.items()})


def c30(runs, attempted, entry) -> Verdict:
    """Multiple drops shrink Smooth TCP's window and threshold to 2 segments despite beta = 0.875."""
    from tcpenergy import api

    scenario = {"name": "seed004-c30", "seed": 1, "stop_after": "600s",
                "path": {"mtu": 1500, "forward": {"rate": "10Mbps", "delay": "10ms", "queue": 100,
                                                  "impairments": [{"kind": "bernoulli", "p": 0.2}]},
                         "reverse": {"rate": "10Mbps", "delay": "10ms", "queue": 100}},
                "tcp": {"variant": "smooth"}, "traffic": {"kind": "bulk", "bytes": "1MB"},
                "energy": {"sender": "ideal-nic-0.3", "receiver": "ideal-nic-0.3"}}
    _, trace = api.run_traced(scenario)
    mss = 1460
    low = int(trace["ssthresh_bytes"].min())
    ok = low <= 2 * mss
    ev = (f"A traced Smooth TCP(0.31, 0.875) transfer of 1 MB over 10 Mbit/s with 20 % packet errors: the lowest "
          f"ssthresh is {low} bytes ({low / mss:.1f} segments), the lowest cwnd {int(trace['cwnd_bytes'].min())} bytes. "
          "Rule: ssthresh reaches 2 segments.")
    return C.verdict(ok, ev, "Repeated drops do not bring Smooth TCP's threshold down to 2 segments in our model.",
                     {"min_ssthresh_segments": low / mss})


CODE: Dict[str, Callable[[Any, Any, Mapping[str, Any]], Verdict]] = {
    "S004-C01": c01, "S004-C02": c02, "S004-C03": c03, "S004-C15": c15, "S004-C26": c26, "S004-C30": c30}

# Seed 004's metrics are ratios of bytes and rates; only the drain ordering (C07) and the energy
# parts of C12 and C13 read the meter.
ENERGY_CLAIMS: frozenset = frozenset({"S004-C07", "S004-C12", "S004-C13"})


def evaluate(runs, entries: Sequence[Mapping[str, Any]], quick: bool = False) -> List[Dict[str, Any]]:
    """One claims.json record per entry. ``runs``: every attempted run (with seed004.add_metrics)."""
    attempted = C.mark_settings(runs)
    usable = C.usable_runs(attempted)
    code = {cid: (lambda entry, fn=fn: fn(usable, attempted, entry)) for cid, fn in CODE.items()}
    return rules.evaluate(runs, entries, RULES, code, quick, quick_note=QUICK_NOTE)
