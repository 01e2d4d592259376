"""Checks of the ns-3 side before its numbers are trusted (`run.py --verify-ns3`).

1. No loss: goodput must come close to the link's payload rate, 2 Mbit/s x (MTU - 40) / (MTU +
   2) (the PPP header is 2 bytes), and equal tcpenergy's on the same cell within 1 %: with nothing
   lost both simulate the same deterministic transfer (handshake, slow start, a full pipe).
2. Counters, on lossy cells of every variant: the timeouts the harness counts (an RTO doubling
   followed by a resend in the same instant) must equal the expiries ns-3 itself logs
   ("RTO. Reset cwnd to" in TcpSocketBase::ReTxTimeout, DEBUG level), and the retransmissions
   (the "Retransmission" trace plus lost SYNs) must equal the data segments the "Tx" trace shows
   starting below the highest byte already sent, plus the resent SYNs. CA_LOSS entries can only
   be fewer than timeouts (repeated expiries stay in CA_LOSS).
3. Settings: the attributes read back from the live sender and receiver sockets after the
   handshake (so Sack, Timestamp and WindowScaling are the negotiated values) must be the
   matched settings of the README.
4. Determinism: the first lossy cell runs again as the worker's last task; a run's result may
   depend on its cell and seed only, not on the runs its worker made before (which is what lets
   the harness cache results and spread them over workers in any order).
"""

from __future__ import annotations

from . import grid

NO_LOSS = [grid.Cell("newreno", 0.0, d, m) for m in (1500, 512) for d in (5, 100)]
SEED = 1
# (cell, seed): a lossy cell of each variant; seed 4 at 5 % loss loses the first SYN.
LOSSY = [(grid.Cell("newreno", 0.05, 20, 1500), 1),
         (grid.Cell("newreno-sack", 0.10, 100, 512), 1),
         (grid.Cell("linuxreno", 0.10, 65, 1500), 1),
         (grid.Cell("linuxreno-sack", 0.05, 5, 512), 1),
         (grid.Cell("cubic", 0.10, 5, 1500), 1),
         (grid.Cell("cubic", 0.02, 100, 512), 1),
         (grid.Cell("cubic", 0.05, 20, 512), 4)]
NO_LOSS_MIN_SHARE = 0.90   # of the payload rate: handshake and slow start cost a few RTTs
NO_LOSS_AGREEMENT = 0.01   # |tcpenergy / ns-3 - 1| on goodput
REPEATED = LOSSY[0]        # run first among the lossy runs and again at the end


def outcome(r: dict) -> dict:
    """What a run's result must reproduce exactly (its wall time and probes aside)."""
    return {k: v for k, v in r.items() if k not in ("wall_s", "checks")}


def payload_rate_bps(cell: grid.Cell) -> float:
    rate = 2e6  # MATCHED["rate"]
    return rate * (cell.mtu - 40) / (cell.mtu + grid.MATCHED["frame_overhead"])


def expected_settings(cell: grid.Cell) -> dict:
    m = grid.MATCHED
    cc, sack, _, _ = grid.VARIANTS[cell.variant]
    return {
        "SegmentSize": str(cell.mtu - 40), "InitialCwnd": str(m["initial_window"]),
        "InitialSlowStartThreshold": str(m["initial_ssthresh"]),
        "RcvBufSize": str(m["receive_buffer"]), "SndBufSize": str(m["bytes"]),
        "DelAckCount": str(m["delack_every"]), "ReTxThreshold": "3", "MaxWindowSize": "65535",
        "Sack": "true" if sack else "false", "Timestamp": "false", "WindowScaling": "false",
        "LimitedTransmit": "true" if m["limited_transmit"] else "false", "TcpNoDelay": "true",
        "MinRto": "1000ms", "ClockGranularity": "1ms", "DelAckTimeout": "200ms",
        "ConnTimeout": "1000ms", "CongestionOps": f"ns3::{cc}",
        "RecoveryOps": "ns3::TcpClassicRecovery",
    }


def check_counters(cell: grid.Cell, r: dict) -> list[str]:
    """Problems with one lossy run's counters and settings (empty: all good)."""
    c = r["checks"]
    problems = []
    if not r["complete"]:
        problems.append("did not complete")
    if r["data_timeouts"] != c["log_data_timeouts"]:
        problems.append(f"timeouts: counted {r['data_timeouts']}, ns-3 logged "
                        f"{c['log_data_timeouts']}")
    if r["retransmissions"] != c["tx_retransmissions"]:
        problems.append(f"retransmissions: counted {r['retransmissions']}, from the Tx trace "
                        f"{c['tx_retransmissions']}")
    if r["loss_entries"] > r["data_timeouts"]:
        problems.append(f"{r['loss_entries']} CA_LOSS entries > {r['data_timeouts']} timeouts")
    if r["timeouts"] != r["data_timeouts"] + r["syn_drops"]:
        problems.append("timeouts != data timeouts + lost SYNs")
    problems += check_settings(cell, r)
    return problems


def check_settings(cell: grid.Cell, r: dict) -> list[str]:
    want = expected_settings(cell)
    problems = []
    for side in ("sender", "receiver"):
        got = r["checks"][side]
        for k, v in want.items():
            if k in ("InitialCwnd", "SndBufSize") and side == "receiver":
                continue  # set by the same defaults, but meaningless at the receiver
            if got.get(k) != v:
                problems.append(f"{side} {k} = {got.get(k)!r}, expected {v!r}")
    return problems


def check_no_loss(cell: grid.Cell, r: dict, te_goodput: float) -> list[str]:
    problems = check_settings(cell, r)
    share = r["goodput_bps"] / payload_rate_bps(cell)
    if share < NO_LOSS_MIN_SHARE:
        problems.append(f"goodput {share:.3f} of the payload rate (< {NO_LOSS_MIN_SHARE})")
    if abs(te_goodput / r["goodput_bps"] - 1) > NO_LOSS_AGREEMENT:
        problems.append(f"tcpenergy / ns-3 goodput = {te_goodput / r['goodput_bps']:.4f}")
    if r["retransmissions"] or r["timeouts"] or r["drops"]:
        problems.append("retransmissions, timeouts or drops without loss")
    return problems
