"""``Sources`` now lives in ``evaluation.sources`` (below the pipeline and the meta-evaluation methods); this name
stays for the service's imports."""

from evaluation.sources import Sources as Sources

__all__ = ["Sources"]
