"""The operator's allow-list names ports: ``127.0.0.1:8081`` (or ``[::1]:8081``) allows that port only, and a
plain network (``127.0.0.1/32``) still refuses the well-known service ports (Redis 6379, PostgreSQL 5432, MySQL
3306, AMQP 5672, ...) unless an entry names them. Checked at parsing, in process, and on real processes: refused
registrations store nothing, and a webhook on an allowed port is delivered."""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable

import pytest

from evalserve.service.core.config import SERVICE_PORTS, AllowEntry, Settings, parse_allow_entry
from evalserve.service.webhooks.targets import REFUSED, TargetError, check
from tests.security.webhook_helpers import own_task, participant_token, webhook_count
from tests.service.live import LiveService
from tests.service.webhook_receiver import Receiver

SERVICES = {"redis": 6379, "postgresql": 5432, "mysql": 3306, "amqp": 5672, "memcached": 11211, "mongodb": 27017,
            "elasticsearch": 9200, "smtp": 25, "ssh": 22}


def test_entries_parse_with_and_without_a_port() -> None:
    assert parse_allow_entry("127.0.0.1/32") == AllowEntry(ipaddress.ip_network("127.0.0.1/32"))
    assert parse_allow_entry(" 127.0.0.1:8081") == AllowEntry(ipaddress.ip_network("127.0.0.1/32"), 8081)
    assert parse_allow_entry("10.0.0.0/8:8443") == AllowEntry(ipaddress.ip_network("10.0.0.0/8"), 8443)
    assert parse_allow_entry("[::1]:8081") == AllowEntry(ipaddress.ip_network("::1/128"), 8081)
    assert parse_allow_entry("[fd00::/8]:443") == AllowEntry(ipaddress.ip_network("fd00::/8"), 443)
    assert parse_allow_entry("::1") == AllowEntry(ipaddress.ip_network("::1/128"))
    assert str(parse_allow_entry("[::1]:8081")) == "[::1]:8081" and str(parse_allow_entry("127.0.0.1:1")) == \
        "127.0.0.1:1"
    for bad in ("127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:x", "[::1", "[::1]8081", "localhost:8081"):
        with pytest.raises(ValueError):
            parse_allow_entry(bad)
    settings = Settings.from_env({"EVALSERVE_WEBHOOK_ALLOW_NETWORKS": "127.0.0.1:8081, [::1]:8081,10.0.0.0/8"})
    assert [str(e) for e in settings.webhook_allow_networks] == ["127.0.0.1:8081", "[::1]:8081", "10.0.0.0/8"]
    assert set(SERVICES.values()) <= SERVICE_PORTS


@pytest.mark.parametrize("port", sorted(SERVICES.values()))
def test_a_plain_network_refuses_service_ports_unless_named(port: int) -> None:
    plain = (parse_allow_entry("127.0.0.1/32"), parse_allow_entry("::1"))
    for url in (f"http://127.0.0.1:{port}/", f"http://[::1]:{port}/", f"http://localhost:{port}/"):
        with pytest.raises(TargetError) as refused:
            check(url, plain)
        assert refused.value.code == REFUSED and f"port {port}" in refused.value.reason
    assert check(f"http://127.0.0.1:{port}/", (*plain, parse_allow_entry(f"127.0.0.1:{port}"))).addresses


def test_an_entry_with_a_port_allows_that_port_only() -> None:
    named = (parse_allow_entry("127.0.0.1:8081"), parse_allow_entry("[::1]:8081"))
    assert check("http://127.0.0.1:8081/hook", named).addresses == ("127.0.0.1",)
    assert check("http://[::1]:8081/hook", named).addresses == ("::1",)
    for url in ("http://127.0.0.1:8082/", "http://127.0.0.1/", "http://[::1]:8082/", "http://127.0.0.1:6379/"):
        with pytest.raises(TargetError):
            check(url, named)
    assert check("http://127.0.0.1:8082/", (parse_allow_entry("127.0.0.1/32"),)).addresses, "plain: other ports"


@pytest.mark.parametrize("backend", ["embedded", "redis-postgres"])
def test_on_real_processes_the_port_is_part_of_the_allow_list(stack: Callable[..., LiveService],
                                                              backend: str) -> None:
    with Receiver() as named, Receiver() as unnamed:
        service = stack(backend, EVALSERVE_WEBHOOK_ALLOW_NETWORKS=f"127.0.0.1:{named.port},[::1]:{named.port}")
        service.start_api()
        service.start_worker(webhooks=True)
        with service.client(participant_token(service, "organiser")) as http:
            task = own_task(http, "ports")
            base = f"/v1/tasks/{task}/webhooks"
            refused = [f"http://127.0.0.1:{p}/" for p in SERVICES.values()] + [unnamed.url, f"http://127.0.0.1:{service.port}/"]
            for url in refused:
                answer = http.post(base, json={"url": url})
                assert answer.status_code == 422, (url, answer.text)
                assert answer.json()["code"] == "webhook-target-refused", url
            assert webhook_count(service, task) == 0, "a refused webhook stores nothing"
            hook = http.post(base, json={"url": named.url})
            assert hook.status_code == 201, hook.text
            assert http.post(f"{base}/{hook.json()['id']}/ping").status_code == 202
            named.wait_for(1, timeout=60)
            time.sleep(0.5)
            assert unnamed.requests == [] and len(named.requests) == 1, "the named port, once"
