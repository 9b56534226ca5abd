"""lmu_sk: Legendre Memory Unit Delay Network features and dense heads for scikit-learn."""

from . import _logging  # noqa: F401  (the package logger's NullHandler)
from ._persistence import InconsistentVersionWarning
from ._version import __version__ as __version__
from .estimators import LMUClassifier, LMURegressor
from .features import LMUFeatures
from .head import DenseHeadClassifier, DenseHeadRegressor
from .pooled import LMUPooledFeatures
from .reference import dn_states

__all__ = [
    "DenseHeadClassifier",
    "DenseHeadRegressor",
    "InconsistentVersionWarning",
    "LMUClassifier",
    "LMUFeatures",
    "LMUPooledFeatures",
    "LMURegressor",
    "dn_states",
]
