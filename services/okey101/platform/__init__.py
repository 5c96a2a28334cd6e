"""What every service shares: serving, interceptors, errors, logs, metrics, traces, tokens.

- ``config``: ``load_settings(service, args)`` from flags and ``OKEY_*`` variables
  (``docs/configuration.md``).
- ``server``: ``serve()`` / ``run()`` start a service; ``ServerHandle`` for in-process tests.
- ``errors``: the code → gRPC status table and ``abort_with(context, error)``.
- ``auth``: Ed25519 keys, ``TokenIssuer``, ``JwksVerifier``, ``AccessPolicy``,
  ``current_claims()``.
- ``logs``: ``configure_logging()``, ``get_logger()``, ``bind_ids()``.
- ``metrics``: the standard gRPC server metrics and the ``/metrics`` endpoint.
- ``tracing``: OpenTelemetry when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set.
"""
