"""A profile's measured constants are the fit of its shipped measurements, and every constant is either measured or
named as an assumption."""

import json

import pytest

from harness.sim.batching.calibration import FITTED, fit_constants, load_measurements
from harness.sim.batching.timing import PROFILE_DIR, Profile, load_profile

CALIBRATED = [p.stem for p in sorted(PROFILE_DIR.glob("*.json")) if "calibration" in json.loads(p.read_text())]
NOT_CONSTANTS = {"name", "description", "calibrated", "calibration"}


def test_the_h200_profile_uses_measurements():
    assert "h200-tp8" in CALIBRATED


@pytest.mark.parametrize("name", CALIBRATED)
def test_measured_constants_equal_the_fit(name):
    profile = load_profile(name)
    cal = profile.calibration
    fit = fit_constants(load_measurements(cal.measurements), hbm_bw=profile.hbm_bw, flops=profile.flops,
                        compute_dtype=cal.compute_dtype)
    for field in cal.measured:
        assert getattr(profile, field) == fit[field], f"{field}: the profile has {getattr(profile, field)}, the fit {fit[field]}"


@pytest.mark.parametrize("name", CALIBRATED)
def test_every_constant_is_measured_or_assumed(name):
    profile = load_profile(name)
    cal = profile.calibration
    constants = set(Profile.model_fields) - NOT_CONSTANTS
    assert set(cal.measured) <= set(FITTED)
    assert not set(cal.measured) & set(cal.assumed)
    assert set(cal.measured) | set(cal.assumed) == constants


def test_the_fit_follows_the_measurements():
    m = load_measurements("h200-microbench.json")
    base = fit_constants(m, hbm_bw=4.8e12, flops=989e12, compute_dtype="bf16")
    slower = json.loads(json.dumps(m))
    for row in slower["gemv"]:
        row["weight_bytes_per_s"] /= 2
    assert fit_constants(slower, hbm_bw=4.8e12, flops=989e12, compute_dtype="bf16")["bw_efficiency"] == pytest.approx(
        base["bw_efficiency"] / 2, abs=0.001)
    fp8 = fit_constants(m, hbm_bw=4.8e12, flops=1979e12, compute_dtype="fp8_e4m3")
    assert 0.3 < fp8["flops_efficiency"] < 1.0
    with pytest.raises(ValueError):
        fit_constants({"gemv": [], "gemm": []}, hbm_bw=1, flops=1, compute_dtype="bf16")
