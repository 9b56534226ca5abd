"""Shared test settings."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "lmu_sk",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
settings.load_profile("lmu_sk")
