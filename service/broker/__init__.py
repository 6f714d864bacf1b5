"""The message broker as the service sees it: the Celery app factory, the task names, one ``publish`` with its
retry policy, and the embedded SQLite transport with its wake-up pipes. Importing this package builds no Celery
app; ``evalserve.workers.celery_app`` builds the one worker processes run."""
