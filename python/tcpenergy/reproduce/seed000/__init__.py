"""Seed 000 (Singh & Singh, energy of TCP Reno, NewReno and SACK over a 3-hop wireless chain).

The paper's three experiment tables as sweeps over one results store, plus a few small sweeps that
some claims need (an idle-power what-if, a loss-matched control for the bursty case, deterministic
drops in one window, and the cited 2 Mbit/s testbed of its ref [7]); then every S000 claim is
judged from the stored runs (claims.py) and a report is written.

Two networks (``network``): ``testbed``, the measured 3-hop 802.11b chain with Dummynet at node c
(scenarios/singh2002-testbed.toml), where Table 1 also runs with RTS/CTS on; or ``path``, the chain
abstracted as one 2 Mbit/s end-to-end path (scenarios/singh2002-*.toml). The sweeps that re-create
cited experiments (window drops, ref [7]) are not the chain and run on a path either way.

Modelling choices are explained in docs/reproduce/seed-000.md; the base scenarios mirror
scenarios/singh2002-*.toml (which are not shipped in the wheel, so they are built here).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import AbstractSet, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from tcpenergy.reproduce import common, networks, readings
from tcpenergy.reproduce.claims import TIE_REL, paper_file
from tcpenergy.reproduce.common import FREEBSD43, Experiment, Outcome, Transform, random_phase, table_section
from tcpenergy.reproduce.networks import PATH, TESTBED
from tcpenergy.reproduce.registry import Paper

PAPER_ID = "seed-000"
TITLE = "Reproduction of seed 000: energy of TCP Reno, NewReno and SACK over a 3-hop wireless chain"

PAPER = Paper(
    id=PAPER_ID,
    description="Singh & Singh: energy of TCP Reno, NewReno and SACK over a 3-hop wireless chain",
    citation=('H. Singh and S. Singh, "Energy Consumption of TCP Reno, Newreno, and SACK in Multi-Hop '
              'Wireless Networks"'),
    networks=True,
)
CLAIMS = paper_file(__name__, "claims.yaml")  # each claim's text and its source in the paper
RULES = paper_file(__name__, "rules.yaml")  # the rules judging them (docs/reproduce/rules.md)

VARIANTS = ("reno", "newreno", "sack")
VARIANT_NAMES = {"reno": "Reno", "newreno": "NewReno", "sack": "SACK"}
RTTS = ("15ms", "40ms", "70ms", "100ms", "130ms")  # seed 000 Tables 1-3: average RTTs
LOSS_RATES = (0.01, 0.05, 0.10)  # Table 1
MTUS = (512, 1500)  # Tables 1 and 3
REORDER_FRACTIONS = (0.01, 0.05)  # Table 3
FULL_REPETITIONS = 10  # the paper: 10-15 runs per setting, 90 % confidence intervals
QUICK_REPETITIONS = 3
DEVICE = "singh2002-toshiba-wavelan"  # the measured Toshiba sender, 18 W idle (seed 000 §5)

# The impairment keys the sweeps vary, by their path-form names (on the testbed,
# networks.testbed_key gives the pipes' keys, and networks.logical_columns maps the runs back).
LOSS_KEY = "path.forward.impairments.0.p"
REORDER_KEYS = ("path.forward.impairments.0.fraction", "path.reverse.impairments.0.fraction")
BASE_POWER_KEY = "energy.sender.platform.base_power_w"

# RTS/CTS on (testbed only): every unicast frame, data and TCP ACK alike, goes after RTS/CTS. The
# paper gives no threshold; 0 is the card's setting that turns the handshake on for everything,
# and the strongest test of "quite similar" (the most control airtime). Off: the card's "off".
RTS_ON = 0
RTS_OFF = "off"

# Sweep names (the `sweep` column of the store).
RANDOM = "s000-random-loss"
RANDOM_RTS = "s000-random-loss-rtscts"  # Table 1 with RTS/CTS on (testbed only)
BURSTY = "s000-bursty-loss"
REORDER = "s000-reordering"  # + "-1pct" / "-5pct"
WHATIF = "s000-whatif-idle-power"
MATCHED = "s000-bursty-matched-random"
DROPS = "s000-window-drops"
CITED7 = "s000-cited-bruyeron"


def reorder_sweep(fraction: float) -> str:
    return f"{REORDER}-{round(fraction * 100)}pct"


# --------------------------------------------------------------------------------------------
# Base scenarios (the shipped scenarios/singh2002-*.toml, built in code)
# --------------------------------------------------------------------------------------------

def _direction(impairments: Sequence[Mapping[str, Any]], delay: str = "20ms") -> Dict[str, Any]:
    # 2 Mbit/s end to end: our estimate of what a 3-hop 11 Mb/s 802.11b chain delivers (about half
    # the PHY rate after MAC overhead, shared by three hops); see scenarios/singh2002-random-loss.toml.
    return {"rate": "2Mbps", "delay": delay, "queue": 100, "impairments": [dict(i) for i in impairments]}


def _scenario(name: str, forward: Sequence[Mapping[str, Any]], reverse: Sequence[Mapping[str, Any]],
              *, mtu: int = 1500, delay: str = "20ms", transfer: str = "5MB",
              tcp: Optional[Mapping[str, Any]] = None, sender: Any = DEVICE,
              radio_policy: str = "always_on", testbed_buffers: bool = True) -> Dict[str, Any]:
    """A seed-000 scenario on the testbed's FreeBSD 4.3 stack; ``testbed_buffers=False`` for the
    cited simulations, which ran no FreeBSD stack (engine defaults, no socket buffers)."""
    buffers = FREEBSD43 if testbed_buffers else {}
    return {
        "name": name,
        "seed": 1,
        "path": {"mtu": mtu, "forward": _direction(forward, delay), "reverse": _direction(reverse, delay)},
        # Seed 000 §3: the FreeBSD 4.3 stacks did not implement limited transmit (RFC 3042).
        "tcp": {"variant": "sack", "limited_transmit": False, **buffers, **dict(tcp or {})},
        "traffic": {"kind": "bulk", "bytes": transfer},
        "energy": {"sender": sender, "receiver": DEVICE, "radio_policy": radio_policy},
    }


def _testbed(name: str, forward: Sequence[Mapping[str, Any]], reverse: Sequence[Mapping[str, Any]],
             *, mtu: int = 1500, delay: str = "40ms", sender: Any = None, radio_policy: str = "always_on",
             rts_threshold: Any = RTS_OFF) -> Dict[str, Any]:
    """A seed-000 scenario on the testbed chain: FreeBSD 4.3 without limited transmit, as
    ``_scenario``; ``delay`` is Dummynet's delay on c -> d, the whole average RTT (the chain adds
    its own few milliseconds; docs/reproduce/seed-000.md)."""
    return networks.testbed_scenario(name, forward, reverse, delay=delay, mtu=mtu, device=DEVICE, sender=sender,
                                   radio_policy=radio_policy, rts_threshold=rts_threshold,
                                   tcp={"variant": "sack", "limited_transmit": False, **FREEBSD43})


def testbed_random_loss_base(rts_threshold: Any = RTS_OFF) -> Dict[str, Any]:
    """Table 1 on the chain: uniform random loss in Dummynet's pipe c -> d (data packets)."""
    name = "singh2002-testbed-random-loss" + ("-rtscts" if rts_threshold != RTS_OFF else "")
    return _testbed(name, [{"kind": "bernoulli", "p": 0.05}], [], rts_threshold=rts_threshold)


# Table 2's burst cycle, one of the readings (readings.yaml: burst-cycle): the table's "every 12
# seconds", or the text's 1 s "after 12 seconds of zero loss", a 13 s cycle.
BURST_EVERY_S = {"table-12s": 12, "text-13s": 13}


def burst_every_s() -> int:
    """The bursty condition's period (s) under the reading in force."""
    return BURST_EVERY_S[readings.in_force(__name__, "burst-cycle")]


def _burst() -> Dict[str, Any]:
    """85 % loss for 1 s per cycle, at a random phase per run, shared by both directions."""
    return random_phase({"kind": "periodic_burst", "p": 0.85, "on": "1s", "every": f"{burst_every_s()}s"}, "burst")


def testbed_bursty_loss_base() -> Dict[str, Any]:
    """Table 2 on the chain: the burst in both pipes at c (data and ACKs), one phase per run."""
    burst = _burst()
    return _testbed("singh2002-testbed-bursty-loss", [burst], [burst])


def testbed_reordering_base(fraction: float = 0.05) -> Dict[str, Any]:
    """Table 3 on the chain: data and ACKs held back 20 ms in the pipes at c."""
    reorder = {"kind": "reorder", "fraction": fraction, "extra_delay": "20ms"}
    return _testbed("singh2002-testbed-reordering", [reorder], [reorder])


def testbed_whatif_base() -> Dict[str, Any]:
    """The idle-power what-if on the chain: node a with the perfectly sleeping radio."""
    return _testbed("singh2002-testbed-random-loss-whatif-idle", [{"kind": "bernoulli", "p": 0.05}], [],
                    sender=sleeping_radio_profile(), radio_policy="ideal")


def random_loss_base() -> Dict[str, Any]:
    """Table 1: uniform random loss at the Dummynet node, data direction (5 %, 40 ms, MTU 1500 here)."""
    return _scenario("singh2002-random-loss", [{"kind": "bernoulli", "p": 0.05}], [])


def bursty_loss_base() -> Dict[str, Any]:
    """Table 2: 85 % loss for 1 s per cycle (burst_every_s), both directions at once, at a random
    phase per run."""
    burst = _burst()
    return _scenario("singh2002-bursty-loss", [burst], [burst])


def reordering_base(fraction: float = 0.05) -> Dict[str, Any]:
    """Table 3: no loss; a fraction of packets (data and ACKs) held back 20 ms."""
    reorder = {"kind": "reorder", "fraction": fraction, "extra_delay": "20ms"}
    return _scenario("singh2002-reordering", [reorder], [reorder])


def sleeping_radio_profile() -> Dict[str, Any]:
    """The Toshiba sender profile with a radio that draws nothing asleep (for the idle-power what-if)."""
    from tcpenergy import devices

    profile = copy.deepcopy(devices.get(DEVICE))
    if profile is None:  # pragma: no cover - the profile is compiled into the engine
        raise RuntimeError(f"built-in profile {DEVICE!r} is missing")
    for key in ("description", "estimated", "sources"):
        profile.pop(key, None)
    profile["name"] = f"{DEVICE}-whatif"
    profile["radio"]["sleep_power_w"] = 0.0
    return profile


def whatif_base() -> Dict[str, Any]:
    """Table 1 setting, sender whose radio sleeps whenever it is not sending or receiving (free,
    instant transitions) and whose platform idle power is swept: the idle-node draw is then the
    platform base power alone, so the what-if takes seed 000's 'idle power -> 0' literally."""
    return _scenario("singh2002-random-loss-whatif-idle", [{"kind": "bernoulli", "p": 0.05}], [],
                     sender=sleeping_radio_profile(), radio_policy="ideal")


# The cited simulations ran in ns-2, whose TCP agents time one segment at a time.
NS2_RTT_SAMPLING = "one_segment"


def window_drops_base() -> Dict[str, Any]:
    """Deterministic losses inside one window (the Fall & Floyd experiments cited as seed 000 ref [8]).

    A route outage shorter than one packet time per lost packet, once, in congestion avoidance:
    every frame whose transmission ends inside it is lost, i.e. 1-4 consecutive segments of one
    window. 1 MB, 100 ms RTT, and ssthresh 30 KB so that the window is limited by cwnd (about 20
    segments at the drop), not by the receive window, as in the cited simulations.
    """
    outage = {"kind": "outage", "down": "6ms", "every": "1h", "offset": "3s"}
    return _scenario("s000-window-drops", [outage], [], delay="50ms", transfer="1MB",
                     tcp={"initial_ssthresh": "30KB", "rtt_sampling": NS2_RTT_SAMPLING}, testbed_buffers=False)


def bruyeron_base() -> Dict[str, Any]:
    """Seed 000 ref [7] as summarized in its §4: 2 Mbit/s, 25 ms link delay, 16 KB buffers, uniform loss."""
    return _scenario("s000-cited-bruyeron", [{"kind": "bernoulli", "p": 0.02}], [],
                     delay="25ms", tcp={"receive_buffer": "16KB", "rtt_sampling": NS2_RTT_SAMPLING},
                     testbed_buffers=False)


# --------------------------------------------------------------------------------------------
# Sweeps
# --------------------------------------------------------------------------------------------

def repetitions(quick: bool) -> int:
    return QUICK_REPETITIONS if quick else FULL_REPETITIONS


def experiments(quick: bool = False, network: str = PATH) -> List[Experiment]:
    """The first-stage sweeps (everything whose definition does not depend on results), on
    ``network``: the paper's tables and the what-if on the testbed chain (Table 1 once more with
    RTS/CTS on) or on the path; the cited experiments on a path either way."""
    networks.check_network(network)
    exps = _path_experiments(quick)
    if network == PATH:
        return exps
    return _on_testbed(exps)


_CITED = (DROPS, CITED7)  # re-created cited experiments: not the chain, a path in both modes
_PATH_ONLY_OFF = " (RTS/CTS on needs the MAC: --network testbed)"


def _on_testbed(exps: Sequence[Experiment]) -> List[Experiment]:
    bases = {RANDOM: testbed_random_loss_base(), BURSTY: testbed_bursty_loss_base(), WHATIF: testbed_whatif_base(),
             **{reorder_sweep(f): testbed_reordering_base(f) for f in REORDER_FRACTIONS}}
    out: List[Experiment] = []
    for exp in exps:
        if exp.name in _CITED:
            out.append(exp)
            continue
        tb = networks.testbed_experiment(exp, bases[exp.name],
                                       exp.description.replace(_PATH_ONLY_OFF, "") + " (testbed chain)")
        out.append(tb)
        if exp.name == RANDOM:
            out.append(Experiment(RANDOM_RTS, "Table 1: random uniform loss, RTS/CTS on (threshold "
                                              f"{RTS_ON} bytes: every frame; testbed chain)",
                                  testbed_random_loss_base(RTS_ON), dict(tb.axes), tb.repetitions, dict(tb.fixed)))
    return out


def _path_experiments(quick: bool) -> List[Experiment]:
    """The sweeps on the path. --quick runs the what-if (a consistency check and C43's direction at
    two idle powers) at the two ends of the RTT sweep only: it is the largest sweep (three idle
    powers on the whole Table 1 grid), and on the testbed it kept the quick run over 2 minutes."""
    reps = repetitions(quick)
    variants = list(VARIANTS)
    rtts = list(RTTS)
    out = [
        Experiment(RANDOM, f"Table 1: random uniform loss, RTS/CTS off{_PATH_ONLY_OFF}",
                   random_loss_base(),
                   {"tcp.variant": variants, LOSS_KEY: list(LOSS_RATES), "path.mtu": list(MTUS), "rtt": rtts},
                   reps),
        Experiment(BURSTY, f"Table 2: bursty loss, 85 % for 1 s every {burst_every_s()} s, MTU 1500",
                   bursty_loss_base(), {"tcp.variant": variants, "rtt": rtts}, reps),
    ]
    for fraction in REORDER_FRACTIONS:
        out.append(Experiment(
            reorder_sweep(fraction), f"Table 3: {fraction:.0%} of packets reordered, no loss",
            reordering_base(fraction), {"tcp.variant": variants, "path.mtu": list(MTUS), "rtt": rtts},
            reps, fixed={key: fraction for key in REORDER_KEYS}))
    profile_base = float(sleeping_radio_profile()["platform"]["base_power_w"])
    out += [
        Experiment(WHATIF, "What-if (claims C02, C43): Table 1 with a perfectly sleeping radio and the "
                           "sender's platform idle power at 100 %, 10 % and 0 % of the Toshiba's",
                   whatif_base(),
                   {"tcp.variant": variants, LOSS_KEY: list(LOSS_RATES), "path.mtu": list(MTUS),
                    "rtt": [rtts[0], rtts[-1]] if quick else rtts,
                    BASE_POWER_KEY: [profile_base, round(profile_base / 10, 6), 0.0]},
                   reps),
        Experiment(DROPS, "Mechanism (claims C44, C48): 0-4 segments lost from one window",
                   window_drops_base(),
                   {"tcp.variant": variants,
                    "path.forward.impairments.0.offset": ["2s", "3s"],
                    # about one 1500-byte frame time (6.0 ms at 2 Mbit/s) per lost segment
                    "path.forward.impairments.0.down": ["1us", "6ms", "12ms", "18ms", "24ms"]},
                   1, seeds=[1]),
        Experiment(CITED7, "Cited testbed [7] (claim C45): Reno vs SACK, 2 Mbit/s, 25 ms, 16 KB, loss 0-9 %",
                   bruyeron_base(),
                   {"tcp.variant": ["reno", "sack"], LOSS_KEY: [round(0.01 * i, 2) for i in range(10)],
                    "rtt": ["50ms"]},
                   reps),
    ]
    return out


def matched_experiment(forward_p: float, reverse_p: float, quick: bool = False, network: str = PATH) -> Experiment:
    """Second stage (claim C35): random uniform loss at the loss rates measured in the bursty runs."""
    forward, reverse = [{"kind": "bernoulli", "p": forward_p}], [{"kind": "bernoulli", "p": reverse_p}]
    exp = Experiment(MATCHED, "Control for claim C35: uniform loss with the bursty runs' average loss rates "
                              f"(forward {forward_p:.4f}, reverse {reverse_p:.4f}), MTU 1500",
                     _scenario("s000-bursty-matched-random", forward, reverse),
                     {"tcp.variant": list(VARIANTS), "rtt": list(RTTS)}, repetitions(quick))
    if networks.check_network(network) == TESTBED:
        exp = networks.testbed_experiment(exp, _testbed("s000-testbed-bursty-matched-random", forward, reverse),
                                        exp.description + " (testbed chain)")
    return exp


def write_experiment(exp: Experiment, directory: Path) -> Path:
    """Write ``<name>.base.toml`` and ``<name>.sweep.toml``; returns the sweep file."""
    return common.write_experiment(exp, directory, PAPER_ID)


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------

def run(out_dir: Path, quick: bool = False, jobs: Optional[int] = None, progress: bool = True,
        log: Callable[[str], None] = print, *, transform: Optional[Transform] = None,
        keep: Optional[AbstractSet[str]] = None, report: bool = True, network: Optional[str] = None) -> Outcome:
    """Run (or resume) every sweep into OUT/runs.duckdb, judge the claims, write the report.

    ``network``: ``testbed`` or ``path`` (None: the one OUT's reproduction ran on, else
    ``networks.DEFAULT_NETWORK``, the testbed). ``transform``: applied to each experiment before it
    runs (None: run them as defined); ``keep``: the sweeps to run (None: all; the loss-matched
    control runs only when kept); ``report=False``: judge the claims without writing the report."""
    from tcpenergy.reproduce import claims as claims_mod
    from tcpenergy.reproduce.seed000 import claims as seed000_claims

    network = networks.choose_network(network, out_dir)
    # The loss process (readings.yaml): the cited experiments re-create other testbeds and keep theirs.
    process = readings.in_force(__name__, "loss-process")
    exps = [exp if exp.name in _CITED else networks.with_loss_process(exp, process)
            for exp in experiments(quick, network)]

    def matched(runs) -> Experiment:  # its loss rates are measured in the bursty runs stored before it
        fwd, rev = seed000_claims.measured_burst_loss(claims_mod.usable_runs(runs))
        return networks.with_loss_process(matched_experiment(fwd, rev, quick, network), process)

    def evaluate(runs, entries, quick: bool):
        # C01 compares a fitted slope with the idle power of the profile the random-loss runs used.
        random_exp = next(e for e in exps if e.name == RANDOM)
        sender = common.node_profile((transform(random_exp) if transform else random_exp).base, "sender")
        return seed000_claims.evaluate(runs, entries, quick=quick, sender_profile=sender, network=network)

    def report_files(runs, results, out, run_exps, quick: bool):
        return write_report(runs, results, out, run_exps, quick=quick, network=network)

    return common.run_and_judge(PAPER_ID, exps, out_dir, quick=quick, jobs=jobs, progress=progress, log=log,
                                transform=transform, keep=keep, report=report, evaluate=evaluate, claims=CLAIMS,
                                write_report=report_files, prepare=lambda out: networks.record_network(out, network),
                                view=networks.logical_columns,
                                follow_ups=[common.FollowUp(MATCHED, matched)])


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

# The figures' panels: the paper's tables with RTS/CTS off, as its figures (the RTS/CTS-on runs are
# compared in a table, "RTS/CTS on vs off", and in claim S000-C42).
PAPER_TABLES = (RANDOM, BURSTY) + tuple(reorder_sweep(f) for f in REORDER_FRACTIONS)
CONDITION = "label.condition"


def condition_of(row: Mapping[str, Any]) -> Optional[str]:
    """The paper condition a run belongs to, e.g. 'random loss 5 % · MTU 512'."""
    sweep, mtu = row["sweep"], int(row["path.mtu"])
    if sweep == RANDOM:
        return f"random loss {float(row[LOSS_KEY]) * 100:g} % · MTU {mtu}"
    if sweep == BURSTY:
        return f"bursty loss · MTU {mtu}"
    if sweep.startswith(REORDER):
        return f"reordering {float(row[REORDER_KEYS[0]]) * 100:g} % · MTU {mtu}"
    return None


def paper_frame(runs):
    """The runs of the paper's Tables 1-3 with one condition label, in the paper's order."""
    frame = runs[runs["sweep"].isin(PAPER_TABLES)].copy()
    frame[CONDITION] = [condition_of(r) for r in frame.to_dict("records")]
    order = {s: i for i, s in enumerate(PAPER_TABLES)}
    frame["_order"] = frame["sweep"].map(order)
    sort = ["_order", "path.mtu", LOSS_KEY, REORDER_KEYS[0]]
    frame = frame.sort_values([c for c in sort if c in frame.columns], kind="stable")
    keep = [c for c in frame.columns if not c.startswith("label.")
            or c in (CONDITION, "label.rtt", "label.tcp.variant")]
    return frame[keep].drop(columns="_order").reset_index(drop=True)


def network_text(network: str) -> str:
    """How the paper's chain is run, in words (report and docs)."""
    if network == TESTBED:
        return ("Network: the testbed chain (--network testbed): four 802.11b stations in one collision "
                "domain, 11 Mbit/s data, 2 Mbit/s control frames, long preamble, static routes a -> b -> c -> d, "
                "and Dummynet at node c: a pipe towards d carrying the whole average RTT as its delay and the "
                "condition's impairments, and a pipe towards b for the conditions that hit ACKs too. Table 1 "
                f"runs twice, RTS/CTS off and on (threshold {RTS_ON} bytes: every frame), for claim S000-C42. "
                "The cited experiments (window drops, ref [7]) are not the chain and run on a path.")
    return ("Network: the path abstraction (--network path): the chain as a 2 Mbit/s end-to-end link with "
            "the average RTT split evenly over the two directions. RTS/CTS (Table 1's RTS/CTS axis and claim "
            "S000-C42) needs the chain's MAC, so all runs correspond to the paper's RTS/CTS-off case; "
            "--network testbed runs it.")


def _setup_section(exps: Sequence[Experiment], runs, quick: bool, network: str = PATH):
    rows = []
    for exp in exps:
        n = int((runs["sweep"] == exp.name).sum())
        rows.append([exp.name, exp.description, exp.cells(), len(exp.seed_list()), n,
                     f"sweeps/{exp.name}.sweep.toml"])
    intro = ("What was run: one sweep per table of the paper plus the supplementary sweeps some claims need; "
             "every sweep file and its base scenario are written under sweeps/ and can be rerun with "
             "`tcpenergy sweep`. " + network_text(network) + " docs/reproduce/seed-000.md explains every "
             "modelling choice." + (" Quick mode: 3 seeds per setting instead of 10." if quick else ""))
    return table_section(["sweep", "what", "settings", "seeds", "runs stored", "file"], rows, intro, "Experiments")


def _mean_relation(p: float, q: float) -> str:
    """'<', '>' or '~=' between two means, a tie within the shared tolerance of the larger."""
    if abs(p - q) <= TIE_REL * max(abs(p), abs(q)):
        return "~="
    return "<" if p < q else ">"


def table4_ours(paper_chain: str, means: Mapping[str, float]) -> Tuple[str, str]:
    """Our side of one Table 4 cell, from the variants' means over the RTT sweep (the claim record's
    ``data``): the paper's chain with our relation between the same neighbours, in its order, and
    our variants ordered from the smallest mean up with the relation between neighbours."""
    metric, _, _ = paper_chain.partition("[")
    names = re.findall(r"\[([^\]]+)\]", paper_chain)
    if not names or any(n not in means for n in names):
        return "", ""
    same = names[0]
    for a, b in zip(names, names[1:]):
        same += f" {_mean_relation(means[a], means[b])} {b}"
    ranked_names = sorted(names, key=lambda n: means[n])
    ranked = ranked_names[0]
    for a, b in zip(ranked_names, ranked_names[1:]):
        ranked += f" {_mean_relation(means[a], means[b])} {b}"
    figures = ", ".join(f"{n} {means[n]:.4g}" for n in names)
    wrap = lambda chain: re.sub(r"(\w+)", lambda m: f"{metric.strip()}[{m.group(1)}]"  # noqa: E731
                                if m.group(1) in means else m.group(1), chain)
    return f"{wrap(same)} ({figures})", wrap(ranked)


def _table4_section(results: Sequence[Mapping[str, Any]]):
    rows = []
    for r in results:
        if str(r.get("where", "")).startswith("Table 4"):
            means = {k: v for k, v in (r.get("data") or {}).items() if isinstance(v, (int, float))}
            same, ranked = table4_ours(r["claim"], means)
            rows.append([r["id"], r["where"].replace("Table 4, ", ""), r["claim"], same, ranked,
                         r["status"].replace("_", " ")])
    intro = ("The paper's Table 4 next to ours: per MTU x loss cell, each variant's mean over the RTT sweep. "
             "'Ours, same pairs' puts our relation between the variants the paper's chain compares, in its "
             "order, with our means; 'ours ranked' orders our variants from the smallest mean up. '~=': means "
             "within the tie tolerance (1 % of the larger); '<', '>': means ordered beyond it (confidence "
             "intervals are in each claim's evidence).")
    return table_section(["claim", "cell", "paper", "ours, same pairs", "ours ranked", "status"], rows, intro,
                         "Table 4: paper vs reproduction")


def _rtscts_section(runs):
    """Table 1 with RTS/CTS off and on (testbed): each variant's E and goodput, mean over the RTT
    sweep and seeds, and the change (claim S000-C42 judges it)."""
    from tcpenergy.experiments.completeness import complete_runs

    df = complete_runs(runs[runs["sweep"].isin((RANDOM, RANDOM_RTS))])
    means = df.groupby(["sweep", "path.mtu", LOSS_KEY, "tcp.variant"])[
        ["energy.sender.per_bit_total_uj", "flow.goodput_bps"]].mean()
    rows = []
    for mtu in MTUS:
        for loss in LOSS_RATES:
            for v in VARIANTS:
                try:
                    off = means.loc[(RANDOM, mtu, loss, v)]
                    on = means.loc[(RANDOM_RTS, mtu, loss, v)]
                except KeyError:
                    continue
                e0, e1 = off.iloc[0], on.iloc[0]
                g0, g1 = off.iloc[1] / 1e3, on.iloc[1] / 1e3
                rows.append([f"MTU {mtu} / {loss * 100:g} % loss", VARIANT_NAMES[v], f"{e0:.2f}", f"{e1:.2f}",
                             f"{e1 / e0 - 1:+.1%}", f"{g0:.0f}", f"{g1:.0f}", f"{g1 / g0 - 1:+.1%}"])
    intro = (f"Table 1 on the testbed chain with RTS/CTS off and on (threshold {RTS_ON} bytes: every frame), each "
             "variant's mean over the RTT sweep and seeds (complete runs). Claim S000-C42 judges these.")
    return table_section(["cell", "variant", "E off (µJ/bit)", "E on", "E change", "goodput off (kbit/s)",
                          "goodput on", "goodput change"], rows, intro, "RTS/CTS on vs off")


def _supplement_section(runs):
    df = runs[runs["sweep"] == DROPS]
    rows = []
    for r in df.sort_values(["label.path.forward.impairments.0.offset", "tcp.variant",
                             "path.forward.dropped_channel"]).to_dict("records"):
        rows.append([VARIANT_NAMES.get(r["tcp.variant"], r["tcp.variant"]),
                     r["label.path.forward.impairments.0.offset"], int(r["path.forward.dropped_channel"]),
                     int(r["flow.fast_retransmits"]), int(r["flow.timeouts"]),
                     int(r["flow.retransmissions"]), f"{float(r['flow.completion_s']):.3f}"])
    intro = ("Deterministic losses from one window (claims S000-C44, C48; 1 MB, RTT 100 ms, a one-off route "
             "outage dropping 0-4 consecutive segments at 2 s or 3 s).")
    return table_section(["variant", "outage at", "segments lost", "fast retransmits", "timeouts",
                          "retransmissions", "completion (s)"], rows, intro, "Supplement: losses in one window")


def write_report(runs, results: Sequence[Mapping[str, Any]], out_dir: Path, exps: Sequence[Experiment],
                 quick: bool = False, network: str = PATH) -> List[Path]:
    from tcpenergy.report import write_report as _write_report
    from tcpenergy.report.layout import Layout
    from tcpenergy.reproduce import claims as claims_mod

    intro = (f"Every claim of {PAPER.citation} that the project lists (text and source shipped with the "
             "package), judged from the complete runs by an explicit rule (stated in each evidence text and "
             "in docs/reproduce/seed-000.md). The paper built its rank orderings from mean values, so "
             "orderings compare each variant's mean over the RTT sweep within a cell: '~=' holds when the "
             f"means are within {claims_mod.TIE_REL:.0%} of each other, '<' when they are ordered beyond "
             "that; whether the 90 % confidence intervals overlap is reported in the evidence, and required "
             "only where the paper claims a measurable difference. A chain holds only if every pair it "
             "relates holds. 'consistency': holds, but could not fail in the model (not counted as "
             "reproduced). The same list is in claims.json.")
    sections = [_setup_section(exps, runs, quick, network), claims_mod.checklist_section(results, intro),
                _table4_section(results), _supplement_section(runs)]
    if network == TESTBED:
        sections.insert(3, _rtscts_section(runs))
    frame = paper_frame(runs)
    layout = Layout(x="label.rtt", line="label.tcp.variant", panels=(CONDITION,))
    paths = _write_report(frame, Path(out_dir) / "report", title=TITLE, level=claims_mod.LEVEL, all_runs=len(runs),
                          layout=layout, summary_sections=[claims_mod.summary_section(results)],
                          extra_sections=sections)
    return [paths.html, paths.markdown, *paths.figures, *paths.tables]
