"""Celery workers: thin tasks that load a job's inputs, call the engine and store the result."""
