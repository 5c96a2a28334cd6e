"""The edge: every public RPC as Connect, gRPC-Web and gRPC over HTTP, for browsers.

``okey101 serve edge`` runs it (``service.serve_edge``); ``routes`` is the one list of public
and internal RPCs; ``forward`` forwards each public call to its service over gRPC; ``app`` is
the ASGI application (CORS, health, the web client's files). See docs/edge.md.
"""
