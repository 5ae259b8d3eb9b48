"""Where generated lines come from: each generated file's map from its line
numbers to the user's ``Origin`` (file, line, code).

The python stage fills it as it writes modules (``python_stage.loader``);
the parser reads it when a function it parses is itself generated code
(``grad(grad(f))`` parses ``grad(f)``'s module), so errors and comments
point at the user's line, never at an intermediate file.
"""
LINEMAPS = {}     # generated file path -> {line: Origin}
