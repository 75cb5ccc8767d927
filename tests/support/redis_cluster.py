"""A real local Redis Cluster for the tests: three masters on free loopback ports, started and stopped by PID.

``start_cluster(workdir)`` starts ``redis-server --cluster-enabled yes`` three times (each node's data port ``P``
and cluster bus port ``P + 10000`` checked free first), joins them with ``redis-cli --cluster create ...
--cluster-replicas 0 --cluster-yes`` and waits until every node reports ``cluster_state:ok``. ``LocalCluster.stop()``
terminates each process by its PID (nothing else is touched: the shared Redis on 6379 is never involved).
"""

from __future__ import annotations

import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode
from redis.retry import Retry

__all__ = ["ClusterUnavailable", "LocalCluster", "async_cluster_client", "cluster_client", "start_cluster"]

BUS_OFFSET = 10_000
"""Redis Cluster's bus port is the data port + 10000 (redis.conf, ``cluster-port`` default)."""


class ClusterUnavailable(RuntimeError):
    """``redis-server`` / ``redis-cli`` missing, or the cluster did not form."""


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports(count: int, rng: random.Random | None = None) -> list[int]:
    """``count`` ports ``P`` in 20000..45000 with ``P`` and ``P + 10000`` both free on 127.0.0.1 right now."""
    rng = rng or random.Random()
    ports: list[int] = []
    for _ in range(2000):
        port = rng.randrange(20_000, 45_000)
        if port in ports or port + BUS_OFFSET in ports or port - BUS_OFFSET in ports:
            continue
        if _free(port) and _free(port + BUS_OFFSET):
            ports.append(port)
            if len(ports) == count:
                return ports
    raise ClusterUnavailable(f"could not find {count} free port pairs (P, P+{BUS_OFFSET}) on 127.0.0.1")


@dataclass
class LocalCluster:
    """A running local cluster: its ports, processes and working directory."""

    ports: list[int]
    workdir: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def nodes(self) -> list[ClusterNode]:
        """Startup nodes for ``redis.cluster.RedisCluster(startup_nodes=...)``."""
        return [ClusterNode("127.0.0.1", p) for p in self.ports]

    @property
    def url(self) -> str:
        """A URL of one node (``RedisCluster.from_url`` discovers the others)."""
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def node_client(self, port: int) -> redis.Redis:
        """A plain client of one node (for ``CLUSTER``/``INFO`` commands and per-node checks)."""
        return redis.Redis(host="127.0.0.1", port=port, socket_timeout=2, socket_connect_timeout=2)

    def port_of_key(self, key: str) -> int:
        """The port of the master that holds ``key``'s slot."""
        port = next(p for p, proc in zip(self.ports, self.procs) if proc.poll() is None)  # ask a live node
        with self.node_client(port) as client:
            slot = client.cluster("KEYSLOT", key)
            for start, end, master, *_ in client.cluster("SLOTS"):
                if start <= slot <= end:
                    return int(master[1])
        raise AssertionError(f"slot of {key!r} not covered")

    def kill(self, port: int) -> None:
        """Kill the node on ``port`` (SIGKILL, by PID) and wait for the process to end."""
        proc = self.procs[self.ports.index(port)]
        proc.kill()
        proc.wait(timeout=10)

    def stop(self) -> None:
        """Stop every node this cluster started (SIGTERM by PID, SIGKILL after 5 s)."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        shutil.rmtree(self.workdir, ignore_errors=True)


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGTERM it when the test process dies (prctl PR_SET_PDEATHSIG), so an
    interrupted session leaves no redis-server behind."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _spawn(port: int, workdir: Path) -> subprocess.Popen[bytes]:
    node_dir = workdir / str(port)
    node_dir.mkdir(parents=True, exist_ok=True)
    args = [
        "redis-server",
        "--cluster-enabled", "yes",
        "--cluster-config-file", str(node_dir / "nodes.conf"),
        "--cluster-node-timeout", "2000",
        "--port", str(port),
        "--bind", "127.0.0.1",
        "--save", "",
        "--appendonly", "no",
        "--daemonize", "no",
        "--dir", str(node_dir),
        "--logfile", str(node_dir / "redis.log"),
    ]  # fmt: skip
    linux = sys.platform.startswith("linux")
    return subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_die_with_parent if linux else None
    )


def _wait(predicate: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except (redis.RedisError, OSError):
            pass
        time.sleep(0.05)
    raise ClusterUnavailable(f"timed out after {timeout_s:g}s waiting for {what}")


def _try_start(workdir: Path, masters: int) -> LocalCluster:
    cluster = LocalCluster(ports=free_ports(masters), workdir=workdir)
    try:
        cluster.procs = [_spawn(p, workdir) for p in cluster.ports]
        for port, proc in zip(cluster.ports, cluster.procs):

            def up(port: int = port, proc: subprocess.Popen[bytes] = proc) -> bool:
                if proc.poll() is not None:
                    raise ClusterUnavailable(f"redis-server on port {port} exited with {proc.returncode}")
                with cluster.node_client(port) as client:
                    return bool(client.ping())

            _wait(up, 10, f"redis-server on port {port}")
        create = subprocess.run(
            ["redis-cli", "--cluster", "create", *(f"127.0.0.1:{p}" for p in cluster.ports)]
            + ["--cluster-replicas", "0", "--cluster-yes"],
            capture_output=True,
            timeout=60,
        )
        if create.returncode != 0:
            raise ClusterUnavailable(f"redis-cli --cluster create failed: {create.stdout[-500:]!r}")

        def ok() -> bool:
            for port in cluster.ports:
                with cluster.node_client(port) as client:
                    info = client.cluster("INFO")
                    if info.get("cluster_state") != "ok" or int(info.get("cluster_known_nodes", 0)) != masters:
                        return False
            return True

        _wait(ok, 30, "cluster_state:ok on every node")
        return cluster
    except BaseException:
        cluster.stop()
        raise


def start_cluster(workdir: Path, masters: int = 3, attempts: int = 3) -> LocalCluster:
    """Start a ``masters``-node cluster under ``workdir`` (retried on other ports if a port was taken meanwhile).

    Raises:
        ClusterUnavailable: ``redis-server``/``redis-cli`` not installed, or no attempt formed a cluster.
    """
    for tool in ("redis-server", "redis-cli"):
        if shutil.which(tool) is None:
            raise ClusterUnavailable(f"{tool} is not installed")
    error: Exception | None = None
    for attempt in range(attempts):
        try:
            return _try_start(workdir / f"try{attempt}", masters)
        except ClusterUnavailable as exc:
            error = exc
    raise ClusterUnavailable(f"no cluster after {attempts} attempts: {error}")


def cluster_client(cluster: LocalCluster, **options: Any) -> redis.cluster.RedisCluster:
    """A sync ``RedisCluster`` client with short timeouts and no retries (so a dead node fails fast)."""
    opts: dict[str, Any] = dict(socket_timeout=0.5, socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0))
    opts.update(options)
    return redis.cluster.RedisCluster(startup_nodes=cluster.nodes, **opts)


def async_cluster_client(cluster: LocalCluster, **options: Any) -> Any:
    """A ``redis.asyncio.cluster.RedisCluster`` client with short timeouts and no retries."""
    from redis.asyncio.cluster import ClusterNode as AsyncNode
    from redis.asyncio.cluster import RedisCluster as AsyncCluster
    from redis.asyncio.retry import Retry as AsyncRetry

    opts: dict[str, Any] = dict(socket_timeout=0.5, socket_connect_timeout=0.5, retry=AsyncRetry(NoBackoff(), 0))
    opts.update(options)
    return AsyncCluster(startup_nodes=[AsyncNode("127.0.0.1", p) for p in cluster.ports], **opts)
