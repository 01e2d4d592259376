"""A claim's statuses, on their own so that every part of the reproduction machinery (the claims'
judging, the readings that mark claims fit) can name them without importing the other."""

HOLDS = "holds"
DOES_NOT_HOLD = "does_not_hold"
NOT_MODELLED = "not_modelled"
# Holds, but could not have failed in the model (an identity of the energy model, an option with no
# modelled cost, arithmetic): reported apart and never counted as reproduced.
CONSISTENCY = "consistency"
# Judged, but its paper's numbers were used to choose a reading of the setup (reproduce/readings.py):
# reported apart with the verdict of its rule (``judged``), never counted as reproduced.
FIT = "fit"
STATUSES = (HOLDS, DOES_NOT_HOLD, CONSISTENCY, FIT, NOT_MODELLED)

__all__ = ["HOLDS", "DOES_NOT_HOLD", "NOT_MODELLED", "CONSISTENCY", "FIT", "STATUSES"]
