"""Computer players: the next step of a seat, from what a person in that seat may know.

``decide(view, rules, level, seed, memory)`` answers the actions of the current phase and a short
reason:

- in the draw phase, one action: draw from the stock or take the left discard;
- in the play phase (``FIRST`` or ``PLAY``, the drawn tile seen): the rest of the turn, what to
  put down (open, new melds, lay-offs, an okey taken back) and the discard that ends it; or,
  where the rules give a taken tile back for +101 and it cannot be used, the single
  ``GiveBack`` (a draw-phase step follows).

The bot sees only the ``SeatView``: its own rack, the table, every discard pile, who opened and
how, the +101s, the tile counts, the stock count, the takeable tile and the phase. To check that
its moves are legal it builds a *shadow* ``HandState`` from the view alone (``shadow``: why a
move legal there is legal at the real table).

``BotMemory`` is what a bot may remember between its turns: the tiles it saw thrown, the ones
taken from the discard piles (and by whom), who showed the indicator, and what the seat to move
has done so far this turn. The caller builds it from the events the seat received
(``BotMemory.from_events`` / ``memory.observe(events)``); without it the bot plays from the view
alone (and assumes it is asked at the start of a phase).

Levels:

- ``RANDOM``: the engine's ``RandomPlayer`` (a random legal turn), played on the shadow. Also
  ``fallback_decision``: the table's local fallback when the bot service is unreachable.
- ``EASY``: greedy. Always draws; opens as soon as it can (runs, else pairs); lays down and lays
  off whatever fits; discards the highest loose tile (outside its best melds) that is neither
  playable nor the okey.
- ``NORMAL``: uses the solver. Keeps the tiles that build melds (its best arrangement, by value
  while closed and by ``least_leftover`` once open, and the partial runs and sets around it,
  weighed by how many copies of the missing tile it does not hold itself); never throws a
  playable tile or the okey without reason; takes the left discard when it opens or finishes
  with it or, opened, puts it down; picks the opening (runs or pairs, value or least left) that
  leaves the fewest points; lays the whole hand down when it can.
- ``HARD``: ``NORMAL`` plus: counting (tiles thrown, laid down or taken by others cannot
  complete a meld, so the chances of partial melds come from the tiles still unseen); near the
  opening minimum, the chance that one more tile opens, for each possible discard; when to
  open: aims at pairs when it holds four and runs are far, and holds a pairs opening while runs
  are near and time remains; the turns it has left (it throws its highest tiles as the stock
  runs out and lays off even okeys on its last turn); taking an okey back when the put-down
  then leaves fewer points; not feeding the next seat (it avoids tiles near the ones that seat
  picked up, and prefers tiles it threw itself); going out: once opened it searches the
  put-downs (lay-offs of any tile, okeys included, onto every seat's melds, new melds, okey
  take-backs) for one that leaves a single tile to throw (``finish``), keeps the loose tiles
  likeliest to go down (the finish nearer, whatever their number), and with the stock nearly
  out opens even with a +101 discard when that costs less than never opening.

- ``EXPERT``: ``HARD``'s turn and its rivals (draw or take; the same put-down with other
  discards), each played in worlds sampled from the tiles the seat has not seen (a tile another
  seat took stays in its rack) and the hand played out by greedy random players; the rival
  that beats ``HARD``'s turn by more than the noise is played (``expert``). Bounded by a count
  of rollouts and a time budget (``ExpertBudget``).

Every level is a function of (view, rules, level, seed, memory): ``RANDOM`` and ``EXPERT`` draw on
``random.Random(seed)``, the others use no randomness at all (``EXPERT`` with a time budget may
weigh fewer worlds on a slow machine: its count of rollouts is the deterministic bound).

The modules, each using only those before it:

- ``levels``: ``BotLevel``, the stronger levels' knobs (``Tuning``), the ``Decision``;
- ``memory``: ``BotMemory``; ``shadow``: ``shadow_state``;
- ``plan``: actions applied one by one to the shadow; ``context``: what the seat knows and the
  estimates built from it;
- ``random_level``: ``RANDOM``; ``evaluation``: what a plan or keeping a tile is worth;
- ``discard``, ``put_down``, ``finish``, ``opening``: the discard, the lay-downs and lay-offs
  after opening, the search for a put-down that goes out, the opening; ``play`` and ``draw``:
  the two phases; ``expert``: ``EXPERT``'s rollouts;
- ``entry_points``: ``decide`` and ``fallback_decision``.

This package's ``__init__`` holds no code: import from the module (or from ``okey101.engine``).
"""
