"""Special functions NumPy lacks: ``erf`` and ``erfc``.

They are SciPy's ufuncs themselves, so user code calling
``scipy.special.erf``, ``tangent_x.lax.erf`` or ``tangent_x.nn.gelu``
(``approximate=False``) reaches one primitive, and generated code spells
them ``erf``/``erfc`` from this facade.  Under jit they compile to
``math.erf``/``math.erfc`` element by element (``numba_stage.overloads.special``).
"""
from scipy.special import erf, erfc  # noqa: F401
