"""Adapters to outside systems: ``promptcache.integrations.redis`` (the Redis cache and intention backend, extra
``redis``), ``promptcache.integrations.bedrock`` (Bedrock cache points, extra ``bedrock``) and
``promptcache.integrations.langgraph`` (the typed-memory node). Import the one you need; this package loads none."""

__all__: list[str] = []
