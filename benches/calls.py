"""Timing one in-process call, shared by the Python benchmark scripts beside it."""
import statistics
import time


def median_ms(f, calls=21):
    """The median time of `calls` calls of `f`, in milliseconds."""
    ts = []
    for _ in range(calls):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3
