"""The meld solver: the best way a hand splits into runs and sets, exactly.

How it works (an exact method, after van Rijn, Takes and Vis's dynamic programme for Rummikub):

1. Sets live on one number, runs on one colour. For every number the hand could make a set of,
   the search tries every choice of tiles (and okeys) to put in sets there, including none.
2. What is left of each colour is solved by a dynamic programme over the places 1..13 (14 for the
   1 of 12-13-1 where allowed) whose state is the length of the (at most two) runs being built in
   that colour, capped at 3, and the okeys left. Its answer, for 0, 1 and 2 okeys, is cached by
   the colour's tile counts, so most colours of most hands are solved once per process.
3. The okeys left after the sets are shared out between the colours' runs.

A tile that must be used (the left discard, taken to open with) earns a bonus larger than any
hand's value, so the best arrangement uses it whenever any arrangement can. An opening must keep a
tile to discard: if the best arrangement uses every tile, the best of the hand less each distinct
tile is taken instead (any arrangement that keeps a tile is an arrangement of such a hand).

The solver's only promise is exactness, checked against an independent integer programme in the
tests and in ``okey101 bench solver``.

The modules, each asked only by those after it:

- ``arrangement``: what the solver is asked about (``Hand``) and answers (``Arrangement``);
- ``objective``: what the search maximises, the required tile's bonus, the impossible mark;
- ``sets``: the table of set splits; ``runs``: the runs' programme over one colour;
- ``search``: the search over sets with the runs at its leaves, and the melds it builds;
- ``bounds``: cheap upper bounds without solving;
- ``openings``: the questions asked of the search (``best_opening``, ``least_leftover``,
  ``lay_down_all_but_one``, ``most_tiles_down``, ``opening_value_bound``); ``pairs``:
  ``best_pairs``;
- ``playability``: playable tiles (a discard that costs +101) and ``can_use``, whether a tile
  taken from the left can go down this turn.

This package's ``__init__`` holds no code: import from the module (or from ``okey101.engine``).
"""
