"""Seed 000's chains of relations as its claims write them (``E[SACK] < E[NewReno] ~= E[Reno]``):
the protocol and metric names they use, parsing, judging (a chain holds only when every pair it
relates holds, see ``claims.implied_relation``) and the evidence texts."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Mapping, Tuple

from tcpenergy.report import metrics as catalogue
from tcpenergy.reproduce import claims as C

# Protocol names as claims.yaml writes them -> engine variant names.
PROTOCOLS = {"reno": "reno", "newreno": "newreno", "sack": "sack", "tahoe": "tahoe"}
DISPLAY = {"reno": "Reno", "newreno": "NewReno", "sack": "SACK", "tahoe": "Tahoe"}

# Metric symbols of claims.yaml -> result column (the report's metric of that name), unit for
# evidence, scale (the paper gives goodput in kbit/s).
METRICS: Dict[str, Tuple[str, str, float]] = {
    "E": (catalogue.E.column, "µJ/bit", 1.0),
    "E_I": (catalogue.E_I.column, "µJ/bit", 1.0),
    "tau": (catalogue.GOODPUT.column, "kbit/s", 1e-3),
    "Timeouts": (catalogue.TIMEOUTS.column, "timeouts/run", 1.0),
    "Retx": (catalogue.RETRANSMISSIONS.column, "retransmissions/run", 1.0),
}


_TERM = re.compile(r"(E_I|E_A|E|tau|Timeouts|Retx)\[([A-Za-z-]+)\]")
_OP = re.compile(r"\s*(~=|<=|>=|<|>|=)\s*")


@dataclass(frozen=True)
class Chain:
    metric: str
    protocols: Tuple[str, ...]  # engine variant names
    ops: Tuple[str, ...]

    def text(self) -> str:
        parts = [f"{self.metric}[{DISPLAY.get(self.protocols[0], self.protocols[0])}]"]
        for op, p in zip(self.ops, self.protocols[1:]):
            parts += [op, f"{self.metric}[{DISPLAY.get(p, p)}]"]
        return " ".join(parts)


def parse_chain(text: str) -> Chain:
    """``E[SACK] < E[NewReno] ~= E[Reno]`` -> Chain("E", ("sack", "newreno", "reno"), ("<", "~="))."""
    text = text.strip()
    pos, metric, protocols, ops = 0, None, [], []
    while True:
        m = _TERM.match(text, pos)
        if not m:
            raise ValueError(f"cannot parse a chain of relations from {text!r}")
        if metric is None:
            metric = m.group(1)
        elif m.group(1) != metric:
            raise ValueError(f"mixed metrics in {text!r}")
        name = m.group(2).lower()
        if name not in PROTOCOLS:
            raise ValueError(f"unknown protocol {m.group(2)!r} in {text!r}")
        protocols.append(PROTOCOLS[name])
        pos = m.end()
        if pos >= len(text):
            break
        o = _OP.match(text, pos)
        if not o:
            raise ValueError(f"cannot parse a chain of relations from {text!r}")
        ops.append(o.group(1))
        pos = o.end()
    if not ops:
        raise ValueError(f"no relation in {text!r}")
    return Chain(metric, tuple(protocols), tuple(ops))


def chain_pairs(chain: Chain) -> List[Tuple[int, int, str]]:
    """Every pair (i, j, relation) a chain relates, neighbours and non-neighbours alike."""
    out = []
    ps = chain.protocols
    for i in range(len(ps)):
        for j in range(i + 1, len(ps)):
            rel = C.implied_relation(chain.ops[i:j])
            if rel is not None:
                out.append((i, j, rel))
    return out


def check_chain(chain: Chain, stats: Mapping[str, C.Stat], basis: str = C.SIGNIFICANCE) -> Tuple[bool, List[str]]:
    """Judge a chain of relations against per-protocol statistics: it holds only if every pair it
    relates holds (``S ~= N ~= R`` needs S ~= R too; ``S < N ~= R`` needs S < R). Returns (holds,
    the failed pairs in words)."""
    failures = []
    ps = chain.protocols
    for i, j, op in chain_pairs(chain):
        a, b = stats[ps[i]], stats[ps[j]]
        if not C.relation_holds(a, op, b, basis):
            kind = "" if j == i + 1 else "implied "
            failures.append(f"{kind}{DISPLAY[ps[i]]} {op} {DISPLAY[ps[j]]} fails (found "
                            f"{DISPLAY[ps[i]]} {C.found_relation(a, b, basis)} {DISPLAY[ps[j]]})")
    return (not failures), failures


def chain_significance_text(chain: Chain, stats: Mapping[str, C.Stat]) -> str:
    """Per related pair, whether the 90 % intervals overlap (reported beside a means verdict)."""
    ps = chain.protocols
    return ", ".join(f"{DISPLAY[ps[i]]}-{DISPLAY[ps[j]]} {C.significance_word(stats[ps[i]], stats[ps[j]])}"
                     for i, j, _ in chain_pairs(chain))


def order_text(stats: Mapping[str, C.Stat], higher_is_better: bool = False, basis: str = C.SIGNIFICANCE) -> str:
    """The ordering the data show, best first, neighbours joined by <, > or ~=."""
    items = sorted(stats.items(), key=lambda kv: -kv[1].mean if higher_is_better else kv[1].mean)
    parts = [DISPLAY.get(items[0][0], items[0][0])]
    for (_, a), (name, b) in zip(items, items[1:]):
        parts += [C.found_relation(a, b, basis), DISPLAY.get(name, name)]
    return " ".join(parts)


def chain_found_text(chain: "Chain", stats: Mapping[str, C.Stat], basis: str = C.SIGNIFICANCE) -> str:
    """The relations the data show between the chain's neighbours, in the chain's order."""
    ps = chain.protocols
    parts = [DISPLAY.get(ps[0], ps[0])]
    for a, b in zip(ps, ps[1:]):
        parts += [C.found_relation(stats[a], stats[b], basis), DISPLAY.get(b, b)]
    return " ".join(parts)


def stats_text(stats: Mapping[str, C.Stat], metric: str) -> str:
    unit, scale = METRICS[metric][1], METRICS[metric][2]
    return "; ".join(f"{DISPLAY.get(p, p)} {s.text(scale)}" for p, s in stats.items()) + f" {unit}"
