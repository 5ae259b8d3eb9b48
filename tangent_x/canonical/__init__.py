"""Parse stage -> canonical stage: Python source becomes the canonical IR
(one primitive per equation, structured control flow).

``converter.canonicalize(fn)`` is the entry point.  Inside, lowest first:
``names`` (what statements read and bind) and ``scope`` (``Static``,
``LocalFunction``, ``Scope``); ``parser``/``partials`` (finding a
function's source), ``exits`` (break/continue/return rewritten away),
``comprehensions`` and ``views``; then the ``Converter``'s mixins, one
concern each -- ``expressions``, ``statements``, ``calls``, ``inlining``,
``checks``, ``mutation``, ``branches``, ``loops``, ``iteration``,
``lax_calls``, ``trees`` (tree_util calls as loops over leaves) -- which
``converter`` combines."""
