"""``Specializer``: one specialisation of a generated function, the parts
of the walk (each a mixin module of this package) put together."""
from .callees import Callees
from .calls import Calls
from .carries import Carries
from .expressions import Expressions
from .joins import Joins
from .loops import Loops
from .rendering import Rendering
from .state import SpecializerState
from .statements import Statements
from .tapes import Tapes


class Specializer(Statements, Expressions, Calls, Callees, Joins, Loops, Carries, Tapes, Rendering,
                  SpecializerState):
    """Partial evaluation of one generated function (see the package doc).

    ``func``: the ``ast.FunctionDef`` of the python stage; ``globals_``: its
    module's namespace; ``linemap``: python-stage line -> the user's Origin;
    ``args``: one abstract value per parameter."""
