"""ndcg-duck: NDCG and its parts, per user and on average, computed by DuckDB SQL macros."""

from .comparison.compare import Comparison, compare
from .errors import InputError, NdcgWarning
from .evaluation.evaluate import Evaluation, evaluate
from .splitting import split
from .sqlfiles import register, script

__version__ = "0.1.0"
__all__ = ["Comparison", "Evaluation", "InputError", "NdcgWarning", "compare", "evaluate",
           "register", "script", "split", "__version__"]
