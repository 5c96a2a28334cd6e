"""Benchmarks and independent references for the engine (test and benchmark tooling only).

- ``ilp_reference``: the best opening value as an integer linear programme (HiGHS), written
  without the engine's meld or solver code, to check the solver against.
- ``solver_bench``: ``okey101 bench solver``, timing the solver and the reference on random deals.

``highspy`` is the ``bench`` extra (``make install`` adds it; the servers' image has none): it is
imported inside the functions that need it. No server imports this package.
"""
