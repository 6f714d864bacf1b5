"""The meta-evaluation methods' names and closed choices, apart from the methods (``evaluation.meta.methods``
loads every method and NumPy): what a process that only checks or shows requests needs, such as the API."""

from __future__ import annotations

#: every method of ``evaluation.meta.methods.METHODS``, in its order (a test there keeps the two equal)
METHOD_NAMES = ("unanimity", "discriminative-power", "significance", "correlation", "advice",
                "preference-agreement", "scenarios", "robustness")
CORRELATIONS = ("tau_a", "tau_b", "tau_ap", "tau_ap_sym")
