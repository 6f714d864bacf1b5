"""Drop-in replacements for the reference tools' command lines (spec Appendix E): each module reads the files
as its tool does, scores them with the registry's measures and lays the output out byte for byte as the tool
prints it. Pure engine code: the CLI (``evalserve/cli/``) only parses arguments and writes the bytes.
"""
