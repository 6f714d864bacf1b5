"""The fairness rules of deliveries, one attempt at a time in process (SQLite, a real receiver on 127.0.0.1): an
owner at its cap has its next delivery deferred (pending, no attempt used, due again shortly) while another
owner's goes out; a target that keeps failing has its circuit opened (attempts recorded as ``circuit-open``, no
connection made) until its cool-down ends, and one success closes it."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from sqlalchemy import update

from evalserve.service.store.models import WebhookCircuit, WebhookDelivery, as_utc, utcnow
from evalserve.service.webhooks import delivery as webhooks
from evalserve.service.webhooks import fairness
from tests.service.test_webhooks import World
from tests.service.webhook_receiver import Receiver


def _hold(world: World, delivery_id: str, owner: str, target: str) -> None:
    """Mark a delivery as in flight (as a worker's claim does)."""
    with world.db.session() as s:
        s.execute(update(WebhookDelivery).where(WebhookDelivery.id == delivery_id)
                  .values(owner=owner, target=target, sending_until=utcnow() + timedelta(seconds=60)))


def test_an_owner_at_its_cap_is_deferred_and_another_owner_is_not(tmp_path: Path) -> None:
    world = World(tmp_path, EVALSERVE_WEBHOOK_OWNER_CONCURRENCY="1", EVALSERVE_WEBHOOK_TARGET_CONCURRENCY="5")
    other_task = world.add_task("stranger", "public")
    with Receiver() as receiver:
        world.add_webhook(receiver.url)
        world.add_webhook(receiver.url, task=other_task)
        busy, waiting = world.event(), world.event()
        [others] = world.event(task=other_task)
        with world.db.session() as s:
            owner = fairness.owner_key(s, world.ids["organiser"])
        _hold(world, busy[0], owner, fairness.target_key(receiver.url))

        before = utcnow()
        assert webhooks.deliver(world.db, waiting[0], world.settings) == webhooks.DeliveryOutcome.DEFERRED
        deferred = world.delivery(waiting[0])
        assert deferred.state == "pending" and deferred.attempts == 0 and deferred.log == [], "no attempt used"
        due = as_utc(deferred.next_attempt_at)
        assert due is not None and timedelta(seconds=0.9) <= due - before <= timedelta(seconds=61), "due shortly"
        assert waiting[0] not in webhooks.due_deliveries(world.db), "not due: the sweeper leaves it alone"
        with world.db.session() as s:  # its message is lost: once overdue, the sweeper publishes it again
            s.execute(update(WebhookDelivery).where(WebhookDelivery.id == waiting[0])
                      .values(next_attempt_at=utcnow() - timedelta(seconds=120)))
        assert waiting[0] in webhooks.due_deliveries(world.db, overdue_seconds=60), "durable: found again"
        assert webhooks.deliver(world.db, others, world.settings) == webhooks.DeliveryOutcome.DELIVERED
        assert len(receiver.requests) == 1, "only the other owner's delivery went out"

        with world.db.session() as s:  # the slot frees: the deferred delivery goes out when due
            s.execute(update(WebhookDelivery).where(WebhookDelivery.id == busy[0]).values(sending_until=None))
            s.execute(update(WebhookDelivery).where(WebhookDelivery.id == waiting[0]).values(next_attempt_at=utcnow()))
        assert webhooks.deliver(world.db, waiting[0], world.settings) == webhooks.DeliveryOutcome.DELIVERED
        assert world.delivery(waiting[0]).sending_until is None, "a finished attempt holds no slot"


def test_a_target_that_keeps_failing_opens_its_circuit_until_the_cool_down(tmp_path: Path) -> None:
    world = World(tmp_path, EVALSERVE_WEBHOOK_BREAKER_FAILURES="2", EVALSERVE_WEBHOOK_BREAKER_SECONDS="600",
                  EVALSERVE_WEBHOOK_OWNER_CONCURRENCY="0", EVALSERVE_WEBHOOK_TARGET_CONCURRENCY="0")
    with Receiver(statuses=[500, 503]) as receiver:
        world.add_webhook(receiver.url)
        ids = [world.event()[0] for _ in range(4)]
        for delivery_id in ids[:2]:
            assert webhooks.deliver(world.db, delivery_id, world.settings) == webhooks.DeliveryOutcome.RETRY
        assert webhooks.deliver(world.db, ids[2], world.settings) == webhooks.DeliveryOutcome.RETRY
        shorted = world.delivery(ids[2])
        assert shorted.last_error == webhooks.CIRCUIT_OPEN and shorted.last_status is None
        assert len(receiver.requests) == 2, "an open circuit sends nothing"
        assert webhooks.public_log_entry(shorted.log[0])["error"] == "circuit-open"

        half_open = replace(world.settings, webhook_breaker_seconds=0.0)
        with world.db.session() as s:  # the cool-down is over
            s.execute(update(WebhookCircuit).values(open_until=utcnow() - timedelta(seconds=1)))
        assert webhooks.deliver(world.db, ids[3], half_open) == webhooks.DeliveryOutcome.DELIVERED
        with world.db.session() as s:
            circuit = s.get(WebhookCircuit, fairness.target_key(receiver.url))
            assert circuit is not None and circuit.failures == 0 and circuit.open_until is None, "closed again"
