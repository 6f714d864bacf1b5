"""Shared tasks: TREC-style campaigns with phases, participants, submissions and a leaderboard (not Celery tasks).

``services`` is the Flask-free workflow the ``/v1/tasks`` routes call (``web.api.tasks``; refusals as
``core.errors.ServiceError``) and ``outputs`` the objects the web layer's schemas serialise. ``access`` says who
may do what, ``phases`` which phase is open; ``leaderboard`` computes a leaderboard (``web.leaderboard_html``
renders it for people); ``meta`` gives organisers measure advice (MU, discriminative power, correlations) over the
leaderboard's submissions; ``events`` records the webhook events of a finished submission evaluation (the workers
call it); ``webhooks`` holds an organiser's webhook subscriptions; ``report`` builds the end-of-task report (a
worker, once; ``report_render`` typesets it). Nothing is imported here.
"""
