"""The GIL check shared by the suites: how often a second Python thread ran while `work`
ran in this one (more than 0 only if `work` released the GIL)."""

import threading
import time


def ticks_during(work):
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.0005)

    th = threading.Thread(target=count)
    th.start()
    try:
        before = len(ticks)
        work()
        return len(ticks) - before
    finally:
        stop.set()
        th.join()
