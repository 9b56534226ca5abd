"""Former home of the compute kernels, now :mod:`lmu_sk.engine`; kept only for old imports."""
