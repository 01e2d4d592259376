"""The seed-004 claims that need code; the rest are rules (rules.yaml).

Code remains for arithmetic on the paper's own formulas (C01-C03), the spread of fairness over
repetitions (C15), effort and goodput going together across §5.3.1 and apart across §5.3.2 (C26)
and the threshold trace and alpha/beta comparison of C30. Complete runs only; every verdict counts n complete / n run.
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


def _means(runs, group: str, where) -> Any:
    part = runs[(runs["s004.group"] == group) & where(runs)]
    return part.groupby(["s004.x", "tcp.variant"])[["s004.throughput_bps", "network.goodput_bps"]].mean()


def _direction(a: float, b: float) -> int:
    """+1 / -1 when a is above / below b beyond the shared tie (C.TIE_REL of the larger), else 0."""
    if abs(a - b) <= C.TIE_REL * max(abs(a), abs(b)):
        return 0
    return 1 if a > b else -1


def c26(runs, attempted, entry) -> Verdict:
    """Effort and goodput go together in §5.3.1 and apart in §5.3.2, each across its whole figure:
    at every PER <= 0.1 the one of Responsive and Smooth with more effort also has more goodput (Fig
    6, Responsive's better exploitation paying off); and some pair of protocols has, at every flow
    count of the handoff scenario, more effort with less goodput (Fig 7)."""
    C.note(attempted[attempted["s004.group"].isin([S.PER_SWEEP, S.HANDOFF])])
    low = _means(runs, S.PER_SWEEP, lambda r: r["s004.x"] <= 0.1)
    hand = _means(runs, S.HANDOFF, lambda r: r["s004.x"] == r["s004.x"])
    if not len(low) or not len(hand):
        raise KeyError("no complete runs of §5.3.1 or §5.3.2")
    T, G = "s004.throughput_bps", "network.goodput_bps"
    together = []
    for x in sorted({k[0] for k in low.index}):
        cell = low.loc[x]
        dt = _direction(cell.loc["responsive", T], cell.loc["smooth", T])
        dg = _direction(cell.loc["responsive", G], cell.loc["smooth", G])
        together.append((x, dt, dg, dt != 0 and dt == dg))
    xs = sorted({k[0] for k in hand.index})
    pairs = [("newreno", "responsive"), ("newreno", "smooth"), ("responsive", "smooth")]
    apart: Dict[str, List[bool]] = {}
    for a, b in pairs:
        flags = []
        for x in xs:
            cell = hand.loc[x]
            dt, dg = _direction(cell.loc[a, T], cell.loc[b, T]), _direction(cell.loc[a, G], cell.loc[b, G])
            flags.append(dt != 0 and dg == -dt)
        apart[f"{a} vs {b}"] = flags
    ok_together = all(t[3] for t in together)
    ok_apart = any(all(f) for f in apart.values())
    word = {1: "more", -1: "less", 0: "tied"}
    ev = ("§5.3.1, Responsive against Smooth: " + "; ".join(
        f"PER {x:g}: effort {word[dt]}, goodput {word[dg]}" for x, dt, dg, _ in together) +
        ". §5.3.2, points (of " + f"{len(xs)} flow counts) where more effort comes with less goodput: " +
        "; ".join(f"{k} {sum(v)}" for k, v in apart.items()) +
        ". Rule: at every PER <= 0.1 Responsive's effort and goodput differ from Smooth's in the same "
        "direction, and for some pair every flow count of §5.3.2 shows more effort with less goodput "
        "(differences beyond the 1 % tie).")
    return C.verdict(ok_together and ok_apart, ev,
                     ("In §5.3.1 Responsive's effort and goodput do not move together at every PER <= 0.1"
                      if not ok_together else "") +
                     (("; " if not ok_together else "") + "in §5.3.2 no pair shows more effort with less goodput "
                      "at every flow count" if not ok_apart else "") + ".",
                     {"together": sum(t[3] for t in together), "apart_best": max(sum(v) for v in apart.values())})


C30_PATH = {"mtu": 1500, "forward": {"rate": "10Mbps", "delay": "10ms", "queue": 100,
                                     "impairments": [{"kind": "bernoulli", "p": 0.2}]},
            "reverse": {"rate": "10Mbps", "delay": "10ms", "queue": 100}}
C30_SEEDS = (1, 2, 3)


def _c30_tcp(alpha: float, beta: float) -> Dict[str, Any]:
    tcp: Dict[str, Any] = {"variant": "smooth", "alpha": alpha, "beta": beta}
    fixed = S.SMALL_FIXED_RTO[S.readings.in_force(S.__name__, "alpha-beta-timeout")]
    if fixed is not None:
        tcp["fixed_rto"] = fixed
    return tcp


def descent(cwnd: Sequence[int], ssthresh: Sequence[int], smss: int, start: int = 8, floor: int = 2) -> int:
    """How many congestion responses (changes of ssthresh) it took, at most, for a window of at least
    ``start`` segments to end with window and threshold at ``floor`` segments or below: for each
    descent, the responses between the window last standing at ``start`` segments and the first
    point where both are at the floor. 0 when the floor is never reached from such a window."""
    best, since, seen_large, prev = 0, 0, False, None
    for w, t in zip(cwnd, ssthresh):
        if w >= start * smss:
            since, seen_large = 0, True
        elif prev is not None and t != prev:
            since += 1
        if seen_large and w <= floor * smss and t <= floor * smss:
            best, seen_large = max(best, since), False  # the first arrival at the floor counts
        prev = t
    return best


def c30(runs, attempted, entry) -> Verdict:
    """§2: multiple drops can bring Smooth TCP's window and threshold down to 2 segments despite
    beta = 0.875, and recovery then depends on alpha, not on beta. Two parts: a traced Smooth TCP
    transfer at 20 % packet errors in which a window of at least 8 segments ends, through two or
    more congestion responses (not one), with window and threshold at 2 segments; and, on the same path, the goodput of TCP(alpha, beta) for alpha 0.31 or
    1.24 and beta 0.875 or 0.25 (60 s, seeds 1-3): raising alpha must raise goodput beyond the tie at
    either beta, and by more than changing beta does at either alpha."""
    from tcpenergy import api

    scenario = {"name": "seed004-c30", "seed": 1, "stop_after": "600s", "path": C30_PATH,
                "tcp": _c30_tcp(0.31, 0.875), "traffic": {"kind": "bulk", "bytes": "1MB"},
                "energy": {"sender": "ideal-nic-0.3", "receiver": "ideal-nic-0.3"}}
    _, trace = api.run_traced(scenario)
    mss = 1460
    thresholds = [int(v) for v in trace["ssthresh_bytes"]]
    steps = descent([int(v) for v in trace["cwnd_bytes"]], thresholds, mss)
    low = min(thresholds)
    goodput = {}
    for alpha in (0.31, 1.24):
        for beta in (0.875, 0.25):
            values = []
            for seed in C30_SEEDS:
                record = api.run({**scenario, "seed": seed, "stop_after": "60s", "tcp": _c30_tcp(alpha, beta),
                                  "traffic": {"kind": "bulk", "bytes": "100MB"}})
                values.append(float(record["flow"]["goodput_bps"]))
            goodput[(alpha, beta)] = sum(values) / len(values)

    def change(a, b):
        return goodput[a] / goodput[b] - 1

    alpha_gain = [change((1.24, b), (0.31, b)) for b in (0.875, 0.25)]
    beta_gain = [change((a, 0.25), (a, 0.875)) for a in (0.31, 1.24)]
    floor_ok = steps >= 2
    alpha_ok = all(g > C.TIE_REL for g in alpha_gain) and min(alpha_gain) > max(abs(g) for g in beta_gain)
    ev = (f"A traced Smooth TCP(0.31, 0.875) transfer of 1 MB over 10 Mbit/s, 10 ms, 20 % packet errors "
          f"(timeout: {S.readings.in_force(S.__name__, 'alpha-beta-timeout')}): lowest ssthresh {low} bytes ({low / mss:.1f} "
          f"segments); window and threshold reached 2 segments from a window of 8 or more through {steps} congestion responses (the longest descent). Goodput "
          f"(Mbit/s, 60 s, seeds {', '.join(map(str, C30_SEEDS))}): " +
          ", ".join(f"TCP({a:g}, {b:g}) {g / 1e6:.3f}" for (a, b), g in goodput.items()) +
          f"; alpha 0.31 -> 1.24 changes it by {', '.join(f'{g:+.1%}' for g in alpha_gain)} (beta 0.875, 0.25), "
          f"beta 0.875 -> 0.25 by {', '.join(f'{g:+.1%}' for g in beta_gain)} (alpha 0.31, 1.24). Rule: "
          "window and threshold reach 2 segments from a window of 8 or more through 2 or more congestion "
          "responses, and "
          "raising alpha raises goodput beyond the 1 % tie at either beta by more than changing beta does.")
    why = []
    if not floor_ok:
        why.append("window and threshold never fall from 8 segments to 2 through multiple responses")
    if not alpha_ok:
        why.append("after such drops goodput does not depend on alpha more than on beta")
    return C.verdict(floor_ok and alpha_ok, ev, "In our model " + " and ".join(why) + ".",
                     {"min_ssthresh_segments": low / mss, "descent_reductions": steps,
                      "alpha_gain": alpha_gain, "beta_gain": beta_gain})


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
