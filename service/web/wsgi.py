"""WSGI entry point for gunicorn: ``gunicorn evalserve.service.web.wsgi:app`` (settings from the environment)."""

from evalserve.service.web.app import create_app

app = create_app()
