"""The `tcpenergy` command line (entry point ``tcpenergy.cli:main``).

Each command module registers its commands on the one Typer application in ``common`` and imports
nothing from the other command modules: run, validate and profiles (``run``), emulate (``emulate``), sweep, summarize
and export (``experiments``), report (``report``), reproduce (``reproduce``), calibrate
(``calibrate``). Importing them here, in this order, gives ``tcpenergy --help`` its command order.
"""

import sys

# Registered in this order, the order `tcpenergy --help` lists them in.
from tcpenergy.cli import run  # noqa: F401,I001
from tcpenergy.cli import emulate  # noqa: F401,I001
from tcpenergy.cli import experiments, report, reproduce  # noqa: F401,I001
from tcpenergy.cli import calibrate  # noqa: F401,I001
from tcpenergy.cli.common import EXIT_FAILURE, EXIT_USAGE, app

__all__ = ["EXIT_FAILURE", "EXIT_USAGE", "app", "main"]


def main() -> None:
    try:
        app(prog_name="tcpenergy")
    except KeyboardInterrupt:
        sys.exit(130)
