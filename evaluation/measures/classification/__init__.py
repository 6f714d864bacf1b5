"""Mono-label classification measures by PyEvALL's names and definitions (issue 31): pure numpy over coded labels.

``mono.evaluate_mono`` is the entry point; ``cases`` codes the labels, ``counts`` (Accuracy, SystemPrecision,
Kappa), ``per_class`` (Precision, Recall, FMeasure) and ``icm`` (ICM, ICMNorm) score one test case each.
"""
