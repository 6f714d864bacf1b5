"""Shared tasks: TREC-style campaigns with phases, participants, submissions and a leaderboard (not Celery tasks).

``views`` is the ``/v1/tasks`` blueprint; ``services`` the Flask-free workflow (tasks, phases, registration,
submissions, new judgments); ``access`` who may do what; ``schemas`` the request and response bodies;
``leaderboard`` computes a leaderboard and ``leaderboard_html`` renders it for people; ``events`` records the
webhook events of a finished submission evaluation. Nothing is imported here, so importing one module (the
workers import ``events``) does not load the Flask views.
"""
