"""``Pool``: worker threads kept across pmap calls (one per device index).

Starting a thread costs tens of microseconds and a first-touch of its
stack; a compiled pmap step may take only a millisecond, so its workers are
started once and reused: ``run(size, work)`` hands ``work(k)`` to worker
``k`` for every ``k < size`` and blocks (no spinning: the caller's core is
the workers') until all have returned.  ``work`` must not raise (pmap's
``work`` catches everything and reports it).  One ``run`` at a time: a
second caller waits for the first (pmap's callers that cannot wait -- a
shard running pmap -- use threads of their own instead).
"""
import queue
import threading


class Pool:
    def __init__(self, prefix="pmap-pool-worker"):
        self.prefix = prefix
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

    def run(self, size, work):
        """``work(k)`` on worker ``k`` for each ``k < size``; returns when all have."""
        with self._lock:
            self._grow(size)
            done = threading.Semaphore(0)
            self.busy = size
            for k in range(size):
                self._queues[k].put((work, k, done))
            for _ in range(size):
                done.acquire()
            self.busy = 0


POOL = Pool()
