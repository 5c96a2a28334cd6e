"""LobbyService's RPCs by group, each a mixin of ``LobbyCalls`` (``base``): players and tokens
(``players``), tables (``tables``), quick match (``quick_match``) and tournaments
(``tournaments``). ``lobby.service.LobbyServicer`` is the four together: the one servicer gRPC
registers.
"""
