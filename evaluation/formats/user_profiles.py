"""Reader and writer of user profiles (spec 6.6), the ``user_profiles`` side input: per topic, named sets of
intents from which preferences are simulated (spec 6.7).

One or more intents per line, whitespace-separated: ``topic profile intent [intent ...]``. A profile may span
several lines (its intents accumulate); profiles keep their order of first appearance within a topic, which is
what "profile 1, 2, ..." of a topic means (``Prf(profile=2)``). Intents are named as in the second field of the
per-intent qrels. Blank lines and lines starting with ``#`` are skipped.
"""

from __future__ import annotations

from evaluation.formats.lexer import tokenize
from evaluation.formats.source import SourceLike, load
from evaluation.preference.judgments import Profile, UserProfiles
from evaluation.problems import InputError, Parsed, ProblemLog


def parse_user_profiles(source: SourceLike) -> Parsed[UserProfiles]:
    """Read user profiles, collecting every problem."""
    try:
        blob = load(source)
    except InputError as exc:
        return Parsed(None, tuple(exc.problems))
    log = ProblemLog(source=blob.name)
    fields = tokenize(blob.data)
    profiles: dict[str, dict[str, dict[str, int]]] = {}  # topic -> profile -> intent -> line
    content = fields.content_lines().tolist()
    for i, (count, first) in enumerate(zip(fields.counts.tolist(), fields.first.tolist())):
        if not content[i]:
            continue
        starts, ends = fields.starts[first : first + count], fields.ends[first : first + count]
        words = [fields.buf[s:e].tobytes().decode("utf-8", "replace") for s, e in zip(starts.tolist(), ends.tolist())]
        columns = (starts - fields.line_start[i] + 1).tolist()
        if count < 3:
            log.add("profile-fields", "profile lines are 'topic profile intent [intent ...]'; this one has"
                    f" {count} field(s)", line=i + 1, column=1)
            continue
        topic, name, intents = words[0], words[1], words[2:]
        known = profiles.setdefault(topic, {}).setdefault(name, {})
        for intent, column in zip(intents, columns[2:]):
            if intent in known:
                log.add("profile-duplicate-intent", f"intent {intent} is already in profile {name} of topic {topic}"
                        f" (line {known[intent]}); kept once", severity="warning", line=i + 1, column=column)
                continue
            known[intent] = i + 1
    if not profiles and not log.has_errors:
        log.add("empty-profiles", "the file has no user profiles")
    value = UserProfiles({t: tuple(Profile(p, tuple(intents)) for p, intents in ps.items())
                          for t, ps in profiles.items()}, blob.name)
    return Parsed.from_log(value, log)


def read_user_profiles(source: SourceLike) -> UserProfiles:
    """Read user profiles or raise InputError listing their problems."""
    return parse_user_profiles(source).unwrap()


def format_user_profiles(profiles: UserProfiles) -> bytes:
    """The profiles as a file ``parse_user_profiles`` reads back (one line per profile)."""
    lines = [f"{topic} {p.name} {' '.join(p.intents)}\n" for topic, ps in profiles.topics.items() for p in ps
             if p.intents]
    return "".join(lines).encode()
