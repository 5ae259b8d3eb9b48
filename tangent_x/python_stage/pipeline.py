"""The python stage's optimisation pipeline: named passes, run in order.

After a transform has written a function's blocks, ``optimize`` runs the
passes of ``PIPELINE`` over them, each a rewrite in ``passes/``:

- ``peephole``: drop what shapes and signs make redundant (no-op
  ``unbroadcast``, double transposes, ``x * 1.0``);
- ``dead code``: statements whose results are never read, inside loops and
  branches too;
- ``unread tapes``: tapes pushed and popped for nothing (then dead code
  again, for what only they read);
- ``dead lists``: update lists in place where the old list is dead;
- ``in-place accumulation``: ``A_1 = A + b`` -> ``A += b`` where ``A`` is
  an accumulator nothing else reads;
- ``coalesce``: bind values under the names copies would give them.

Every pass takes the blocks and the ``Job`` (what is read at the end, and
the facts the caller knows) and returns the blocks.
"""
from dataclasses import dataclass
from typing import Callable

from ..core import ir
from .passes import peephole
from .passes.coalesce import coalesce
from .passes.dce import drop_unread_tapes, eliminate_dead_code
from .passes.inplace import accumulate_in_place, reuse_dead_lists


@dataclass
class Job:
    """What the passes know of the function they optimise.

    ``live``: names read at the end; ``grows(old, new)``: whether
    ``new = old + b`` may have more elements than ``old`` (vmap: a shared
    accumulator meeting a batched contribution), which ``old += b`` cannot
    hold; ``maybe_ints``: names bound outside the blocks (arguments) that
    may hold ints."""
    live: set
    grows: Callable = None
    maybe_ints: tuple = ()


def _peephole(blocks, job):
    peephole.simplify(blocks, job.live, job.maybe_ints)
    return blocks


def _dead_code(blocks, job):
    return eliminate_dead_code(blocks, job.live)


def _unread_tapes(blocks, job):
    if drop_unread_tapes(blocks, job.live):
        eliminate_dead_code(blocks, job.live)
    return blocks


def _dead_lists(blocks, job):
    return reuse_dead_lists(blocks, job.live)


def _inplace_accumulation(blocks, job):
    return accumulate_in_place(blocks, job.live, job.grows)


def _coalesce(blocks, job):
    return coalesce(blocks, job.live)


PIPELINE = (
    ("peephole", _peephole),
    ("dead code", _dead_code),
    ("unread tapes", _unread_tapes),
    ("dead lists", _dead_lists),
    ("in-place accumulation", _inplace_accumulation),
    ("coalesce", _coalesce),
)


def optimize(blocks, live, grows=None, maybe_ints=()):
    """Run ``PIPELINE`` over ``blocks`` (see the module docstring for the
    passes and ``Job`` for the arguments); the optimised blocks."""
    for block in blocks:      # the passes edit statements; transforms may share them
        block.stmts = ir.clone(block.stmts)
    job = Job(live, grows, maybe_ints)
    for _, run in PIPELINE:
        blocks = run(blocks, job)
    return blocks
