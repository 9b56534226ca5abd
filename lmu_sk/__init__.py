"""lmu_sk: Legendre Memory Unit Delay Network features and dense heads for scikit-learn."""

from .estimators import LMUClassifier, LMURegressor
from .features import LMUFeatures
from .head import DenseHeadClassifier, DenseHeadRegressor
from .reference import dn_states

__all__ = [
    "DenseHeadClassifier",
    "DenseHeadRegressor",
    "LMUClassifier",
    "LMUFeatures",
    "LMURegressor",
    "dn_states",
]
__version__ = "0.1.0"
