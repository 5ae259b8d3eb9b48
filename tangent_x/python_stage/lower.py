"""Moved to ``tangent_x.core.lower``: transforms, rules and analyses lower
equations too, so lowering sits below them.  This module only keeps the
old import working until ``rules/shapes.py`` and ``rules/structural.py``
import the new home; then it goes."""
from ..core.lower import assign_many, lower  # noqa: F401
