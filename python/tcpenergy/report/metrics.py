"""The metrics a report shows: result column, symbol, unit and which direction is better.

Two views, chosen from the runs (:func:`view_of`):

- single flow (the single-path form, or a network of one flow): the transfer's sender and
  receiver, as the papers measure them; a network of one flow adds the energy of all its nodes
  per bit, since relays pay for the transfer too;
- network (some run has several flows): the ``network.*`` totals of the record (docs/
  units-and-scenarios.md "Network records"). The single-flow columns exist only for runs of one
  flow, so they would describe part of the store at most.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Tuple


class Metric(NamedTuple):
    key: str                # short stable name used in tables and by other code ("E", "goodput")
    column: str             # the dotted result column in the runs frame
    symbol: str             # as the papers write it ("E", "E_I", "τ")
    title: str
    unit: str               # unit after `scale` is applied
    scale: float = 1.0      # column value * scale = value in `unit`
    higher_is_better: bool = False
    linear: bool = False    # always a linear y axis: a bounded index, never spanning decades


E = Metric("E", "energy.sender.per_bit_total_uj", "E", "Total energy per bit (sender)", "µJ/bit")
E_I = Metric("E_I", "energy.sender.per_bit_idealized_uj", "E_I",
             "Idealized energy per bit (sender)", "µJ/bit")
E_RECEIVER = Metric("E_receiver", "energy.receiver.per_bit_total_uj", "E_R",
                    "Total energy per bit (receiver)", "µJ/bit")
E_I_RECEIVER = Metric("E_I_receiver", "energy.receiver.per_bit_idealized_uj", "E_I,R",
                      "Idealized energy per bit (receiver)", "µJ/bit")
GOODPUT = Metric("goodput", "flow.goodput_bps", "τ", "Goodput", "Mbit/s", 1e-6, True)
RETRANSMISSIONS = Metric("retransmissions", "flow.retransmissions", "retx", "Retransmissions",
                         "segments")
TIMEOUTS = Metric("timeouts", "flow.timeouts", "RTO", "Retransmission timeouts", "timeouts")

# Seed 000's Table 4 compares exactly these three; figures show the same ones.
RANKED = (E, E_I, GOODPUT)
# Figures and summaries show the receiver next to the sender: both ends pay for a transfer.
FIGURES = (E, E_RECEIVER, E_I, E_I_RECEIVER, GOODPUT)
SUMMARY = (E, E_RECEIVER, E_I, E_I_RECEIVER, GOODPUT, RETRANSMISSIONS, TIMEOUTS)

# The whole network: every node's energy over the application bits every flow delivered.
E_NETWORK = Metric("E_network", "network.per_bit_total_uj", "E_net",
                   "Total energy per bit (all nodes)", "µJ/bit")
E_I_NETWORK = Metric("E_I_network", "network.per_bit_idealized_uj", "E_I,net",
                     "Idealized energy per bit (all nodes)", "µJ/bit")
GOODPUT_NETWORK = Metric("goodput_network", "network.goodput_bps", "τ_net",
                         "Goodput (all flows)", "Mbit/s", 1e-6, True)
ENERGY_NETWORK = Metric("energy_network", "network.total_j", "ΣE", "Energy (all nodes)", "J")
IDEALIZED_ENERGY_NETWORK = Metric("idealized_energy_network", "network.idealized_j", "ΣE_I",
                                  "Idealized energy (all nodes)", "J")
# Jain, Chiu & Hawe (DEC-TR-301, 1984): 1 when every flow has the same goodput, 1/n when one
# flow has it all; a fraction, so its "unit" says how to read it.
FAIRNESS = Metric("jain_fairness", "network.jain_fairness", "J",
                  "Jain's fairness index of the flows' goodput", "1 = equal shares", 1.0, True,
                  linear=True)

# The network totals `tcpenergy summarize` shows by default (experiments/stats.DEFAULT_METRICS
# lists their columns; tests/test_report_network.py checks that the two agree).
NETWORK_TOTALS = (GOODPUT_NETWORK, ENERGY_NETWORK, IDEALIZED_ENERGY_NETWORK, E_NETWORK, E_I_NETWORK,
                  FAIRNESS)
NETWORK_RANKED = (E_NETWORK, E_I_NETWORK, GOODPUT_NETWORK, FAIRNESS)
NETWORK_FIGURES = (E_NETWORK, E_I_NETWORK, GOODPUT_NETWORK, FAIRNESS, ENERGY_NETWORK)
NETWORK_SUMMARY = (E_NETWORK, E_I_NETWORK, GOODPUT_NETWORK, ENERGY_NETWORK,
                   IDEALIZED_ENERGY_NETWORK, FAIRNESS)

# Every metric above, for looking one up by key or column.
KNOWN = (*SUMMARY, *NETWORK_SUMMARY)

# Per node (columns nodes.<name>.<field>): what the report's per-node table shows.
NODE_FIELDS = (("total_j", "energy", "J"), ("idealized_j", "idealized energy", "J"),
               ("per_bit_total_uj", "energy per bit of the flows it serves", "µJ/bit"))

FLOW_COUNT = "network.flows"


class View(NamedTuple):
    name: str                       # "single-flow" or "network"
    ranked: Tuple[Metric, ...]
    figures: Tuple[Metric, ...]
    summary: Tuple[Metric, ...]


SINGLE_FLOW = View("single-flow", RANKED, FIGURES, SUMMARY)
# A network of one flow: the single-flow view, and the energy of all its nodes (relays included).
ONE_FLOW_NETWORK = View("single-flow", RANKED, (*FIGURES, E_NETWORK, E_I_NETWORK),
                        (*SUMMARY, E_NETWORK, E_I_NETWORK))
NETWORK = View("network", NETWORK_RANKED, NETWORK_FIGURES, NETWORK_SUMMARY)


def view_of(runs: Any) -> View:
    """The view for a runs frame: network when some run has more than one flow; else the
    single-flow view, with the energy of all nodes when the runs are networks of one flow.
    Only metrics whose column the frame has are kept (a store whose runs all failed has none)."""
    columns = set(runs.columns)
    counts = runs[FLOW_COUNT] if FLOW_COUNT in columns else None
    if counts is not None and bool((counts.astype(float).fillna(0) > 1).any()):
        view = NETWORK
    elif E_NETWORK.column in columns:
        view = ONE_FLOW_NETWORK
    else:
        view = SINGLE_FLOW
    return View(view.name, *(tuple(m for m in metrics if m.column in columns)
                             for metrics in (view.ranked, view.figures, view.summary)))
