"""The kernel mode: the machine's own TCP between network namespaces, through the engine's media
(docs/emulation.md); and the energy of a capture taken at one node.

    from tcpenergy.emulate import analyze, emulate
    record = emulate("scenarios/kernel-path.toml")          # root: namespaces and TUN devices
    result = analyze("sender.pcap", "singh2002-toshiba-wavelan", "10.0.0.1")

Modules: ``netns`` (namespaces and devices), ``settings`` (scenario keys onto the kernel),
``apps`` (the programs run in the namespaces), ``run`` (one emulated run), ``capture_energy``
(metering a capture).
"""

from tcpenergy.emulate.capture_energy import analyze
from tcpenergy.emulate.run import emulate

__all__ = ["analyze", "emulate"]
