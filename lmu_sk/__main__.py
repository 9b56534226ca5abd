"""``python -m lmu_sk``: the ``lmu-sk`` command under that name; with no command it runs
the package's main job, the demo (``python -m lmu_sk features --help`` for the tool).

The command's signal handlers are installed by :func:`lmu_sk.cli.main.main`, after the
imports that it needs; a signal that arrives before (SIGINT, SIGTERM or SIGHUP while they
run) ends the command as one that arrives later does: one line on stderr and exit status
``128 + signum``, not a KeyboardInterrupt traceback or a death by the signal. Only the
standard library is imported before these handlers are in place.
"""

import signal
import sys

PROG = "python -m lmu_sk"
# The signals the command turns into its exit status (as lmu_sk.cli.output_file does).
_SIGNAL_NAMES = ("SIGINT", "SIGTERM", "SIGHUP")


class _StoppedAtStart(BaseException):
    """A signal received before the command's own handlers took over."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame) -> None:
    raise _StoppedAtStart(signum)


def _guard_start() -> dict:
    """Install :func:`_stop` for the signals not ignored (``nohup`` ignores SIGHUP: it stays
    ignored); return the handlers it replaced."""
    previous = {}
    for name in _SIGNAL_NAMES:
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) != signal.SIG_IGN:
            previous[signum] = signal.signal(signum, _stop)
    return previous


def _run() -> int:
    previous = _guard_start()
    try:
        from .cli.main import main

        return main(prog=PROG)
    except _StoppedAtStart as exc:
        try:
            sys.stderr.write(f"{PROG}: interrupted by {signal.Signals(exc.signum).name}\n")
            sys.stderr.flush()
        except (AttributeError, OSError):  # no stderr (2>&-), or nobody reading it
            pass
        return 128 + exc.signum
    finally:
        # (as they were: runpy may run this module in a process that goes on)
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


sys.exit(_run())
