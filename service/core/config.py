"""Service settings, read once from the environment (12-factor): every process of a deployment -- API, workers,
CLI -- builds the same ``Settings`` from the same variables, so they agree on the database, broker and blobs."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from ipaddress import IPv4Network, IPv6Network
from pathlib import Path

from evaluation.formats.source import DecodeLimits


def default_data_dir() -> Path:
    """Where the embedded default keeps its SQLite files and blobs: ``$XDG_DATA_HOME/evalserve``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "evalserve"


#: ports of services that are never webhook receivers: a plain allow-list entry (no port) still refuses them
#: (Redis, PostgreSQL, MySQL, AMQP, memcached, MongoDB, Elasticsearch, SMTP, SSH, etcd, ZooKeeper, Kafka, ...)
SERVICE_PORTS = frozenset({21, 22, 23, 25, 110, 143, 465, 587, 993, 995, 1433, 1521, 2049, 2375, 2376, 2379, 2380,
                           2181, 3306, 3389, 4369, 5432, 5672, 5984, 6379, 6380, 8500, 9042, 9092, 9200, 9300,
                           11211, 15672, 25672, 26379, 27017, 27018, 28017})


@dataclass(frozen=True)
class AllowEntry:
    """One entry of the operator's webhook allow-list: a network and, if named, the one port allowed on it. A
    plain entry (``port`` None) allows every port but the well-known service ports (``SERVICE_PORTS``)."""

    network: IPv4Network | IPv6Network
    port: int | None = None

    def admits(self, port: int) -> bool:
        """May a webhook go to ``port`` on this entry's network?"""
        return port == self.port if self.port is not None else port not in SERVICE_PORTS

    def __str__(self) -> str:
        if self.port is None:
            return str(self.network)
        net = str(self.network.network_address) if self.network.prefixlen == self.network.max_prefixlen \
            else str(self.network)
        return f"[{net}]:{self.port}" if self.network.version == 6 else f"{net}:{self.port}"


def parse_allow_entry(text: str) -> AllowEntry:
    """One allow-list entry: a CIDR or address (``127.0.0.1/32``, ``::1``), optionally with a port
    (``127.0.0.1:8081``, ``10.0.0.0/8:8443``, ``[::1]:8081``, ``[fd00::/8]:443``); ValueError if malformed."""
    text = text.strip()
    port: int | None = None
    if text.startswith("["):
        inside, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(f"{text!r} is not a [IPv6]:port allow-list entry")
        text, port = inside, (_port(rest[1:], text) if rest else None)
    elif text.count(":") == 1:  # IPv4 (or IPv4 CIDR) with a port; bare IPv6 has two colons or more
        text, _, named = text.partition(":")
        port = _port(named, text)
    return AllowEntry(ipaddress.ip_network(text, strict=False), port)


def _port(text: str, entry: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"{text!r} is not a valid port in the allow-list entry {entry!r}")
    return int(text)


def parse_networks(text: str) -> tuple[AllowEntry, ...]:
    """``EVALSERVE_WEBHOOK_ALLOW_NETWORKS``: comma-separated entries, each a CIDR with an optional port
    (``127.0.0.1:8081,10.0.0.0/8,[::1]:8081``); ValueError for a malformed one, so a typo stops the service at
    start rather than refusing every webhook later."""
    return tuple(parse_allow_entry(part) for part in text.split(",") if part.strip())


@dataclass(frozen=True)
class Limits:
    """Per-user limits of a public instance: request rates per user, storage and job quotas, and what one request
    may carry. A rate is a limits string ("1200/minute", "10/hour"; empty: off); a quota of 0 is off. Admin tokens
    are exempt from the rates and quotas (not from the per-request limits)."""

    rate: str = "1200/minute"  # every request of a user (anonymous callers: per address); /health exempt
    upload_rate: str = "60/minute"  # POSTs that upload files or queue work
    register_rate: str = "10/hour"  # registration attempts per user and task (guessing registration codes)
    #: where the rate counters live (a ``limits`` storage URI); empty: Redis when the deployment has it, else a
    #: SQLite file in the data directory shared by the machine's API processes (``access.rate_limits``)
    storage: str = ""
    storage_bytes: int = 1024 * 1024 * 1024  # stored runs and collections per user (distinct blobs)
    active_jobs: int = 20  # queued + running jobs per user
    jobs_per_day: int = 1000  # jobs per user per UTC day
    max_measures: int = 200  # measures per evaluation request
    max_runs_per_request: int = 100  # run files (or stored runs) per request
    max_form_parts: int = 1000  # multipart parts (files and fields) of one request
    waits_per_caller: int = 20  # long-polls (?wait=) one caller holds at once, per API process
    waits_total: int = 1000  # long-polls held at once by one API process, all callers together

    @classmethod
    def from_env(cls, env: dict[str, str]) -> Limits:
        """``EVALSERVE_RATE_LIMIT`` (default 1200/minute), ``EVALSERVE_UPLOAD_RATE_LIMIT`` (60/minute),
        ``EVALSERVE_REGISTER_RATE_LIMIT`` (10/hour), ``EVALSERVE_RATE_LIMIT_STORAGE`` (empty: ``REDIS_URL`` or
        ``evalserve+sqlite:///DATA_DIR/ratelimits.db``), ``EVALSERVE_QUOTA_STORAGE_MB`` (1024),
        ``EVALSERVE_QUOTA_ACTIVE_JOBS`` (20), ``EVALSERVE_QUOTA_JOBS_PER_DAY`` (1000),
        ``EVALSERVE_MAX_RUNS_PER_REQUEST`` (100), ``EVALSERVE_MAX_FORM_PARTS`` (1000),
        ``EVALSERVE_MAX_WAITS_PER_CALLER`` (20), ``EVALSERVE_MAX_WAITS`` (1000)."""
        return cls(
            rate=env.get("EVALSERVE_RATE_LIMIT", cls.rate).strip(),
            upload_rate=env.get("EVALSERVE_UPLOAD_RATE_LIMIT", cls.upload_rate).strip(),
            register_rate=env.get("EVALSERVE_REGISTER_RATE_LIMIT", cls.register_rate).strip(),
            storage=env.get("EVALSERVE_RATE_LIMIT_STORAGE", cls.storage).strip(),
            storage_bytes=int(float(env.get("EVALSERVE_QUOTA_STORAGE_MB", "1024")) * 1024 * 1024),
            active_jobs=int(env.get("EVALSERVE_QUOTA_ACTIVE_JOBS", str(cls.active_jobs))),
            jobs_per_day=int(env.get("EVALSERVE_QUOTA_JOBS_PER_DAY", str(cls.jobs_per_day))),
            max_runs_per_request=int(env.get("EVALSERVE_MAX_RUNS_PER_REQUEST", str(cls.max_runs_per_request))),
            max_form_parts=int(env.get("EVALSERVE_MAX_FORM_PARTS", str(cls.max_form_parts))),
            waits_per_caller=int(env.get("EVALSERVE_MAX_WAITS_PER_CALLER", str(cls.waits_per_caller))),
            waits_total=int(env.get("EVALSERVE_MAX_WAITS", str(cls.waits_total))),
        )


@dataclass(frozen=True)
class UploadBudget:
    """How many uploads an API process validates at once and how many bytes of inflated input they may hold
    (``inputs.inflight``): over it, ``503 uploads-busy`` with ``Retry-After``, decided before the body is read
    from its declared size where it can be. ``global_bytes`` is shared by every process through Redis (0: off)."""

    process_bytes: int = 1024 * 1024 * 1024  # inflated input being validated in one API process
    global_bytes: int = 4096 * 1024 * 1024  # ... in the whole deployment (with REDIS_URL only)
    slots: int = 4  # uploads being validated at once in one API process
    per_caller: int = 2  # ... of them from one caller (``access.principal.budget_owner``)
    assumed_ratio: float = 20.0  # a body is assumed to inflate to this many times its size until it is read
    retry_seconds: int = 10  # the Retry-After of a refusal for the budget's bytes (for its slots: 1 s)

    @classmethod
    def from_env(cls, env: dict[str, str]) -> UploadBudget:
        """``EVALSERVE_UPLOAD_BUDGET_MB`` (1024), ``EVALSERVE_UPLOAD_GLOBAL_BUDGET_MB`` (4096; 0: off),
        ``EVALSERVE_UPLOADS_IN_FLIGHT`` (4), ``EVALSERVE_UPLOADS_IN_FLIGHT_PER_CALLER`` (2),
        ``EVALSERVE_UPLOAD_ASSUMED_RATIO`` (20), ``EVALSERVE_UPLOAD_RETRY_SECONDS`` (10)."""
        return cls(
            process_bytes=int(float(env.get("EVALSERVE_UPLOAD_BUDGET_MB", "1024")) * 1024 * 1024),
            global_bytes=int(float(env.get("EVALSERVE_UPLOAD_GLOBAL_BUDGET_MB", "4096")) * 1024 * 1024),
            slots=int(env.get("EVALSERVE_UPLOADS_IN_FLIGHT", str(cls.slots))),
            per_caller=int(env.get("EVALSERVE_UPLOADS_IN_FLIGHT_PER_CALLER", str(cls.per_caller))),
            assumed_ratio=float(env.get("EVALSERVE_UPLOAD_ASSUMED_RATIO", str(cls.assumed_ratio))),
            retry_seconds=int(env.get("EVALSERVE_UPLOAD_RETRY_SECONDS", str(cls.retry_seconds))),
        )


@dataclass(frozen=True)
class Settings:
    """What a deployment is configured with; ``from_env`` documents each variable."""

    data_dir: Path
    database_url: str
    broker_url: str
    blob_dir: Path | None = None  # None: blobs live in the database (every worker can read them)
    max_upload_bytes: int = 512 * 1024 * 1024
    max_decompressed_bytes: int = 2048 * 1024 * 1024  # one upload (or stored file) once gunzipped
    max_line_bytes: int = DecodeLimits.max_line_bytes  # one line of a line-based input (JSON documents exempt)
    max_lines: int = DecodeLimits.max_lines  # lines of one input (an MS MARCO run has 7 million)
    lease_seconds: float = 60.0  # a running job whose worker stopped renewing its lease this long is re-run
    requeue_after_seconds: float = 120.0  # a queued job not picked up this long is published to the broker again
    sweep_every_seconds: float = 10.0
    job_time_limit_seconds: float = 6 * 3600.0
    max_attempts: int = 5
    queue: str = "evalserve"  # broker queue name: deployments sharing one Redis keep apart by name
    webhook_max_attempts: int = 8  # a webhook delivery still failing after this many attempts is marked failed
    webhook_backoff_seconds: float = 30.0  # the wait after a delivery's first failed attempt; doubled each time
    webhook_timeout_seconds: float = 5.0  # one delivery attempt's read/write timeout (and its answer's deadline)
    webhook_connect_timeout_seconds: float = 3.0  # one delivery attempt's connect timeout
    webhook_owner_concurrency: int = 2  # deliveries of one owner (budget_owner) in flight at once, all workers
    webhook_target_concurrency: int = 2  # deliveries to one host:port in flight at once, all workers
    webhook_defer_seconds: float = 2.0  # a delivery held back by a cap is tried again after about this long
    webhook_breaker_failures: int = 5  # consecutive failed attempts to one host:port that open its circuit
    webhook_breaker_seconds: float = 120.0  # how long an open circuit sends nothing to its host:port
    limits: Limits = field(default_factory=lambda: Limits())
    uploads: UploadBudget = field(default_factory=lambda: UploadBudget())
    # networks webhooks may be sent to although they are not public (loopback, private...): empty by default
    webhook_allow_networks: tuple[AllowEntry, ...] = ()
    max_webhooks_per_task: int = 20  # active webhooks of one task
    webhook_ping_interval_seconds: float = 10.0  # one ping per webhook per this many seconds
    webhook_task_pings_per_minute: int = 10  # pings over all of a task's webhooks in any 60 s
    task_default_quota_per_day: int = 5  # a new phase's quota_per_day when its organiser names none (0: none)
    worker_heartbeat_seconds: float = 5.0  # how often each worker process writes its heartbeat row
    health_worker_stale_seconds: float = 30.0  # /health is degraded when no worker heartbeated this recently
    health_queue_stale_seconds: float = 300.0  # ... or when a job has been queued longer than this
    # an evaluation worker still resident over this after a job (and after giving freed memory back) is replaced by
    # a fresh process once the job is acknowledged (``jobrun.memory``); 0: never
    worker_max_rss_mb: float = 1024.0
    # how long ``serve`` waits for the API's first answer before it says on the terminal that the API has not
    # answered; it keeps waiting while the API process runs, and never stops an API that answers
    serve_start_seconds: float = 60.0
    split_runs: int = 10  # an evaluation job is split into parts of at least this many runs (0: never split)
    split_max_parts: int = 16  # ... and into at most this many parts
    catalogue_dir: Path | None = None  # where published judgment sets lie (POST /v1/catalogue)
    signup: bool = False  # anyone may create a user (read, submit) with POST /v1/users; else admins only
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def webhook_queue(self) -> str:
        """The broker queue of webhook deliveries: apart from evaluations, so a slow receiver never holds up a
        job (its own worker process, ``evalserve.cli.serve.webhook_worker_command``)."""
        return f"{self.queue}.webhooks"

    @property
    def decode_limits(self) -> DecodeLimits:
        """The caps every upload is decoded under, in the API and again when a worker reads a stored file."""
        return DecodeLimits(self.max_decompressed_bytes, self.max_line_bytes, self.max_lines)

    @property
    def embedded_broker(self) -> bool:
        return self.broker_url.startswith("sqlite")

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        """``EVALSERVE_DATA_DIR`` (default ``~/.local/share/evalserve``), ``DATABASE_URL`` (default SQLite in the
        data dir), ``REDIS_URL`` (default: an embedded SQLite broker in the data dir), ``EVALSERVE_BLOB_DIR``,
        ``EVALSERVE_MAX_UPLOAD_MB``, ``EVALSERVE_MAX_DECOMPRESSED_MB`` (default: 20 x the upload limit or 2048,
        whichever is lower), ``EVALSERVE_MAX_LINE_BYTES`` (default 8 MiB), ``EVALSERVE_MAX_LINES`` (default
        10,000,000), ``EVALSERVE_LEASE_SECONDS``, ``EVALSERVE_REQUEUE_AFTER_SECONDS``,
        ``EVALSERVE_SWEEP_SECONDS``, ``EVALSERVE_JOB_TIME_LIMIT_SECONDS``, ``EVALSERVE_MAX_ATTEMPTS``,
        ``EVALSERVE_QUEUE``, ``EVALSERVE_WEBHOOK_MAX_ATTEMPTS`` (default 8), ``EVALSERVE_WEBHOOK_BACKOFF_SECONDS``
        (default 30), ``EVALSERVE_WEBHOOK_TIMEOUT_SECONDS`` (read timeout, default 5),
        ``EVALSERVE_WEBHOOK_CONNECT_TIMEOUT_SECONDS`` (default 3), ``EVALSERVE_WEBHOOK_OWNER_CONCURRENCY`` and
        ``EVALSERVE_WEBHOOK_TARGET_CONCURRENCY`` (default 2 each), ``EVALSERVE_WEBHOOK_DEFER_SECONDS`` (default 2),
        ``EVALSERVE_WEBHOOK_BREAKER_FAILURES`` (default 5), ``EVALSERVE_WEBHOOK_BREAKER_SECONDS`` (default 120),
        ``EVALSERVE_TASK_DEFAULT_QUOTA_PER_DAY`` (a new phase's daily quota per participant when the organiser
        names none, default 5; 0: none), ``EVALSERVE_WEBHOOK_ALLOW_NETWORKS`` (comma-separated CIDRs, each with
        an optional port, default none), ``EVALSERVE_MAX_WEBHOOKS_PER_TASK`` (default 20),
        ``EVALSERVE_WEBHOOK_PING_INTERVAL_SECONDS`` (default 10), ``EVALSERVE_WEBHOOK_TASK_PINGS_PER_MINUTE``
        (default 10), ``EVALSERVE_WORKER_HEARTBEAT_SECONDS``
        (default 5), ``EVALSERVE_HEALTH_WORKER_STALE_SECONDS`` (default 30), ``EVALSERVE_HEALTH_QUEUE_STALE_SECONDS``
        (default 300), ``EVALSERVE_WORKER_MAX_RSS_MB`` (default 1024; 0: never recycle),
        ``EVALSERVE_SERVE_START_SECONDS`` (default 60), ``EVALSERVE_SPLIT_RUNS`` (default 10: jobs of 20 runs or
        more are split over workers in parts of at least 10 runs; 0 never splits), ``EVALSERVE_SPLIT_MAX_PARTS``
        (default 16), ``EVALSERVE_CATALOGUE_DIR`` (published judgment sets the admin route may load; default none),
        ``EVALSERVE_SIGNUP`` (``closed``; ``open``: anyone may create a user over HTTP); the per-user limits:
        ``Limits.from_env``; uploads in flight: ``UploadBudget.from_env``."""
        env = dict(os.environ if environ is None else environ)
        data_dir = Path(env.get("EVALSERVE_DATA_DIR") or default_data_dir()).expanduser()
        database_url = _normalise_database_url(env.get("DATABASE_URL") or f"sqlite:///{data_dir / 'evalserve.db'}")
        broker_url = env.get("REDIS_URL") or f"sqlite:///{data_dir / 'broker.db'}"
        blob_dir = env.get("EVALSERVE_BLOB_DIR")
        max_upload_bytes = int(float(env.get("EVALSERVE_MAX_UPLOAD_MB", "512")) * 1024 * 1024)
        decode = DecodeLimits.from_env(env, max_bytes=min(20 * max_upload_bytes, DecodeLimits.max_bytes))
        return cls(
            data_dir=data_dir,
            database_url=database_url,
            broker_url=broker_url,
            blob_dir=Path(blob_dir).expanduser() if blob_dir else None,
            max_upload_bytes=max_upload_bytes,
            max_decompressed_bytes=decode.max_bytes,
            max_line_bytes=decode.max_line_bytes,
            max_lines=decode.max_lines,
            lease_seconds=float(env.get("EVALSERVE_LEASE_SECONDS", "60")),
            requeue_after_seconds=float(env.get("EVALSERVE_REQUEUE_AFTER_SECONDS", "120")),
            sweep_every_seconds=float(env.get("EVALSERVE_SWEEP_SECONDS", "10")),
            job_time_limit_seconds=float(env.get("EVALSERVE_JOB_TIME_LIMIT_SECONDS", str(6 * 3600))),
            max_attempts=int(env.get("EVALSERVE_MAX_ATTEMPTS", "5")),
            queue=env.get("EVALSERVE_QUEUE", "evalserve"),
            webhook_max_attempts=int(env.get("EVALSERVE_WEBHOOK_MAX_ATTEMPTS", "8")),
            webhook_backoff_seconds=float(env.get("EVALSERVE_WEBHOOK_BACKOFF_SECONDS", "30")),
            webhook_timeout_seconds=float(env.get("EVALSERVE_WEBHOOK_TIMEOUT_SECONDS", "5")),
            webhook_connect_timeout_seconds=float(env.get("EVALSERVE_WEBHOOK_CONNECT_TIMEOUT_SECONDS", "3")),
            webhook_owner_concurrency=int(env.get("EVALSERVE_WEBHOOK_OWNER_CONCURRENCY", "2")),
            webhook_target_concurrency=int(env.get("EVALSERVE_WEBHOOK_TARGET_CONCURRENCY", "2")),
            webhook_defer_seconds=float(env.get("EVALSERVE_WEBHOOK_DEFER_SECONDS", "2")),
            webhook_breaker_failures=int(env.get("EVALSERVE_WEBHOOK_BREAKER_FAILURES", "5")),
            webhook_breaker_seconds=float(env.get("EVALSERVE_WEBHOOK_BREAKER_SECONDS", "120")),
            task_default_quota_per_day=int(env.get("EVALSERVE_TASK_DEFAULT_QUOTA_PER_DAY", "5")),
            limits=Limits.from_env(env),
            uploads=UploadBudget.from_env(env),
            webhook_allow_networks=parse_networks(env.get("EVALSERVE_WEBHOOK_ALLOW_NETWORKS", "")),
            max_webhooks_per_task=int(env.get("EVALSERVE_MAX_WEBHOOKS_PER_TASK", "20")),
            webhook_ping_interval_seconds=float(env.get("EVALSERVE_WEBHOOK_PING_INTERVAL_SECONDS", "10")),
            webhook_task_pings_per_minute=int(env.get("EVALSERVE_WEBHOOK_TASK_PINGS_PER_MINUTE", "10")),
            worker_heartbeat_seconds=float(env.get("EVALSERVE_WORKER_HEARTBEAT_SECONDS", "5")),
            health_worker_stale_seconds=float(env.get("EVALSERVE_HEALTH_WORKER_STALE_SECONDS", "30")),
            health_queue_stale_seconds=float(env.get("EVALSERVE_HEALTH_QUEUE_STALE_SECONDS", "300")),
            worker_max_rss_mb=float(env.get("EVALSERVE_WORKER_MAX_RSS_MB", "1024")),
            serve_start_seconds=float(env.get("EVALSERVE_SERVE_START_SECONDS", "60")),
            split_runs=int(env.get("EVALSERVE_SPLIT_RUNS", "10")),
            split_max_parts=int(env.get("EVALSERVE_SPLIT_MAX_PARTS", "16")),
            catalogue_dir=Path(env["EVALSERVE_CATALOGUE_DIR"]).expanduser() if env.get("EVALSERVE_CATALOGUE_DIR")
            else None,
            signup=_signup(env.get("EVALSERVE_SIGNUP", "closed")),
        )


def _signup(value: str) -> bool:
    """``EVALSERVE_SIGNUP``: ``open`` (anyone may create a user over HTTP) or ``closed`` (admins only)."""
    if value.strip().lower() not in ("open", "closed"):
        raise ValueError(f"EVALSERVE_SIGNUP must be open or closed, not {value!r}")
    return value.strip().lower() == "open"


def _normalise_database_url(url: str) -> str:
    """``postgres://`` and ``postgresql://`` (as Heroku-style hosts give them) use the psycopg 3 driver."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url
