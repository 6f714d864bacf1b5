"""Drop-ins for established evaluation tools: their command lines' meaning and their output text, computed by
evalserve's engine (spec Appendix E: names other tools use give those tools' numbers)."""
