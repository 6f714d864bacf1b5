"""Which family declares each measure name and alias, so the registry imports only the families a request names.

Data only, in the registry's order (family, then declaration, name before aliases). The families' own
declarations are the truth: tests/evaluation/test_measure_catalogue.py fails, printing the text to paste here,
when this drifts from them, and the registry refuses a family that declares a name not listed under it."""

from __future__ import annotations

#: family module (``evaluation.measures.<family>``) -> the names and aliases its ``DEFINITIONS`` declare, in order
NAMES: dict[str, tuple[str, ...]] = {
    "adhoc": (
        "P", "Precision", "R", "Recall", "Rprec", "RPrec", "RR", "MRR", "RecipRank", "AP", "MAP", "nDCG", "NDCG",
        "ERR", "RBP", "Bpref", "BPref", "bpref", "Success", "Judged", "Q", "NCU", "NumRet", "NumRel", "NumRelRet",
        "NumNonrelJudgedRet", "SetP", "SetR", "SetF", "SetMAP", "SetRelativeP", "IPrec", "infAP", "GMAP",
        "RprecMult", "RBPResid", "GMBpref", "IPrecAvg", "Utility", "BinG", "G", "nDCGRel", "RnDCG", "RelativeP",
        "Unjudged", "DCG", "IDCG", "YAAP",
    ),
    "diversity": (
        "alpha_DCG", "alpha_nDCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP", "P_IA", "AP_IA", "MAP_IA", "StRecall",
        "S_Recall", "I_rec", "nDCG_IA", "RR_IA", "RBP_IA", "Q_IA", "S_RR", "D_nDCG", "Dsharp_nDCG", "D_Q",
        "Dsharp_Q", "EU", "CT", "ACT", "RBU",
    ),
    "similarity": (
        "S_sim", "D_sim",
    ),
    "scored": (
        "nDCG_phi",
    ),
    "hierarchical": (
        "I_rec_LA", "LA_I_rec", "alpha_nDCG_LA", "LA_alpha_nDCG", "ERR_IA_LA", "LA_ERR_IA", "Q_IA_LA", "LA_Q_IA",
        "D_nDCG_LA", "LA_D_nDCG", "Dsharp_nDCG_LA", "LA_Dsharp_nDCG", "D_Q_LA", "LA_D_Q", "Dsharp_Q_LA",
        "LA_Dsharp_Q", "N_rec", "HD_nDCG", "HD_Q", "HDsharp_nDCG", "HDsharp_Q", "LADsharp_nDCG", "LADsharp_Q",
    ),
    "preference": (
        "Prf", "nPrf",
    ),
}
