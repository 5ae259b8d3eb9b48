"""The IR and what every stage shares: primitives and their properties, the
canonical IR, names, rule templates, argument checks."""
