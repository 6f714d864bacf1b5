"""Running jobs, as a worker process does it, without Celery in the way: claim a job under a lease, load its
inputs, call the engine, store the result (``runner``; split jobs: ``split``), plus the worker's background
duties (``heartbeat``, the ``recovery`` sweeper) and its time limits. ``workers.tasks`` only declares the Celery
tasks that call into here."""
