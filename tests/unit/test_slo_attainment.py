"""Per-request SLO attainment, goodput and cost (harness.point.record.slo, .cost; harness.report.analysis.goodput),
held to a hand computation over a few per-request records, and the bad-input lines of `--slo` and the prices."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.point.record.cost import CostBasis, basis_of, cost_block
from harness.point.record.result_fields import RequestRecord, parse_record
from harness.point.record.slo import attainment, wilson_interval
from harness.recipe.pricing import Price, parse_price
from harness.recipe.request_slo import is_request_bound, parse_request_slo
from harness.report.analysis.goodput import GOODPUT_COLUMNS, goodput_cells, judge, render_goodput
from harness.report.results.load import parse_result
from harness.search.slo import parse_slo

S = 1_000_000_000


def rec(start_s: float, end_s: float, ttft: float | None, itl: float | None, isl: int, osl: int,
        ok: bool = True, phase: str = "profiling") -> RequestRecord:
    return RequestRecord(phase=phase, start_ns=int(start_s * S), end_ns=int(end_s * S), ok=ok,
                         error_type=None if ok else "timeout", ttft_s=ttft if ok else None,
                         e2el_s=end_s - start_s if ok else None, itl_s=itl if ok else None,
                         input_tokens=isl if ok else None, output_tokens=osl if ok else None)


RECORDS = [
    rec(0.0, 0.0, None, None, 0, 0, phase="warmup"),    # warm-up: not counted
    rec(0.0, 4.0, 0.2, 0.02, 1000, 100),     # good (intvty 50)
    rec(1.0, 6.0, 0.4, 0.04, 2000, 200),     # intvty 25 < 30: over the intvty bound
    rec(2.0, 14.0, 0.3, 0.01, 3000, 300),    # e2el 12 > 10
    rec(3.0, 8.0, 0.6, 0.02, 4000, 400),     # ttft 0.6 > 0.5
    rec(4.0, 9.0, 0.1, None, 500, 1),        # one token: no interactivity sample
    rec(5.0, 10.0, 0.1, 0.025, 1500, 150),   # good (intvty 40)
    rec(6.0, 7.0, None, None, 0, 0, ok=False),   # an error
]
SLO = "ttft<=0.5,e2el<=10,intvty>=30"


def test_attainment_and_goodput_equal_the_hand_computation() -> None:
    block = attainment(RECORDS, cancelled_at_cutoff=2, num_gpus=2, slo=parse_request_slo(SLO))
    # 7 profiled + 2 cancelled at the cutoff = 9 requests; good: the first and the sixth profiled
    assert (block["requests"], block["good"]) == (9, 2)
    assert block["attainment"] == pytest.approx(2 / 9)
    assert block["not_met"] == {"errors": 1, "cancelled_at_cutoff": 2,
                                "over_bound": {"ttft": 1, "e2el": 1, "intvty": 1},
                                "without_sample": {"ttft": 0, "e2el": 0, "intvty": 1}}
    # window: first profiled successful start 0 s -> last successful end 14 s
    assert block["window_seconds"] == pytest.approx(14.0)
    assert block["request_goodput_rps"] == pytest.approx(2 / 14)
    tokens = block["token_goodput"]
    assert tokens["tokens"] == {"input": 2500, "output": 250}
    assert tokens["total_tps"] == pytest.approx(2750 / 14)
    assert tokens["total_tps_per_gpu"] == pytest.approx(2750 / 14 / 2)
    assert tokens["output_tps_per_gpu"] == pytest.approx(250 / 14 / 2)
    # Wilson 95 %: p = 2/9, z = 1.96
    z, n, p = 1.959963984540054, 9, 2 / 9
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert block["attainment_interval_95"] == pytest.approx([centre - half, centre + half])
    assert wilson_interval(0, 0) is None


def test_cost_equals_the_hand_computation() -> None:
    basis = CostBasis(num_gpus=2, total_tokens_per_s=1000.0, output_tokens_per_s=100.0, achieved_sessions=4.0,
                      good_requests_per_s=0.5, avg_total_gpu_power_w=800.0)
    block = cost_block(basis, Price(3.0, "USD", 0.25))
    hourly = 2 * 3.0 + 0.8 * 0.25   # GPUs, then 0.8 kW at 0.25/kWh
    assert block["hourly"] == {"gpus": 6.0, "energy": pytest.approx(0.2), "total": pytest.approx(hourly)}
    assert block["per_million_total_tokens"] == pytest.approx(hourly / (1000 * 3600) * 1e6)
    assert block["per_million_output_tokens"] == pytest.approx(hourly / (100 * 3600) * 1e6)
    assert block["per_agent_hour"] == pytest.approx(hourly / 4)
    assert block["per_good_request"] == pytest.approx(hourly / (0.5 * 3600))
    unpowered = cost_block(CostBasis(1, 1000.0, 100.0, 4.0, power_reason="power not valid (nvml_unavailable)"),
                           Price(3.0, "USD", 0.25))
    assert unpowered["hourly"]["energy"] is None and unpowered["energy_reason"] == "power not valid (nvml_unavailable)"
    assert unpowered["per_good_request"] is None


def _raw(r: RequestRecord, i: int) -> dict[str, object]:
    """An AIPerf profile_export.jsonl line for `r` (ms)."""
    metrics: dict[str, object] = {}
    if r.ok:
        metrics = {"time_to_first_token": {"value": (r.ttft_s or 0) * 1e3, "unit": "ms"},
                   "request_latency": {"value": (r.e2el_s or 0) * 1e3, "unit": "ms"},
                   "input_sequence_length": {"value": r.input_tokens, "unit": "tokens"},
                   "output_sequence_length": {"value": r.output_tokens, "unit": "tokens"}}
        if r.itl_s is not None:
            metrics["inter_token_latency"] = {"value": r.itl_s * 1e3, "unit": "ms"}
    return {"metadata": {"benchmark_phase": r.phase, "request_start_ns": r.start_ns, "request_end_ns": r.end_ns,
                         "x_request_id": f"r{i}"},
            "metrics": metrics, "error": None if r.ok else {"type": "timeout"}}


def test_report_recomputes_from_the_records_and_prices_the_point(tmp_path: Path) -> None:
    pdir = tmp_path / "k" / "conc4"
    (pdir / "aiperf").mkdir(parents=True)
    lines = [json.dumps(_raw(r, i)) for i, r in enumerate(RECORDS)]
    (pdir / "aiperf" / "profile_export.jsonl").write_text("\n".join(lines) + "\n")
    assert [parse_record(json.loads(x)).ok for x in lines] == [r.ok for r in RECORDS]
    record = {"config_key": "k", "conc": 4, "num_gpus": 2, "request_accounting": {"cancelled_at_cutoff": 2},
              "request_metrics": {"throughput": {"per_gpu": {"total_tput_tps": 500.0, "output_tput_tps": 50.0},
                                                 "duration_seconds": 14.0}},
              "achieved_concurrency": {"sessions": 4.0}}
    (pdir / "point_result.json").write_text(json.dumps(record))
    point = parse_result(record, pdir / "point_result.json")
    [judged], notes = judge([point], parse_request_slo(SLO), parse_price("3.0"))
    assert notes == []
    assert judged.slo_attainment is not None and judged.slo_attainment["good"] == 2
    assert judged.slo_attainment["attainment"] == pytest.approx(2 / 9)
    assert judged.cost is not None
    assert judged.cost["per_million_total_tokens"] == pytest.approx(6.0 / (1000 * 3600) * 1e6)
    assert judged.cost["per_good_request"] == pytest.approx(6.0 / (2 / 14 * 3600))
    table = render_goodput([("4", judged)])
    assert "0.222 [" in table and "2/9" in table and "3 USD/GPU-hour" in table
    cells = dict(zip(GOODPUT_COLUMNS, goodput_cells(judged)))   # report.csv's last columns
    assert (cells["slo"], cells["slo_good"], cells["slo_requests"], cells["currency"]) == (SLO, "2", "9", "USD")
    # without records: said, not guessed
    (pdir / "aiperf" / "profile_export.jsonl").unlink()
    [bare], notes = judge([point], parse_request_slo(SLO), None)
    assert bare.slo_attainment is None and "no per-request records" in notes[0]
    # the record's own blocks, as build_point_result writes them
    assert basis_of({**record, "request_metrics": {"throughput": {"total": {"tokens_per_second": 10.0}}}}
                    ).total_tokens_per_s == 10.0


@pytest.mark.parametrize(("text", "words"), [
    ("ttft<=x", "--slo 'ttft<=x': ttft: 'x' is not a positive finite number"),
    ("ttft>=0.5", "--slo 'ttft>=0.5': ttft takes <= or <"),
    ("ttfb<=1", "unknown request metric 'ttfb'"),
    ("ttft<=1,ttft<=2", "ttft given more than once"),
    ("", "--slo: expected bounds"),
])
def test_a_malformed_slo_is_one_line_naming_the_key(text: str, words: str) -> None:
    with pytest.raises(UserError) as err:
        parse_request_slo(text)
    assert words in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("text", ["abc", "-3", "0", "3.0 dollars", "nan", "inf"])
def test_a_malformed_price_is_one_line_naming_the_key(text: str) -> None:
    with pytest.raises(UserError, match="^--gpu-hour-price: expected a positive price"):
        parse_price(text)


def test_prices_and_search_conditions_parse() -> None:
    assert parse_price("2.5EUR", "0.1") == Price(2.5, "EUR", 0.1)
    assert parse_price("3") == Price(3.0, "USD", None)
    with pytest.raises(UserError, match="--energy-price: USD differs"):
        parse_price("2.5EUR", "0.1USD")
    assert parse_slo("attainment>=0.95").name == "attainment"
    with pytest.raises(UserError, match="attainment is a share from 0 to 1"):
        parse_slo("attainment>=95")
    assert is_request_bound("ttft<=0.5,e2el<=10") and not is_request_bound("ttft_p90<=2")
    assert not is_request_bound("attainment>=0.9")


def test_a_submitted_sweep_carries_the_slo_and_price_to_its_points() -> None:
    from harness.recipe.schema import Pricing
    from slurm.sweep_plan import SweepPlanFile

    plan = SweepPlanFile(out_dir="out", points=[], slo="ttft<=1", pricing=Pricing(gpu_hour=2.0, currency="EUR"))
    options = SweepPlanFile.model_validate_json(plan.model_dump_json()).options()
    assert options.slo == parse_request_slo("ttft<=1") and options.price == Price(2.0, "EUR", None)
    assert SweepPlanFile(out_dir="out", points=[]).options().price is None
