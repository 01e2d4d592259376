"""The reproductions run on their testbeds' TCP stacks and give every periodic impairment a per-run
random phase (docs/models/tcp.md "Stack presets", docs/units-and-scenarios.md "Periodic
impairments"); the new keys are checked like every other key."""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Tuple

import pytest

import tcpenergy
from tcpenergy.reproduce import seed000, seed002, seed003

PERIODIC = ("periodic_burst", "outage")


def periodic_impairments(scenario: Dict[str, Any]) -> Iterator[Tuple[str, Dict[str, Any]]]:
    for direction in ("forward", "reverse"):
        for i, imp in enumerate(scenario["path"][direction].get("impairments", [])):
            if imp["kind"] in PERIODIC:
                yield f"{direction}.{i}", imp


def reproduction_testbeds(module) -> List:
    # Seed 000's window-drops runs place their drops at chosen instants (the axis they vary) and,
    # like the cited testbed [7], are simulations without a FreeBSD stack.
    cited = {seed000.DROPS, seed000.CITED7}
    return [e for e in module.experiments(quick=True) if e.name not in cited]


@pytest.mark.parametrize("module", [seed000, seed002], ids=["seed-000", "seed-002"])
def test_freebsd_testbeds_run_the_freebsd_43_stack_seed000_s5_seed002_s5(module):
    exps = reproduction_testbeds(module)
    assert exps
    for exp in exps:
        assert exp.base["tcp"]["stack"] == "freebsd-4.3", exp.name
        normalized = tcpenergy.load_scenario(exp.base).normalized
        # The preset's send buffer (tcp_sendspace) and tick reach the engine.
        assert normalized["tcp"]["send_buffer"] == 32768, normalized["tcp"]
        assert normalized["tcp"]["timer_tick"] == "10ms"


def test_seed003_option_runs_use_the_linux_22_stack_and_keep_the_options_under_test():
    for exp in seed003.experiments(quick=True):
        tcp = exp.base["tcp"]
        assert tcp["stack"] == "linux-2.2", exp.name
        normalized = tcpenergy.load_scenario(exp.base).normalized["tcp"]
        # Options written in the experiment override the preset (timestamps are on in both, the
        # delayed ACK is the experiment's).
        assert normalized["delayed_ack"]["every"] == tcp["delayed_ack"]["every"]
        assert normalized["min_rto"] == "200ms"


@pytest.mark.parametrize("module", [seed000, seed002], ids=["seed-000", "seed-002"])
def test_every_periodic_impairment_of_a_reproduction_has_a_random_phase_shared_by_both_directions(module):
    seen = 0
    for exp in reproduction_testbeds(module):
        groups = {}
        for where, imp in periodic_impairments(exp.base):
            seen += 1
            assert imp.get("offset") == "random", (exp.name, where, imp)
            groups.setdefault(imp.get("phase_group"), []).append(where)
        for group, members in groups.items():
            assert group is not None, (exp.name, members)
        if any(w.startswith("forward") for g in groups.values() for w in g) and \
                any(w.startswith("reverse") for g in groups.values() for w in g):
            assert len(groups) == 1, f"{exp.name}: both directions fail together, one phase: {groups}"
    assert seen > 0


def test_a_random_phase_moves_the_route_failures_between_seeds():
    # Seed 002's route-failure setting without random loss and a 200 KB transfer (about 1 s): with
    # the old fixed offset (first outage at 10 s) no run meets an outage; with a random phase in
    # [0, 15 s) some seeds start inside or just before one and others do not.
    def outage_drops(base, seed):
        rec = tcpenergy.run(base, seed=seed, **{"tcp.variant": "sack", "traffic.bytes": "200KB",
                                                 "path.forward.impairments.1.p": 0.0})
        assert rec["complete"]
        return rec["path"]["forward"]["dropped_channel"] + rec["path"]["reverse"]["dropped_channel"]

    base = seed002.route_failure_base((10, 20))
    hit = [outage_drops(base, seed) > 0 for seed in range(1, 11)]
    assert any(hit) and not all(hit), hit
    fixed = seed002.route_failure_base((10, 20))
    for direction, i in (("forward", 2), ("reverse", 0)):
        imp = fixed["path"][direction]["impairments"][i]
        imp.pop("phase_group")
        imp.pop("offset")
    assert not any(outage_drops(fixed, seed) > 0 for seed in range(1, 11))


@pytest.mark.parametrize("override, key", [
    ("tcp.stack=freebsd", "tcp.stack"),
    ("tcp.timer_tick=5s", "tcp.timer_tick"),
    ("tcp.delayed_ack_tick=-1ms", "tcp.delayed_ack_tick"),
    ("path.forward.impairments=[{kind=\"outage\", down=\"1s\", every=\"5s\", offset=\"whenever\"}]",
     "path.forward.impairments.0.offset"),
])
def test_bad_stack_tick_or_phase_exits_2_with_one_line_naming_the_key(cli, quickstart, override, key):
    result = cli("run", quickstart, "--set", override)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {key}"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
