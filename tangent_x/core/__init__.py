"""The IR and what every stage shares: primitives and their properties, the
canonical IR and the gast builders, lowering to Python, constant folding,
naming conventions, rule templates and quoted code, argument checks."""
