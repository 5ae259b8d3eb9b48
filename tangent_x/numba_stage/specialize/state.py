"""The specialiser's state, and what every part of the walk does with it:
fresh names, errors located at the user's line, emitting statements, and
snapshots for a trial pass."""
import ast

from ...core.naming import Namer
from .. import unit_axes
from .hints import could_be_static, depends_on, describe_unassigned, static_hint
from .signals import SpecializationError
from .syntax import in_place_appends, scan_output_lists, stack_lists, stored_names
from .values import Dyn, Tape, is_container, mentions, substitute


class SpecializerState:
    """The state of one specialisation (see ``Specializer``) and the
    operations every part of the walk shares."""

    def __init__(self, func, globals_, linemap, origin=None):
        self.func = func
        self.globals = globals_
        self.linemap = linemap or {}
        self.origin = origin
        # the function's own variable names: a leaf of a joined or carried
        # container is never named like one of them (``return_value_1``
        # for leaf 1 of ``return_value`` may be another variable)
        self.source_names = {n.id for n in ast.walk(func) if isinstance(n, ast.Name)} | \
            {a.arg for a in func.args.args}
        self.namer = Namer(self.source_names | set(globals_))
        self.bound = {}          # name in the numba module -> object
        self.unbound_starts = set()  # variables started as None before a loop (optional.py)
        # carried variables of a finished loop that Python started as an int
        # before it -> the compiled flag saying they still hold that int (the
        # loop never assigned them), which Numba's one type per variable
        # (a float, joined with the loop's values) cannot say
        self.int_starts = {}
        self.int_flag_names = set()
        self.static_loops = []   # while loops being unrolled: dynamic_ifs at their start
        # carried variables whose loop runs its first iteration apart (``peel``):
        # numba names Numba refused holding a Python number, then an array
        self.peeled = set()
        self.split_lines = set()    # python-stage lines whose ifs split the paths (splitting)
        self.peel_values = {}    # such a variable -> (its value after that iteration, before)
        self.dynamic_ifs = 0     # depth of ifs on run-time tests being specialised
        self.if_loops = []       # for each of them, the compiled loops around it
        self.hidden = []         # (parameter name, value)
        self.hidden_ids = {}
        self.env = {}
        self.code = []           # statements being emitted (a stack of bodies)
        self.current = None      # the python-stage statement being specialised
        self.loops = []          # carried state of the enclosing dynamic loops
        self.joined_lists = {}   # per if-join: lists already joined, by (id, id)
        self.arguments = set()   # compiled variables holding the arguments (never updated)
        self.env_of_params = {}  # parameter -> its abstract value at the call
        self.emitting = True
        self.masks = set()       # variables holding boolean arrays (from comparisons)
        self.ranges = {}         # variables holding range(...): name -> its arguments
        # A tape that is only pushed, popped and measured keeps its size in
        # a variable of its own (list name -> size variable): a pop lowers
        # the size and reads, a push writes at the size (the tape starts
        # as None, allocated by the first push and grown when full by
        # numba_runtime.grown: numbers in a NumPy array, other values in a
        # list), and the tape never shrinks.  Numba's list.pop gives memory back as the
        # list empties, and a push after it takes it again: on a short loop
        # those reallocations cost as much as the arithmetic, and so do a
        # list's own allocations next to a single array's.
        self.stacks = stack_lists(func)
        self.scan_outputs = scan_output_lists(func)
        self.in_place_appends = in_place_appends(func)
        self.append_in_place = False
        self.append_source = None   # the name an ``appended`` call's list is read from
        self.sizes = {}
        # A tape of the versions of a list a loop grows (the gradient keeps
        # the list as each turn starts): the list only grows, so a version
        # is a prefix of it, and the tape keeps each version's length
        # (``Tapes.push_version``).  Lengths tape -> the list (a Tape), and
        # the lists' leaves so kept (a pop of them would overwrite items).
        self.version_lengths = {}
        self.versioned = set()
        self.version_rebinds = set()    # ... rebound to a version read back (``_pairs``)
        # Ranks of the argument arrays (part of the call signature): ``x.ndim``
        # is a constant, so ``(1,) * (x.ndim - 1)`` is a tuple Numba can type.
        # A name's entry lasts until code assigning that name is emitted (a
        # compiled variable keeps one rank in loops: Numba's types demand it).
        self.ranks = {}
        # Size-1 axes of arrays, for np.squeeze without axis (see unit_axes):
        # None unless the signature is specialised on them.
        self.units = None
        self.units_used = {}     # variables whose facts a squeeze read -> where
        self.units_history = {}  # variable -> the fact of each of its assignments
        self.param_units = {}

    @property
    def taken(self):
        """Names in use (saved and restored around trial specialisations)."""
        return self.namer.taken

    @taken.setter
    def taken(self, names):
        self.namer.restore(names)

    def fresh(self, hint):
        return self.namer.fresh(str(hint))

    def where(self, stmt=None):
        stmt = stmt if stmt is not None else self.current
        if stmt is not None:
            origin = self.linemap.get(getattr(stmt, "lineno", None))
            if origin is not None:
                return origin
        return self.origin

    def fail(self, message, hint=None):
        raise SpecializationError(message, self.where(), hint or self.static_hint())

    def fail_unbound(self, placeholder):
        """A variable the path taken never assigned reaches compiled code."""
        name = describe_unassigned(placeholder._name, self.where(), self.origin)
        self.fail(f"{name} is used here, but the "
                  "path taken does not assign it (Python raises UnboundLocalError)",
                  "assign it on every path before this line")

    def static_hint(self):
        """Advice for what cannot be compiled: marking an argument static
        only when the failing statement reads a value derived from an
        argument that could be static (a number or string, not an array)."""
        params = [a.arg for a in self.func.args.args
                  if could_be_static(self.env_of_params.get(a.arg), self.ranks)]
        reads = [] if self.current is None else \
            [n.id for n in ast.walk(self.current) if isinstance(n, ast.Name)]
        return static_hint(depends_on(self.func, reads, params))

    def emit(self, stmt):
        if self.emitting:
            if self.versioned and isinstance(stmt, (ast.Assign, ast.AugAssign)):
                # a list whose versions are kept by length, given another
                # list (its versions are then no prefixes of what it holds)
                for name in stored_names(stmt):
                    if name in self.versioned and name not in self.version_rebinds:
                        self.fail_list_versions(Tape(Dyn(name)))
            stmt._tx_src = getattr(self.current, "lineno", None)
            self.code.append(stmt)
            if self.ranks:
                for name in stored_names(stmt):
                    self.ranks.pop(name, None)
            if self.int_starts and not self.loops:
                for name in stored_names(stmt):
                    self.int_starts.pop(name, None)
            if self.loops and self.loops[0].int_flags and \
                    isinstance(stmt, (ast.Assign, ast.AugAssign)):
                flags = self.loops[0].int_flags
                for name in stored_names(stmt):
                    if name in flags:       # assigned by the loop: no longer the int
                        self.code.append(ast.Assign(
                            targets=[ast.Name(flags[name], ast.Store())],
                            value=ast.Constant(False), lineno=0))
            if self.units is not None:
                unit_axes.record(self, stmt)

    def assign(self, name, value_node):
        self.clobber(name)
        self.emit(ast.Assign(targets=[ast.Name(name, ast.Store())], value=value_node,
                             lineno=0))

    def clobber(self, name):
        """Before ``name`` is rebound, keep its old value under another name
        for every other variable (or container leaf) still reading it."""
        readers = [k for k, v in self.env.items() if k != name and mentions(v, name)]
        readers += [k for k, v in self.env.items() if k == name and is_container(v)
                    and mentions(v, name)]
        if not readers:
            return
        saved = self.fresh(f"{name}_saved")
        self.emit(ast.Assign(targets=[ast.Name(saved, ast.Store())],
                             value=ast.Name(name, ast.Load()), lineno=0))
        if name in self.sizes:
            self.sizes[saved] = self.fresh(f"{saved}_size")
            self.emit(ast.Assign(targets=[ast.Name(self.sizes[saved], ast.Store())],
                                 value=ast.Name(self.sizes[name], ast.Load()), lineno=0))
        for k in readers:
            self.env[k] = substitute(self.env[k], name, saved)
        for carried in self.loops:
            for k in list(carried.entry):
                if mentions(carried.entry[k], name) and k != name:
                    carried.entry[k] = substitute(carried.entry[k], name, saved)

    def snapshot(self):
        return (dict(self.env), list(self.code), self.emitting, set(self.taken),
                dict(self.bound), list(self.hidden), dict(self.hidden_ids))

    def restore(self, state):
        (self.env, self.code, self.emitting, self.taken, self.bound,
         self.hidden, self.hidden_ids) = state
