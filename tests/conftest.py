"""Shared fixtures: real Redis and PostgreSQL (skip without them, fail with CI=true), backends, models."""

from __future__ import annotations

import os
import uuid

import pytest

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
POSTGRES_URL = os.environ.get("POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def service_missing(name: str, reason: str) -> None:
    """Skip the test, or fail it when CI=true (CI must never pass by skipping its services)."""
    message = f"{name} is not available ({reason})"
    if IN_CI:
        pytest.fail(f"{message}; CI=true requires it", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def redis_url() -> str:
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1, socket_timeout=1)
    try:
        client.ping()
    except Exception as exc:  # noqa: BLE001 - any failure means "not available"
        service_missing(f"Redis at {REDIS_URL}", f"{type(exc).__name__}: {exc}")
    finally:
        client.close()
    return REDIS_URL


@pytest.fixture
def redis_prefix(redis_url: str):
    """A unique key prefix for one test; every key under it is removed afterwards."""
    import redis

    prefix = f"pctest:{uuid.uuid4().hex[:12]}:"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(match=prefix + "*", count=1000))
    if keys:
        client.delete(*keys)
    client.close()


@pytest.fixture
def redis_client(redis_url: str):
    import redis

    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
def redis_cache(redis_url: str, redis_prefix: str):
    from promptcache.integrations.redis import RedisCache

    cache = RedisCache(url=redis_url, prefix=redis_prefix)
    yield cache
    cache.close()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory):
    """A local 3-master Redis Cluster for the session (``support.redis_cluster.LocalCluster``), stopped by PID at the
    end. Skips without ``redis-server``/``redis-cli``; fails with CI=true."""
    from support.redis_cluster import ClusterUnavailable, start_cluster

    try:
        cluster = start_cluster(tmp_path_factory.mktemp("redis-cluster"))
    except ClusterUnavailable as exc:
        service_missing("Redis Cluster", str(exc))
    yield cluster
    cluster.stop()


@pytest.fixture
def redis_cluster_cache(redis_cluster, redis_prefix: str):
    """``RedisCache`` on the session's Redis Cluster (``url=..., cluster=True``: sync and per-loop async clients)."""
    from promptcache.integrations.redis import RedisCache

    cache = RedisCache(url=redis_cluster.url, cluster=True, prefix=redis_prefix)
    yield cache
    # Every namespace under the prefix (the cache's own ``cache:``, placements', ...), not only ``cache.clear()``'s.
    keys = list(cache.client.scan_iter(match=redis_prefix + "*", count=1000))
    if keys:
        cache.client.unlink(*keys)
    cache.close()


@pytest.fixture
def redis_cluster_intention(redis_cluster, redis_prefix: str):
    """``RedisIntentionBackend`` on the session's Redis Cluster (``url=..., cluster=True``); its keys removed after."""
    from promptcache.integrations._redis_intention import RedisIntentionBackend

    backend = RedisIntentionBackend(url=redis_cluster.url, cluster=True, prefix=redis_prefix)
    yield backend
    keys = list(backend.client.scan_iter(match=redis_prefix + "*", count=1000))
    if keys:
        backend.client.unlink(*keys)
    backend.close()


@pytest.fixture(params=["memory", "redis", "redis-cluster"])
def server_cache(request):
    """Each backend in turn: the in-memory default, RedisCache on real Redis and on a real Redis Cluster."""
    if request.param == "memory":
        from promptcache.backends import InMemoryServerCache

        return InMemoryServerCache(max_entries=1000)
    if request.param == "redis-cluster":
        return request.getfixturevalue("redis_cluster_cache")
    return request.getfixturevalue("redis_cache")


@pytest.fixture(scope="session")
def postgres_url() -> str:
    try:
        import psycopg
    except ImportError as exc:
        service_missing("PostgreSQL driver psycopg", str(exc))
    try:
        with psycopg.connect(POSTGRES_URL, connect_timeout=2) as conn:
            conn.execute("SELECT 1")
    except Exception as exc:  # noqa: BLE001
        service_missing(f"PostgreSQL at {POSTGRES_URL}", f"{type(exc).__name__}: {exc}")
    return POSTGRES_URL


@pytest.fixture
def pg_store(postgres_url: str):
    """A set-up LangGraph ``PostgresStore`` on the test database (real PostgreSQL)."""
    from langgraph.store.postgres import PostgresStore

    with PostgresStore.from_conn_string(postgres_url) as store:
        store.setup()
        yield store


@pytest.fixture
def pg_memory(pg_store):
    """A ``TypedMemoryStore`` on ``pg_store`` under a unique prefix, purged afterwards."""
    from support.memory import purge_prefix

    from promptcache.memory import TypedMemoryStore

    prefix = ("pctest", uuid.uuid4().hex[:12])
    yield TypedMemoryStore(pg_store, prefix=prefix)
    purge_prefix(pg_store, prefix)
