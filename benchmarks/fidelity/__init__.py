"""ns-3 3.44 vs tcpenergy cross-validation grid (see README.md); run.py is the command."""
