"""ASGI entry point for gunicorn's ``asgi`` worker: ``gunicorn -k asgi evalserve.service.web.asgi:app`` (settings
from the environment). The Flask app (``wsgi.app``'s) on ``THREADS`` threads per process, long-polls parked on the
process's event loop (``web.waiting``)."""

from evalserve.service.core.config import Settings
from evalserve.service.core.longpoll import WaitCaps
from evalserve.service.web.app import create_app
from evalserve.service.web.waiting import THREADS, WaitingApp

_settings = Settings.from_env()
app = WaitingApp(create_app(_settings), WaitCaps(_settings.limits.waits_per_caller, _settings.limits.waits_total),
                 threads=THREADS)
