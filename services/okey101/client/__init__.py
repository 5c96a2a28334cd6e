"""The terminal client (``okey101 play`` / ``okey101 watch``) and its session over the public
API, which ``okey101 simulate``, the end-to-end tests and docs/integration.md's example share."""
