"""The transforms, each canonical IR -> python-stage code: reverse mode,
forward mode and batching (vmap).  They know primitives only through
the rule registries in ``tangent_x.rules``."""
