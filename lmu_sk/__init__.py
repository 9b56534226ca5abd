"""lmu_sk: Legendre Memory Unit Delay Network features and dense heads for scikit-learn."""

from . import _logging  # noqa: F401  (the package logger's NullHandler)
from . import ridge as _ridge
from ._persistence import InconsistentVersionWarning, type_names
from ._version import __version__ as __version__
from .early import LMUEarlyClassifier
from .engine import pooling as _pooling
from .estimators import LMUClassifier, LMURegressor
from .features import LMUFeatures
from .head import DenseHeadClassifier, DenseHeadRegressor
from .neural import optimizers as _optimizers
from .neural import training as _training
from .pooled import LMUPooledFeatures
from .reference import dn_states

__all__ = [
    "TRUSTED_TYPES",
    "DenseHeadClassifier",
    "DenseHeadRegressor",
    "InconsistentVersionWarning",
    "LMUClassifier",
    "LMUEarlyClassifier",
    "LMUFeatures",
    "LMUPooledFeatures",
    "LMURegressor",
    "dn_states",
]

#: The types a saved lmu_sk estimator holds besides NumPy's and scikit-learn's, named as
#: ``skops.io`` names them: trust these and nothing else when loading,
#: ``skops.io.load(path, trusted=lmu_sk.TRUSTED_TYPES)``; a file that holds any other type
#: (a function, a foreign class) is then refused with ``UntrustedTypesFoundException``.
TRUSTED_TYPES: tuple[str, ...] = (
    *type_names(
        LMUClassifier,
        LMURegressor,
        LMUEarlyClassifier,
        LMUFeatures,
        LMUPooledFeatures,
        DenseHeadClassifier,
        DenseHeadRegressor,
        _ridge.RidgeHeadClassifier,
        _ridge.RidgeHeadRegressor,
        _pooling.PooledSpec,
        _pooling.WindowSpec,
        _training.TrainingHistory,
        _optimizers.SGD,
        _optimizers.Adam,
        _optimizers.ConstantLearningRate,
        _optimizers.PlateauLearningRate,
        _optimizers.AdaptiveLearningRate,
        _optimizers.InverseScalingLearningRate,
    ),
    # a ``dtype`` parameter given as np.dtype('float32') (parameters are stored as given)
    "numpy.dtype",
    # the aeon wrappers, by name: importing lmu_sk does not import aeon
    *(
        f"lmu_sk.aeon.{name}"
        for name in (
            "LMUAeonClassifier",
            "LMUAeonRegressor",
            "LMUAeonTransformer",
            "LMUAeonEarlyClassifier",
        )
    ),
)
