"""lmu_sk: Legendre Memory Unit Delay Network features and dense heads for scikit-learn."""

from . import _logging  # noqa: F401  (the package logger's NullHandler)
from .estimators import LMUClassifier, LMURegressor
from .features import LMUFeatures
from .head import DenseHeadClassifier, DenseHeadRegressor
from .pooled import LMUPooledFeatures
from .reference import dn_states

__all__ = [
    "DenseHeadClassifier",
    "DenseHeadRegressor",
    "LMUClassifier",
    "LMUFeatures",
    "LMUPooledFeatures",
    "LMURegressor",
    "dn_states",
]
__version__ = "0.2.0"
