"""Energy per bit: the Linux stack against the textbook stack with Linux's constants, under random,
bursty and reordering loss.

    python benchmarks/linux_energy.py [--seeds N] [--out FILE]

Scenarios: scenarios/singh2002-random-loss.toml (Bernoulli 5 % on data), singh2002-bursty-loss
(Gilbert-Elliott) and singh2002-reordering (5 % of packets 20 ms late each way), 5 MB on a
2 Mbit/s, 20 ms path with the testbed's WaveLAN card always on. Each runs with `sack` and with
`newreno` (SACK off) on two stacks:

* textbook: the RFC stack (`tcp::sender`) set to Linux 6's constants, the values the `linux-6`
  preset held before it selected the Linux stack (4 ms ticks, RTO 1 s initially and within
  [200 ms, 120 s], RTTVAR floored at 200 ms, delayed ACK every 2 or 40 ms, initial window 10,
  timestamps, limited transmit, per-segment slow start, a 128 KiB window);
* linux-6: the Linux stack (`tcp.stack = "linux-6"`).

Prints a markdown table of means over the seeds: goodput, retransmissions, timeouts, ACKs sent by
the receiver, and the sender's and receiver's energy per delivered bit (total and without idle).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import import_tcpenergy, machine_line  # noqa: E402

SCENARIOS = {
    "random (Bernoulli 5 %)": "singh2002-random-loss.toml",
    "bursty (Gilbert-Elliott)": "singh2002-bursty-loss.toml",
    "reordering (5 %, +20 ms)": "singh2002-reordering.toml",
}

# Linux 6's constants on the textbook stack (the linux-6 preset of engine 0.13.0).
TEXTBOOK_LINUX_CONSTANTS = {
    "timer_tick": "4ms", "delayed_ack_tick": "4ms", "clock_granularity": "200ms", "initial_rto": "1s",
    "min_rto": "200ms", "max_rto": "120s", "delayed_ack": {"every": 2, "timeout": "40ms"}, "initial_window": 10,
    "initial_ssthresh": "infinite", "receive_buffer": 131072, "timestamps": True, "window_scale": True,
    "limited_transmit": True, "dupack_threshold": 3, "cwnd_growth": "per_byte", "rtt_sampling": "every_ack",
}

TCP_KEPT = ("variant",)


def scenario(tcpenergy, path: Path, variant: str, stack: str) -> dict:
    """The scenario file with its TCP table replaced by `variant` on `stack`."""
    import tomllib

    doc = tomllib.loads(path.read_text())
    sack = variant == "sack"
    tcp = {"variant": variant, "sack": sack}
    if stack == "linux-6":
        tcp["stack"] = "linux-6"
    else:
        tcp.update(TEXTBOOK_LINUX_CONSTANTS)
    doc["tcp"] = tcp
    return doc


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--out", type=Path, default=None, help="also write the table to FILE")
    args = p.parse_args(argv)
    tcpenergy = import_tcpenergy()
    from tcpenergy import api

    lines = [f"`python benchmarks/linux_energy.py --seeds {args.seeds}`, engine {tcpenergy.engine_version()}, "
             f"{machine_line()}; means over {args.seeds} seeds (the same seeds on both stacks).", "",
             "| loss | variant | stack | goodput kbit/s | retx | RTOs | receiver ACKs | sender µJ/bit | sender µJ/bit without idle | receiver µJ/bit | receiver µJ/bit without idle |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, name in SCENARIOS.items():
        path = HERE.parent / "scenarios" / name
        for variant in ("sack", "newreno"):
            for stack in ("textbook", "linux-6"):
                rows = []
                for seed in range(1, args.seeds + 1):
                    record, _ = api.execute(api.load_scenario(scenario(tcpenergy, path, variant, stack)), seed, [])
                    if not record["complete"]:
                        raise SystemExit(f"error: {name} {variant} {stack} seed {seed} did not complete")
                    f, e = record["flow"], record["energy"]
                    rows.append((f["goodput_bps"] / 1e3, f["retransmissions"], f["timeouts"], f["acks_sent"],
                                 e["sender"]["per_bit_total_uj"], e["sender"]["per_bit_idealized_uj"],
                                 e["receiver"]["per_bit_total_uj"], e["receiver"]["per_bit_idealized_uj"]))
                m = [statistics.mean(col) for col in zip(*rows)]
                lines.append(f"| {label} | {variant} | {stack} | {m[0]:,.0f} | {m[1]:.1f} | {m[2]:.1f} | {m[3]:,.0f} | "
                             f"{m[4]:.2f} | {m[5]:.3f} | {m[6]:.2f} | {m[7]:.3f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
