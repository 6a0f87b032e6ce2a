"""ndcg-duck: NDCG and its parts, per user and on average, computed by DuckDB SQL macros."""

from .errors import InputError, NdcgWarning
from .evaluate import Evaluation, evaluate
from .sqlfiles import register, script

__version__ = "0.1.0"
__all__ = ["Evaluation", "InputError", "NdcgWarning", "evaluate", "register", "script", "__version__"]
