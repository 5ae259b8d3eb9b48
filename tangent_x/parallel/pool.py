"""``Pool``: worker threads kept across pmap calls (one per device index).

Starting a thread costs tens of microseconds and a first-touch of its
stack; a compiled pmap step may take only a millisecond, so its workers are
started once and reused: ``run(size, work)`` hands ``work(k)`` to worker
``k`` for every ``k < size`` and blocks (no spinning: the caller's core is
the workers') until all have returned.  ``work`` must not raise (pmap's
``work`` catches everything and reports it).  One ``run`` at a time: a
second caller waits for the first (pmap's callers that cannot wait -- a
shard running pmap -- use threads of their own instead).  A forked child
starts workers of its own (the parent's do not exist in it).
"""
import os
import queue
import threading


class Pool:
    """Worker threads named ``prefix-k``, started as needed, kept for good."""

    def __init__(self, prefix="pmap-pool-worker"):
        self.prefix = prefix
        self._forked()
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self):
        """No workers (yet; or in a forked child, whose parent's threads stayed behind)."""
        self._queues = []
        self._threads = []
        self._lock = threading.Lock()
        self.busy = 0               # workers running a task now

    def _grow(self, size):
        while len(self._queues) < size:
            k = len(self._queues)
            tasks = queue.SimpleQueue()
            thread = threading.Thread(target=self._serve, args=(tasks,),
                                      name=f"{self.prefix}-{k}", daemon=True)
            self._queues.append(tasks)
            self._threads.append(thread)
            thread.start()

    def _serve(self, tasks):
        while True:
            work, k, done = tasks.get()
            try:
                work(k)
            finally:
                done.release()

    def run(self, size, work, interrupted=None):
        """``work(k)`` on worker ``k`` for each ``k < size``; returns when all
        have.  Interrupted while waiting (Ctrl-C), it calls ``interrupted()``
        (which should make the workers stop) and waits for them before
        re-raising, so that no worker outlives the call."""
        with self._lock:
            self._grow(size)
            done = threading.Semaphore(0)
            self.busy = size
            for k in range(size):
                self._queues[k].put((work, k, done))
            waiting = size
            try:
                while waiting:
                    done.acquire()
                    waiting -= 1
            except BaseException:
                if interrupted is not None:
                    interrupted()
                while waiting:
                    done.acquire()
                    waiting -= 1
                raise
            finally:
                self.busy = 0


POOL = Pool()
