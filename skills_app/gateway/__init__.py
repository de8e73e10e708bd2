"""What every front door shares about HTTP and transport: the error envelope and its JSON
responses, token authentication, rate limiting, download headers and query-parameter checks.

The doors (``api``, ``mcp``, ``console``, the management commands) adapt these; the gateway
itself imports the core, never a door, a service or a selector.
"""
