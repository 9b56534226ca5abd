"""Compute kernels: plain functions over arrays, one concern per module, no estimator logic.

CPU kernels work on *rows*: a 2-D array ``U`` of shape ``(n_rows, n_steps)`` where every row
is one channel of one sample driving its own copy of the Delay Network.
"""
