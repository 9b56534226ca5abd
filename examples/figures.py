"""Figures of the Delay Network and of training, saved as PNG (needs matplotlib).

    python examples/figures.py [--out figures/]

Writes ``legendre_basis.png`` (the shifted Legendre polynomials of the window and the
impulse response), ``delay_decoding.png`` (delayed copies of a signal read out of the DN
state next to the true ones) and ``learning_curve.png`` (loss and validation accuracy per
epoch of an LMUClassifier on the bundled digits).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lmu_sk import LMUClassifier
from lmu_sk.demo import load_permuted_digits
from lmu_sk.plotting import plot_delay_decoding, plot_learning_curve, plot_legendre_basis


def main(argv: list[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("figures"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    paths = [
        args.out / name
        for name in ("legendre_basis.png", "delay_decoding.png", "learning_curve.png")
    ]

    plot_legendre_basis(order=6, theta=100.0, path=paths[0])
    plot_delay_decoding(order=24, theta=100.0, delays=[25.0, 50.0, 100.0], path=paths[1])
    X, y = load_permuted_digits()
    model = LMUClassifier(
        head="dense",
        order=64,
        theta=64,
        hidden_layer_sizes=(128,),
        early_stopping=True,
        n_iter_no_change=20,
        random_state=0,
    ).fit(X, y)
    plot_learning_curve(model, title="LMUClassifier on permuted-pixel digits", path=paths[2])
    for path in paths:
        print(f"wrote {path}")
    return paths


if __name__ == "__main__":
    main()
