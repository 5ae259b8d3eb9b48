"""Groups of devices that collectives span: threads in one process
(group.py) and processes of an ``mpiexec`` launch (mpi.py)."""
