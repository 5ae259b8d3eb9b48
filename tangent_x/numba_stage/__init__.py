"""The numba stage: the python stage specialised per call signature and
compiled by Numba.

``jit`` (the api layer's front end, ``api/jit.py``) hands a function's
python stage to ``compile.Jitted``, which specialises it for each call's
signature (``specialize``: pytrees flattened into leaves by ``flatten``,
static arguments folded in), renders the result (``render``), the
``numba`` stage, and hands it to ``numba.njit(cache=True)``.  Per call the
wrapper only flattens the arguments, looks the signature up in a dict and
rebuilds the result (``results``); after a call with plain arguments the
function ``jit`` returned runs a guard written for that signature
(``dispatch``).  Numba's refusals become located errors
(``compile_errors``).  ``jit(vmap(f))`` is ``lane_loop``'s, ``jit`` of a
Jacobian ``drivers``'.  Generated modules import their helpers from
``numba_runtime``.
"""
import warnings

from numba.core.errors import NumbaPerformanceWarning

from . import disk_cache

disk_cache.install()     # before anything is compiled: see disk_cache.py

# Numba's advice to use contiguous arrays is about code the user did not
# write (a generated numba stage); it would only be noise.
warnings.filterwarnings("ignore", category=NumbaPerformanceWarning,
                        module=r".*_numba_[0-9a-f]{12}_[0-9a-f]{16}")
