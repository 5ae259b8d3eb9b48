"""What the Numba implementations are built from: tests on Numba types, the
in-place allocation ``empty``, loop nests generated as source per rank, the
BLAS binding and the float64 matrix product kernel.  Nothing here registers
an implementation of a helper generated code calls (see ``overloads``)."""
