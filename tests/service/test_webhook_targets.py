"""Where webhooks may go: every loopback, private, link-local, multicast, reserved and shared form refused (decimal,
octal, short, hex and IPv6 spellings included), the operator's allow-list, the connection pinned to the checked
addresses (Host, SNI and certificate checks against the URL's name), the fixed vocabulary of the delivery log, and
the ping limits. In process; receivers on 127.0.0.1 only, and no connection to any public address."""

from __future__ import annotations

import datetime as dt
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpcore
import pytest

from evalserve.service.core.config import AllowEntry, Settings
from evalserve.service.store.models import Webhook, WebhookDelivery, new_id, utcnow
from evalserve.service.webhooks import delivery as webhooks
from evalserve.service.webhooks import targets as webhook_targets
from evalserve.service.webhooks import transport as webhook_http
from evalserve.service.webhooks.targets import REFUSED, UNRESOLVABLE, TargetError, check
from tests.service.test_webhooks import World
from tests.service.webhook_receiver import Receiver

LOOPBACK_ONLY = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> Callable[[dict[str, list[str]]], None]:
    """Stand in for DNS: names in the given map resolve to its addresses, others as the machine resolves them."""
    real = webhook_targets.resolve

    def install(names: dict[str, list[str]]) -> None:
        monkeypatch.setattr(webhook_targets, "resolve",
                            lambda host, port: list(names[host]) if host in names else real(host, port))

    return install


def _refused(url: str, allow: tuple[Any, ...] = ()) -> TargetError:
    with pytest.raises(TargetError) as caught:
        check(url, allow)
    return caught.value


# --- the checks ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("url", "why"), [
    ("http://127.0.0.1:6379/", "a loopback address"),
    ("http://127.0.0.1:5432/", "a loopback address"),
    ("http://0.0.0.0/", "an unspecified address"),
    ("http://2130706433/", "a loopback address"),  # decimal
    ("http://0177.0.0.1/", "not a valid URL"),  # octal: httpx cannot send there either
    ("http://0177.1/", "a loopback address"),
    ("http://127.1/", "a loopback address"),  # short
    ("http://0x7f.0x0.0x0.0x1/", "a loopback address"),  # hex
    ("http://0x7f000001/", "a loopback address"),
    ("http://[::1]/", "a loopback address"),
    ("http://[::ffff:127.0.0.1]/", "a loopback address"),  # IPv4-mapped
    ("http://[::ffff:7f00:1]/", "a loopback address"),
    ("http://[::127.0.0.1]/", "embedding a loopback address"),  # IPv4-compatible
    ("http://[2002:7f00:1::1]/", "embedding a loopback address"),  # 6to4
    ("http://[64:ff9b::a00:1]/", "embedding a private address"),  # NAT64
    ("http://[::]/", "an unspecified address"),
    ("http://localhost/", "a loopback address"),
    ("http://localhost:8000/hook", "a loopback address"),
    ("http://10.0.0.1/", "a private address"),
    ("http://172.16.0.1/", "a private address"),
    ("http://192.168.1.1/", "a private address"),
    ("http://169.254.169.254/latest/meta-data/", "a link-local address"),
    ("http://[fe80::1]/", "a link-local address"),
    ("http://[fc00::1]/", "a private address"),
    ("http://100.64.0.1/", "a shared (carrier-grade NAT) address"),
    ("http://224.0.0.1/", "a multicast address"),
    ("http://[ff02::1]/", "a multicast address"),
    ("http://240.0.0.1/", "address"),
    ("http://255.255.255.255/", "address"),
    ("http://192.0.2.1/", "a private address"),  # documentation range
    ("https://0/", "an unspecified address"),
])
def test_every_non_public_form_is_refused(url: str, why: str) -> None:
    refused = _refused(url)
    assert refused.code == REFUSED and why in refused.reason, refused.reason
    assert why == "not a valid URL" or "only sent to public addresses" in refused.reason


@pytest.mark.parametrize(("url", "why"), [
    ("ftp://example.org/", "only http and https"),
    ("file:///etc/passwd", "only http and https"),
    ("gopher://127.0.0.1:6379/_INFO", "only http and https"),
    ("http://user:pass@example.org/", "credentials"),
    ("http://user@example.org/", "credentials"),
    ("http://127.0.0.1\\@example.org/", "credentials"),
    ("http:///hook", "no host"),
    ("http://example.org:99999/", "not a valid port"),
    ("http://[::1/", "not a valid URL"),
])
def test_urls_evalserve_does_not_send_to_are_refused_before_resolving(url: str, why: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(webhook_targets, "resolve", lambda host, port: pytest.fail(f"resolved {host}"))
    refused = _refused(url, LOOPBACK_ONLY)
    assert refused.code == REFUSED and why in refused.reason, refused.reason


def test_a_host_that_does_not_resolve_is_refused_as_unresolvable() -> None:
    refused = _refused("https://no-such-host.invalid/hook")
    assert refused.code == UNRESOLVABLE and "does not resolve" in refused.reason


def test_public_addresses_pass_without_connecting(dns: Callable[[dict[str, list[str]]], None],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: pytest.fail("connected"))
    target = check("http://93.184.216.34/hook")
    assert (target.scheme, target.host, target.port, target.addresses) == ("http", "93.184.216.34", 80,
                                                                           ("93.184.216.34",))
    assert check("https://[2606:4700:4700::1111]:8443/x").addresses == ("2606:4700:4700::1111",)
    assert check("http://[::ffff:93.184.216.34]/").addresses == ("::ffff:93.184.216.34",)
    dns({"hooks.example.org": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]})
    target = check("https://hooks.example.org/evalserve?x=1")
    assert target.host == "hooks.example.org" and target.port == 443 and len(target.addresses) == 2


def test_one_private_address_among_public_ones_refuses_the_name(dns: Callable[[dict[str, list[str]]], None]) -> None:
    dns({"mixed.example.org": ["93.184.216.34", "10.1.2.3"]})
    refused = _refused("https://mixed.example.org/")
    assert refused.code == REFUSED and "a private address (10.1.2.3)" in refused.reason


@pytest.mark.parametrize("url", ["http://127.0.0.1:8081/", "http://2130706433/", "http://0177.1/", "http://127.1/",
                                 "http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://localhost/"])
def test_the_allow_list_lets_listed_networks_through(url: str) -> None:
    assert check(url, LOOPBACK_ONLY).addresses
    assert _refused(url, (ipaddress.ip_network("10.0.0.0/8"),)).code == REFUSED, "only the listed networks"


def test_the_allow_list_setting_is_read_from_the_environment(tmp_path: Path) -> None:
    settings = Settings.from_env({"EVALSERVE_DATA_DIR": str(tmp_path),
                                  "EVALSERVE_WEBHOOK_ALLOW_NETWORKS": " 127.0.0.1/32, 10.0.0.0/8 ,::1"})
    assert settings.webhook_allow_networks == (AllowEntry(ipaddress.ip_network("127.0.0.1/32")),
                                               AllowEntry(ipaddress.ip_network("10.0.0.0/8")),
                                               AllowEntry(ipaddress.ip_network("::1/128")))
    assert Settings.from_env({"EVALSERVE_DATA_DIR": str(tmp_path)}).webhook_allow_networks == ()
    with pytest.raises(ValueError):
        Settings.from_env({"EVALSERVE_DATA_DIR": str(tmp_path), "EVALSERVE_WEBHOOK_ALLOW_NETWORKS": "localhost"})


# --- the pinned connection -----------------------------------------------------------------------------------------


def test_the_connection_goes_to_the_checked_address_with_the_urls_host(
        dns: Callable[[dict[str, list[str]]], None]) -> None:
    with Receiver() as receiver:
        dns({"hooks.test": ["127.0.0.1"]})
        target = check(f"http://hooks.test:{receiver.port}/hook?q=1", LOOPBACK_ONLY)
        dns({"hooks.test": ["192.0.2.1"]})  # the name moves after the check: the connection does not follow it
        status = webhook_http.post(target, b"{}", {"Content-Type": "application/json"}, 5.0)
        [(headers, body)] = receiver.requests
    assert status == 200 and body == b"{}"
    assert headers["host"] == f"hooks.test:{receiver.port}"


def test_the_pinned_backend_refuses_another_host() -> None:
    target = webhook_targets.Target(webhook_targets.parse("http://hooks.test/").url, "http", "hooks.test", 80,
                                    ("127.0.0.1",))
    with pytest.raises(httpcore.ConnectError):
        webhook_http.PinnedBackend(target).connect_tcp("elsewhere.test", 80)


@pytest.fixture(scope="module")
def tls_names(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], tuple[ssl.SSLContext, ssl.SSLContext]]:
    """(server context with a certificate for ``name``, client context trusting only the test CA)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    folder = tmp_path_factory.mktemp("tls")
    now = dt.datetime.now(dt.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "evalserve test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
          .not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    (folder / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))

    def make(name: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
                .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=1))
                .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
                .sign(ca_key, hashes.SHA256()))
        pem = folder / f"{name}.pem"
        pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM) + key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server.load_cert_chain(pem)
        client = ssl.create_default_context(cafile=str(folder / "ca.pem"))
        return server, client

    return make


def test_https_is_pinned_with_sni_and_certificate_checks_against_the_urls_name(
        dns: Callable[[dict[str, list[str]]], None],
        tls_names: Callable[[str], tuple[ssl.SSLContext, ssl.SSLContext]]) -> None:
    server, client = tls_names("hooks.test")
    seen: list[str | None] = []
    server.sni_callback = lambda sock, name, ctx: seen.append(name)  # type: ignore[assignment,misc,func-returns-value]
    dns({"hooks.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
    with Receiver(tls=server) as receiver:
        target = check(f"https://hooks.test:{receiver.port}/hook", LOOPBACK_ONLY)
        assert webhook_http.post(target, b"{}", {}, 5.0, ssl_context=client) == 200
        [(headers, _)] = receiver.requests
        assert headers["host"] == f"hooks.test:{receiver.port}" and seen == ["hooks.test"]
        other = check(f"https://other.test:{receiver.port}/hook", LOOPBACK_ONLY)
        with pytest.raises(Exception) as failed:  # same address, but the certificate does not name other.test
            webhook_http.post(other, b"{}", {}, 5.0, ssl_context=client)
        assert "certificate" in str(failed.value).lower() or "hostname" in str(failed.value).lower()
        assert len(receiver.requests) == 1 and seen[-1] == "other.test"


# --- deliveries ----------------------------------------------------------------------------------------------------


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    made = World(tmp_path)
    yield made
    made.db.dispose()


def test_a_name_rebound_to_a_refused_address_is_not_sent_to(world: World,
                                                            dns: Callable[[dict[str, list[str]]], None]) -> None:
    with Receiver() as receiver:
        dns({"hooks.example.org": ["93.184.216.34"]})
        created = world.call("POST", f"/v1/tasks/{world.task}/webhooks",
                             json={"url": f"http://hooks.example.org:{receiver.port}/hook"})
        assert created.status_code == 201, created.get_data(as_text=True)
        [delivery_id] = world.event()
        dns({"hooks.example.org": ["127.0.0.1"]})  # DNS rebinding: now the receiver on loopback (not allowed)
        no_allow_list = world.settings_with(webhook_allow_networks=())
        assert webhooks.deliver(world.db, delivery_id, no_allow_list) == "retry"
        dns({"hooks.example.org": []})
        [second] = world.event()
        assert webhooks.deliver(world.db, second, no_allow_list) == "retry"
        assert receiver.requests == []
    assert world.delivery(delivery_id).last_error == "target-refused"
    assert world.delivery(second).last_error == "target-unresolvable"


def test_registration_refuses_non_public_targets_with_the_reason(tmp_path: Path) -> None:
    world = World(tmp_path, EVALSERVE_WEBHOOK_ALLOW_NETWORKS="")
    base = f"/v1/tasks/{world.task}/webhooks"
    refused = world.call("POST", base, json={"url": "http://127.0.0.1:6379/"})
    assert refused.status_code == 422 and refused.headers["Content-Type"] == "application/problem+json"
    assert refused.json["code"] == "webhook-target-refused" and "a loopback address" in refused.json["detail"]
    unresolvable = world.call("POST", base, json={"url": "https://no-such-host.invalid/"})
    assert unresolvable.status_code == 422 and unresolvable.json["code"] == "webhook-target-unresolvable"
    assert world.call("POST", base, "stranger", json={"url": "http://127.0.0.1/"}).json["code"] == "organisers-only"
    assert world.call("GET", base).json == []
    world.db.dispose()


def test_the_log_shows_only_the_vocabulary_even_for_rows_written_before_it(world: World) -> None:
    hook = world.add_webhook("http://127.0.0.1:9/hook")
    old_errors = ["ConnectError: [Errno 111] Connection refused", "timed out after 10 s (ReadTimeout)",
                  "HTTP 500", "HTTP 302: redirects are not followed; use the final URL",
                  "the webhook was deleted; not sent", "gave up after 8 attempts (...)", "no-response"]
    with world.db.session() as s:
        for error in old_errors:
            entry = {"attempt": 1, "at": utcnow().isoformat(), "status": None, "error": error, "duration_ms": 1.2}
            s.add(WebhookDelivery(id=new_id("dlv"), webhook_id=hook, event="ping", payload={}, state="failed",
                                  attempts=1, last_error=error, log=[entry, {"attempt": 2, "status": 500,
                                                                             "error": "HTTP 500", "duration_ms": 3.0,
                                                                             "detail": "x"}]))
    shown = world.call("GET", f"/v1/tasks/{world.task}/webhooks/{hook}/deliveries").json
    assert sorted(d["last_error"] for d in shown) == sorted(
        ["no-response", "no-response", "http-status", "redirect-not-followed", "webhook-deleted", "worker-lost",
         "no-response"])
    for d in shown:
        assert d["last_error"] in webhooks.ERRORS
        first, second = d["log"]
        assert first["error"] in webhooks.ERRORS and "duration_ms" not in first, "no timing without an answer"
        assert second == {"attempt": 2, "at": None, "status": 500, "error": "http-status", "duration_ms": 3.0}


# --- ping limits ---------------------------------------------------------------------------------------------------


def test_a_webhook_is_pinged_at_most_once_per_interval(world: World) -> None:
    base = f"/v1/tasks/{world.task}/webhooks/{world.add_webhook('https://example.org/hook')}"
    assert world.call("POST", f"{base}/ping").status_code == 202
    again = world.call("POST", f"{base}/ping")
    assert again.status_code == 429 and again.headers["Content-Type"] == "application/problem+json"
    assert again.json["code"] == "ping-rate-limited" and 1 <= int(again.headers["Retry-After"]) <= 10
    assert len(world.call("GET", f"{base}/deliveries").json) == 1, "nothing recorded"


def test_a_task_has_a_ping_budget_per_minute_that_deleted_webhooks_count_in(tmp_path: Path) -> None:
    world = World(tmp_path, EVALSERVE_WEBHOOK_TASK_PINGS_PER_MINUTE="3")
    hooks = [world.add_webhook(f"https://example.org/{i}") for i in range(4)]
    base = f"/v1/tasks/{world.task}/webhooks"
    for hook in hooks[:3]:
        assert world.call("POST", f"{base}/{hook}/ping").status_code == 202
    assert world.call("DELETE", f"{base}/{hooks[0]}").status_code == 204
    over = world.call("POST", f"{base}/{hooks[3]}/ping")
    assert over.status_code == 429 and over.json["code"] == "ping-rate-limited"
    assert 50 <= int(over.headers["Retry-After"]) <= 60
    other = world.add_webhook("https://example.org/other", task=world.private_task)
    assert world.call("POST", f"/v1/tasks/{world.private_task}/webhooks/{other}/ping").status_code == 202, \
        "another task's budget is its own"
    with world.db.session() as s:  # the pings age out of the window
        for row in s.query(WebhookDelivery).all():
            row.created_at = utcnow() - dt.timedelta(seconds=61)
    assert world.call("POST", f"{base}/{hooks[3]}/ping").status_code == 202
    world.db.dispose()


def test_ping_wait_is_zero_for_a_fresh_webhook(world: World) -> None:
    hook_id = world.add_webhook("https://example.org/fresh")
    with world.db.session() as s:
        hook = s.get(Webhook, hook_id)
        assert hook is not None
        assert webhooks.ping_wait_seconds(s, hook, world.settings) == 0.0


def test_a_receiver_dripping_its_answer_is_cut_off_at_the_attempts_deadline() -> None:
    """Every byte within the timeout, the whole answer never (12 s of drip): the attempt ends after twice the
    timeout (1 s here; the bound checked leaves slack)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = int(server.getsockname()[1])

    def drip() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100:
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return
                time.sleep(0.1)

    thread = threading.Thread(target=drip, daemon=True)
    thread.start()
    target = check(f"http://127.0.0.1:{port}/", LOOPBACK_ONLY)
    started = time.monotonic()
    with pytest.raises(httpcore.ReadTimeout):
        webhook_http.post(target, b"{}", {}, 0.5)
    assert time.monotonic() - started < 5.0
    thread.join(15)
    server.close()
