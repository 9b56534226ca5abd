"""Saving fitted estimators: the lmu_sk version travels with the pickle.

``pickle``, ``joblib`` and ``skops.io`` save an estimator through ``__getstate__`` and load
it through ``__setstate__``. :class:`VersionedPickleMixin` adds the version of lmu_sk that
saved the estimator to that state (as scikit-learn adds ``_sklearn_version`` to its own
estimators) and checks it at load time:

* saved by the running version: loads silently;
* saved by another version, or by 0.1.0 / 0.2.0, which stored no version: loads with an
  :class:`InconsistentVersionWarning` that names both versions and advises refitting;
* lacking a parameter that the running version's class has (saved by a version from before
  that parameter existed): cannot work here, so loading raises ``pickle.UnpicklingError``
  naming the parameters and both versions, instead of an ``AttributeError`` at ``predict``;
* lacking a parameter or a fitted attribute although saved by the running version (a state
  damaged or edited, or written by other code): loading raises ``pickle.UnpicklingError``
  naming what is missing. A state holding none of the class's fitted attributes is that of
  an unfitted estimator: using it raises ``NotFittedError``.

A pickle names the module of every class it holds, and loading imports it: each such name
is a promise that the module stays. Saved estimators and streams name only the modules of
:data:`PICKLED_MODULES` (and the packages of :data:`PICKLED_PACKAGES`); what they hold of
the internal packages (the pooled features' ``spec_``, the dense head's optimizer and
training history) is saved as plain data (a class's ``_plain_attributes``).

:func:`type_names` gives the names by which ``skops.io`` lists the types a saved estimator
holds, for the package's ``TRUSTED_TYPES``.
"""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Callable
from typing import Any

from sklearn.exceptions import InconsistentVersionWarning as _SklearnVersionWarning

from ._version import __version__

__all__ = [
    "PICKLED_MODULES",
    "PICKLED_PACKAGES",
    "InconsistentVersionWarning",
    "VersionedPickleMixin",
    "type_names",
]

#: The modules of lmu_sk a saved estimator or stream may name: the public modules of the
#: estimators, the heads and the streams, whose classes users save (kept where they are
#: for every model saved so far to load). The internal packages (``lmu_sk.kernels``,
#: ``lmu_sk.engine``, ``lmu_sk.neural``, ``lmu_sk.cli``) are not on it.
PICKLED_MODULES = (
    "lmu_sk.aeon",
    "lmu_sk.early",
    "lmu_sk.estimators",
    "lmu_sk.features",
    "lmu_sk.head",
    "lmu_sk.pooled",
    "lmu_sk.ridge",
    "lmu_sk.streaming",
)
#: The other packages whose objects saved estimators hold: NumPy's arrays, dtypes and random
#: generators, scikit-learn's label binarizer.
PICKLED_PACKAGES = ("numpy", "sklearn")

#: The key of the saved state that holds the lmu_sk version.
VERSION_KEY = "_lmu_sk_version"

#: What a state without :data:`VERSION_KEY` was saved by: the releases before the first
#: one that stored its version (0.3.0).
UNVERSIONED = "0.2.0 or earlier"


class InconsistentVersionWarning(_SklearnVersionWarning):
    """An lmu_sk estimator was loaded with another lmu_sk version than the one that saved it.

    A subclass of scikit-learn's :class:`sklearn.exceptions.InconsistentVersionWarning`, so a
    warnings filter set for scikit-learn's class (for instance
    ``warnings.simplefilter("error", InconsistentVersionWarning)`` in production) applies to
    lmu_sk's estimators too; the message and the version attributes are lmu_sk's.

    Parameters
    ----------
    estimator_name : str
        The class name of the loaded estimator.
    current_version : str
        The lmu_sk version that loads it.
    original_version : str
        The lmu_sk version that saved it, or ``"0.2.0 or earlier"`` for a state that
        stores no version.

    Attributes
    ----------
    estimator_name, current_version, original_version : str
        As given.
    current_sklearn_version, original_sklearn_version : str
        The same as ``current_version`` and ``original_version`` (the names of the
        scikit-learn parent class; here they hold lmu_sk versions).
    """

    def __init__(self, *, estimator_name: str, current_version: str, original_version: str):
        super().__init__(
            estimator_name=estimator_name,
            current_sklearn_version=current_version,
            original_sklearn_version=original_version,
        )
        self.current_version = current_version
        self.original_version = original_version

    def __str__(self) -> str:
        return (
            f"{self.estimator_name} was saved by lmu_sk {self.original_version} and is "
            f"loaded with lmu_sk {self.current_version}. It may fail or give different "
            f"results here: refitting it with lmu_sk {self.current_version} is advised (or "
            f"load it with lmu_sk {self.original_version})."
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # keyword-only __init__: rebuild from the attributes (a warning sent to another
        # process, e.g. by joblib, is pickled)
        return (
            _rebuild_warning,
            (self.estimator_name, self.current_version, self.original_version),
        )


def _rebuild_warning(
    estimator_name: str, current_version: str, original_version: str
) -> InconsistentVersionWarning:
    return InconsistentVersionWarning(
        estimator_name=estimator_name,
        current_version=current_version,
        original_version=original_version,
    )


def type_names(*types: type) -> tuple[str, ...]:
    """``'module.QualifiedName'`` of each type: how ``skops.io`` names the types to trust."""
    return tuple(f"{t.__module__}.{t.__qualname__}" for t in types)


def _listed(names: list[str]) -> str:
    return ", ".join(repr(name) for name in names)


class VersionedPickleMixin:
    """Store the lmu_sk version in the pickled state and check it when loading.

    Put it first among the bases of a scikit-learn estimator
    (``class LMUFeatures(VersionedPickleMixin, TransformerMixin, BaseEstimator)``); it
    extends ``BaseEstimator.__getstate__`` and ``__setstate__`` through ``super()``.

    An estimator class lists the attributes every fitted instance has as
    ``_fitted_attributes`` (a class attribute), or defines a class method
    ``_required_fitted(state)`` where they depend on the parameters. A state holding some of
    them but not all is refused at load rather than failing later with an
    ``AttributeError``; a state holding none is unfitted (``NotFittedError`` when used). A
    class method ``_inconsistent_state(state)`` may name what makes a complete fitted state
    unusable (refused at load too).
    """

    def _plain(self) -> dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]]:
        """The attributes saved as plain data instead of the objects they hold: a class's
        ``_plain_attributes``, ``{name: (to_plain, from_plain)}`` (none by default). An
        object saved before (an older pickle) loads as it is."""
        return getattr(type(self), "_plain_attributes", {})

    def __getstate__(self) -> dict[str, Any]:
        state = {**super().__getstate__(), VERSION_KEY: __version__}  # type: ignore[misc]
        for name, (to_plain, _) in self._plain().items():
            if state.get(name) is not None:
                state[name] = to_plain(state[name])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        migrated = getattr(type(self), "_migrated_state", None)
        if migrated is not None:  # what an earlier layout of the class's state lacks
            state = migrated(state)
        saved_by = state.pop(VERSION_KEY, UNVERSIONED)
        name = type(self).__name__
        missing = [
            param
            for param in type(self)._get_param_names()  # type: ignore[attr-defined]
            if param not in state
        ]
        required_of = getattr(type(self), "_required_fitted", None)
        required = (
            required_of(state) if required_of else getattr(type(self), "_fitted_attributes", ())
        )
        fitted = any(key in state for key in required)
        if fitted:
            missing += [key for key in required if key not in state]
        if missing and saved_by != __version__:
            raise pickle.UnpicklingError(
                f"{name} was saved by lmu_sk {saved_by} and cannot be used with lmu_sk "
                f"{__version__}: it lacks {_listed(missing)} of this version. Refit it with "
                f"lmu_sk {__version__}, or load it with lmu_sk {saved_by}."
            )
        if missing:
            raise pickle.UnpicklingError(
                f"{name} saved by lmu_sk {saved_by} lacks {_listed(missing)}, which every "
                f"{'fitted ' if fitted else ''}{name} has: the saved state is incomplete "
                "(damaged, edited or not written by lmu_sk). Refit the model and save it "
                "again."
            )
        inconsistent = getattr(type(self), "_inconsistent_state", None)
        problem = inconsistent(state) if fitted and inconsistent is not None else None
        if problem:
            raise pickle.UnpicklingError(
                f"{name} saved by lmu_sk {saved_by} has {problem}: the saved state is "
                "inconsistent (damaged, edited or not written by lmu_sk). Refit the model "
                "and save it again."
            )
        if saved_by != __version__:
            warnings.warn(
                InconsistentVersionWarning(
                    estimator_name=name,
                    current_version=__version__,
                    original_version=saved_by,
                ),
                stacklevel=2,
            )
        for attribute, (_, from_plain) in self._plain().items():
            if isinstance(state.get(attribute), dict):
                state[attribute] = from_plain(state[attribute])
        super().__setstate__(state)  # type: ignore[misc]
