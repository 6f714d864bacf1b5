# evalserve: one image for the HTTP API and the evaluation workers.
#
#   docker build -t evalserve .
#   API (default command):  docker run -p 8000:8000 -e DATABASE_URL=... -e REDIS_URL=... evalserve
#   worker:                 docker run -e DATABASE_URL=... -e REDIS_URL=... evalserve evalserve worker --concurrency 4
#   schema migration:       docker run -e DATABASE_URL=... evalserve evalserve migrate
#   tokens:                 docker run -e DATABASE_URL=... evalserve evalserve tokens create --name NAME
#
# Without DATABASE_URL / REDIS_URL everything lives in SQLite files under /data (the embedded default; then the
# API and the workers must share that volume, i.e. run on one machine). docker-compose.yml wires PostgreSQL and
# Redis; docs/deploy.md explains every setting.

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
# what `pip install .` needs: the project metadata (its readme included), the tested versions and the four packages
COPY pyproject.toml README.md constraints.txt ./
COPY evaluation ./evaluation
COPY evalserve ./evalserve
COPY service ./service
COPY workers ./workers
RUN pip install --constraint=constraints.txt . \
    && cd / && rm -rf /src \
    && useradd --create-home --uid 10001 --user-group evalserve \
    && mkdir -p /data \
    && chown evalserve:evalserve /data

# the embedded default's SQLite files and the admin token live here (unused with PostgreSQL and Redis, except
# EVALSERVE_BLOB_DIR if you point it inside)
ENV EVALSERVE_DATA_DIR=/data \
    WEB_CONCURRENCY=2
VOLUME ["/data"]
WORKDIR /home/evalserve
USER evalserve

EXPOSE 8000

# the API answers 200 on /health when its database and broker answer (503 otherwise); docker-compose.yml gives
# the workers, which serve no HTTP, their own check
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=4).status == 200 else 1)"]

# gunicorn takes its worker count from WEB_CONCURRENCY; a long request timeout because uploads can be large; its
# ASGI worker, so that long-polls (GET /v1/jobs/{id}?wait=) wait on each process's event loop, not in a thread
# (the Flask app runs on 8 threads per process: evalserve.service.web.asgi); a short graceful timeout so that
# `docker stop` (SIGTERM, SIGKILL 10 s later) ends it cleanly even while clients long-poll (a cut-off long-poll
# is retried by the Python client)
CMD ["gunicorn", "--bind", "0.0.0.0:8000", "--worker-class", "asgi", "--asgi-loop", "asyncio", "--timeout", "300", "--graceful-timeout", "5", "--access-logfile", "-", "evalserve.service.web.asgi:app"]
