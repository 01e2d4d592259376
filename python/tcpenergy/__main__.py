"""Allows ``python -m tcpenergy``."""

from tcpenergy.cli import main

main()
