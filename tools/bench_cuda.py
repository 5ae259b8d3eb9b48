"""Throughput of jit(vmap(f), target="cuda") against the GPU's memory bandwidth.

For each workload (a per-example gradient of tanh, a Newton square root per
thread, the same as its gradient) it times the kernel on device arrays
(compiled and warmed first, ``cuda.synchronize`` around the launches) and
reports examples per second, the bytes the kernel must move (its inputs
read once, its results written once) per second, and that as a fraction of
the device's peak memory bandwidth (from its memory clock and bus width).
A kernel near the bandwidth is memory bound, as elementwise work should be;
far below it, the per-thread work (a while loop) is what costs.

    python tools/bench_cuda.py [--n 10000000] [--repeat 10]

Needs the ``[cuda]`` extra and a GPU: where there is none (or only the
simulator) it says so and exits 0, measuring nothing.
"""
import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)


def workloads(n):
    import tangent_x as tx
    # the functions the simulator's acceptance cases check (tests/cuda_sim_cases.py)
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from cuda_sim_cases import newton_sqrt, tanh_out

    xs = np.linspace(-3.0, 3.0, n)
    ys = np.linspace(0.5, 900.0, n)
    return [("grad tanh", tx.vmap(tx.grad(tanh_out)), xs),
            ("newton sqrt (while per thread)", tx.vmap(newton_sqrt), ys),
            ("grad newton sqrt (taped loop)", tx.vmap(tx.grad(newton_sqrt)), ys)]


def peak_bandwidth(cuda):
    """Bytes per second the device's memory moves at most, or None."""
    device = cuda.get_current_device()
    try:
        clock = device.MEMORY_CLOCK_RATE * 1e3        # kHz -> Hz
        bus = device.GLOBAL_MEMORY_BUS_WIDTH           # bits
    except Exception:
        return None
    return 2.0 * clock * bus / 8.0                      # double data rate


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args(argv)
    from tangent_x.cuda_stage.available import has_cuda_extra, simulated
    if not has_cuda_extra():
        print('no CUDA extra installed (pip install "tangent_x[cuda]"): nothing measured')
        return 0
    if simulated():
        print("NUMBA_ENABLE_CUDASIM is set: the simulator has no bandwidth to measure")
        return 0
    from numba import cuda
    try:
        available = cuda.is_available()
    except Exception:
        available = False
    if not available:
        print("no CUDA GPU on this machine: nothing measured "
              "(the kernels are checked as PTX by tests/test_cuda.py instead)")
        return 0
    import tangent_x as tx
    device = cuda.get_current_device()
    peak = peak_bandwidth(cuda)
    print(f"device: {device.name.decode() if isinstance(device.name, bytes) else device.name}, "
          f"peak memory bandwidth {peak / 1e9:.0f} GB/s" if peak else "peak bandwidth unknown")
    print(f"{'workload':34} {'examples/s':>12} {'GB/s':>8} {'of peak':>8}")
    for name, vf, host in workloads(args.n):
        kernel = tx.jit(vf, target="cuda")
        x = cuda.to_device(host)
        out = kernel(x)                                  # compile, warm
        cuda.synchronize()
        start = time.perf_counter()
        for _ in range(args.repeat):
            out = kernel(x)
        cuda.synchronize()
        seconds = (time.perf_counter() - start) / args.repeat
        moved = host.nbytes + out.size * out.dtype.itemsize
        rate = moved / seconds
        share = f"{100 * rate / peak:.0f}%" if peak else "?"
        print(f"{name:34} {args.n / seconds:12.3g} {rate / 1e9:8.1f} {share:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
