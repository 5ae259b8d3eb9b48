"""Analyses that annotate code for the rewrites: activity, def/use,
liveness, classes of names, and the probe (what each name holds on one
example)."""
