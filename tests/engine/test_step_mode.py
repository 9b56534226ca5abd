"""The engine's step mode (:mod:`lmu_sk.engine.stream`) beyond the contract test: its
routing by the planner."""

from lmu_sk.engine import plan


def test_a_carried_chunk_of_few_rows_takes_the_recurrence_on_the_cpu():
    """Every state of a stream's chunk ('max'): the block products read their block matrix
    again for every block, which few rows do not pay back; the recurrence then is cheaper
    by the CPU cost table, the blocks again for many rows (and always off the CPU)."""
    assert plan.carried_route(1, 468, 4, "cpu") == "recurrence"
    assert plan.carried_route(1000, 468, 4, "cpu") == "blocked"
    assert plan.carried_route(1, 468, 4, "gpu") == "blocked"
    rows = [n for n in range(1, 200) if plan.carried_route(n, 64, 4, "cpu") == "recurrence"]
    assert rows == list(range(1, len(rows) + 1))  # one crossover
