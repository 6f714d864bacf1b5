"""Shared tasks: TREC-style campaigns with phases, participants, submissions and a leaderboard (not Celery tasks).

``views`` is the ``/v1/tasks`` blueprint: it reads the request, calls one function of ``services`` (the Flask-free
workflow: one database session per request, refusals as ``service.errors.ServiceError``) and returns the
``outputs`` objects its ``schemas`` serialise. ``access`` says who may do what, ``phases`` which phase is open;
``leaderboard`` computes a leaderboard and ``leaderboard_html`` renders it for people; ``meta`` gives organisers
measure advice (MU, discriminative power, correlations) over the leaderboard's submissions; ``events`` records the
webhook events of a finished submission evaluation (the workers call it). Nothing is imported here, so importing
one module does not load the Flask views.
"""
