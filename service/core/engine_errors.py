"""The engine's refusals as the service's, in one place: the API's request checks and the workers' job errors
both map engine errors through ``engine_refusal``. Only the engine's typed errors are refusals (``InputError``:
bad files, with every problem; ``EvaluationError`` subclasses: a request the engine cannot carry out, each with
its ``code``); a bare ``KeyError``/``ValueError`` from the engine is a bug, mapped to nothing, so callers report
it as ``internal-error`` and log its traceback."""

from __future__ import annotations

from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode
from evaluation.problems import EvaluationError, InputError, NothingScored


def engine_refusal(exc: BaseException, *, status: int = 422,
                   input_code: ProblemCode = ProblemCode.INVALID_INPUT) -> ServiceError | None:
    """The service's refusal for engine error ``exc`` (``input_code`` for bad inputs, ``no-topics-scored`` when a
    run fits no judged topic, the error's own ``code`` otherwise), or None when ``exc`` is not a refusal."""
    if isinstance(exc, NothingScored):  # the inputs fit no topic: refuse rather than report means of 0
        return ServiceError(status, ProblemCode.NO_TOPICS_SCORED, str(exc), [p.as_dict() for p in exc.problems])
    if isinstance(exc, InputError):
        return ServiceError(status, input_code, str(exc), [p.as_dict() for p in exc.problems])
    if isinstance(exc, EvaluationError):
        return ServiceError(status, ProblemCode(exc.code), str(exc))  # the engine's codes are members too
    return None


def refusal_of(exc: EvaluationError | InputError, *, status: int = 422) -> ServiceError:
    """``engine_refusal`` of an error known to be the engine's typed refusal."""
    refusal = engine_refusal(exc, status=status)
    assert refusal is not None  # every EvaluationError and InputError maps
    return refusal
