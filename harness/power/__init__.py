"""GPU power and energy over a benchmark window: NVML sampling, integration, validity.

How a point uses it::

    sampler = PowerSampler(gpus=None, csv_path=point_dir / "power.csv")  # GPUs this process may use
    sampler.start()  # returns after the first sample
    ...  # the client's profiling window [start_ns, end_ns], wall-clock UTC
    sampler.stop()  # takes one last sample
    report = integrate_power(point_dir / "power.csv", start_ns, end_ns, expected_gpus=tp)
    result.update(report.result_fields(output_tokens, total_tokens, successful_requests))
    write_json(point_dir / "power_validation.json", report.validation_json())
"""

from harness.power.gpu_info import GpuRef
from harness.power.integrate import GpuEnergy, PowerReport, integrate_power, integrate_samples
from harness.power.reasons import DESCRIPTIONS as REASON_DESCRIPTIONS
from harness.power.reasons import Reason
from harness.power.sampler import PowerSampler
from harness.power.samples import COLUMNS, PowerSample, read_power_csv, status_path

__all__ = [
    "COLUMNS",
    "REASON_DESCRIPTIONS",
    "GpuEnergy",
    "GpuRef",
    "PowerReport",
    "PowerSample",
    "PowerSampler",
    "Reason",
    "integrate_power",
    "integrate_samples",
    "read_power_csv",
    "status_path",
]
