"""Seeded synthetic fingerprints in which documents relevant to the same intent are similar.

For tests and for experiments on collections whose document texts are not at hand (e.g. building intent
hierarchies for the TREC Web 2012 topics, spec section 4). ``synthesise_fingerprints`` is fully determined by
the qrels, the parameters and the state of the ``numpy.random.Generator`` it is given; the draws are made in the
fixed order below, each as one call, so the same seed gives the same fingerprints on every platform.

Procedure (f = ``bits``; "flip mask with probability p" = f independent bits, each set with probability p,
drawn as ``rng.random((..., f)) < p`` with bit j taken from column j, j = 0 the least significant):

1. *Slots*: every (topic, intent) of the qrels with at least one document graded >= ``rel``, in (topic, intent)
   order (ad hoc qrels have one intent per topic, so one slot per topic).
2. *Intent centres*: one uniformly random f-bit value per slot (a flip mask with p = 1/2).
3. *Sub-intent centres*: ``subintents`` per slot, in slot order: the slot's centre XOR a flip mask with
   p = ``intent_noise``.
4. *Assignment*: every relevant (document, slot) pair, in qrels row order (topic, docno, intent), draws one of
   its slot's sub-intents uniformly (``rng.integers(0, subintents)``).
5. *Base*: every document with relevant pairs (anywhere in the qrels), in docno order, takes each bit j from the
   sub-intent centre of one of its k pairs chosen per bit (``floor(u * k)``, ``u = rng.random()``); a document
   relevant to one intent simply copies its sub-intent centre.
6. *Noise*: each of those documents' base XOR a flip mask with p = ``doc_noise``.
7. *Others*: every other judged document and every extra docno (``docnos``) not in the qrels, in docno order,
   gets a uniformly random value (a flip mask with p = 1/2).

Expected SimHash similarities (defaults intent_noise = 0.2, doc_noise = 0.1): two documents of the same
sub-intent ``1 - 2p(1-p)`` with p = doc_noise, i.e. 0.82; of the same intent but different sub-intents
``1 - 2q(1-q)`` with ``q = i(1-p) + (1-i)p`` (i = intent_noise), i.e. 0.615; of different intents, or involving a
non-relevant document, 0.5.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from evaluation.docsim.simhash import DEFAULT_BITS, U64Array, check_bits
from evaluation.docsim.vectors import DocumentVectors, as_docnos
from evaluation.model import Qrels
from evaluation.problems import OptionError


def _pack(bits_set: npt.NDArray[np.bool_]) -> U64Array:
    """Boolean (..., f) arrays to uint64 values, column j = bit j."""
    shifts = np.arange(bits_set.shape[-1], dtype=np.uint64)
    return np.asarray((bits_set.astype(np.uint64) << shifts).sum(axis=-1, dtype=np.uint64), dtype=np.uint64)


def _mask(rng: np.random.Generator, shape: tuple[int, ...], p: float, bits: int) -> U64Array:
    return _pack(rng.random((*shape, bits)) < p)


def synthesise_fingerprints(
    qrels: Qrels,
    rng: np.random.Generator,
    *,
    bits: int = DEFAULT_BITS,
    rel: int = 1,
    subintents: int = 3,
    intent_noise: float = 0.2,
    doc_noise: float = 0.1,
    docnos: Sequence[str] | Sequence[bytes] | np.ndarray = (),
) -> DocumentVectors:
    """Fingerprints for every judged document of ``qrels`` (and the extra ``docnos``) by the procedure above."""
    f = check_bits(bits)
    if subintents < 1:
        raise OptionError("subintents must be >= 1")
    for name, p in (("intent_noise", intent_noise), ("doc_noise", doc_noise)):
        if not 0.0 <= p <= 1.0:
            raise OptionError(f"{name} must be a probability, not {p}")
    relevant = np.flatnonzero(qrels.grade >= rel)  # rows sorted by (topic, doc, intent)
    n_intents = max(1, len(qrels.intents))
    slot_key, pair_slot = np.unique(qrels.topic[relevant] * np.int64(n_intents) + qrels.intent[relevant],
                                    return_inverse=True)
    pair_slot = pair_slot.ravel()
    n_slots = slot_key.size
    centre = _mask(rng, (n_slots,), 0.5, f)  # step 2
    sub_centre = centre[:, None] ^ _mask(rng, (n_slots, subintents), intent_noise, f)  # step 3
    pair_sub = rng.integers(0, subintents, size=relevant.size)  # step 4
    pair_value = sub_centre[pair_slot, pair_sub] if relevant.size else np.zeros(0, dtype=np.uint64)

    # step 5: documents with relevant pairs, in docno order (qrels doc ids are docno-sorted)
    pair_doc = qrels.doc[relevant]
    order = np.argsort(pair_doc, kind="stable")
    rel_docs, first, count = np.unique(pair_doc[order], return_index=True, return_counts=True)
    pick = np.floor(rng.random((rel_docs.size, f)) * count[:, None]).astype(np.int64)
    pick = np.minimum(pick, count[:, None] - 1)
    chosen = pair_value[order][first[:, None] + pick]  # (docs, f): the value each bit is read from
    shifts = np.arange(f, dtype=np.uint64)
    base = _pack(((chosen >> shifts) & np.uint64(1)).astype(bool))
    rel_values = base ^ _mask(rng, (rel_docs.size,), doc_noise, f)  # step 6

    # step 7: every other judged document and the extra docnos
    extra = as_docnos(docnos)
    others = np.setdiff1d(np.union1d(qrels.docnos, extra), qrels.docnos[rel_docs])
    other_values = _mask(rng, (others.size,), 0.5, f)
    all_docnos = np.concatenate((qrels.docnos[rel_docs].astype(bytes), others.astype(bytes)))
    values = np.concatenate((rel_values, other_values))
    return DocumentVectors.build(all_docnos, values, f, f"synthetic({qrels.name})")
