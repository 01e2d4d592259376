"""The metrics a report shows: result column, symbol, unit and which direction is better."""

from __future__ import annotations

from typing import NamedTuple


class Metric(NamedTuple):
    key: str                # short stable name used in tables and by other code ("E", "goodput")
    column: str             # the dotted result column in the runs frame
    symbol: str             # as the papers write it ("E", "E_I", "τ")
    title: str
    unit: str               # unit after `scale` is applied
    scale: float = 1.0      # column value * scale = value in `unit`
    higher_is_better: bool = False


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
