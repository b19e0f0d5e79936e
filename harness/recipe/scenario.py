"""The AgentX client's scenarios: which runs they accept as a submission, decided before any GPU hour.

The client (`agentx-harness`, the AIPerf fork InferenceX's AgentX runs use) resolves a run's configuration before
it starts anything. Under a scenario (`agentx`, InferenceX's preset and the default; or `inferencex-agentx-mvp`,
the earlier one) that resolution refuses a run breaking one of the scenario's invariants (a local, unpinned
corpus; a profiling window under 900 s; no streaming; `ignore_eos` off; a wrong cache bust; a rate-shaped load;
...), unless `--unsafe-override` downgrades the breaches to warnings and stamps the run `submission_valid: false`.

The harness passes `--unsafe-override` only for a run the user marked unofficial (`--unofficial`, or
`client.unofficial: true` in a smoke recipe), never on its own. Two layers decide:

- `fast_violations(client)`: our copy of the two invariants a recipe can break (corpus and window), pure and
  instant; `build_plan` refuses a plan that breaks them without `unofficial`.
- `resolve(argv)`: the client's own parser, configuration builder and scenario resolver on the exact
  `aiperf profile` argv of a point (imported, no network, no dataset download, no process). `plan`, `check`,
  `preflight`, `submit` and `run` call it on every point; a test holds the fast copy equal to it on every shipped
  recipe, and `AGENTX_PRESET` (what the harness leaves to the `agentx` preset) equal to the client's registry.
"""

from __future__ import annotations

import contextlib
import io
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.traces.pinned import is_pinned_spec

if TYPE_CHECKING:
    from harness.recipe.client_plan import ClientPlan

AGENTX = "agentx"
MVP = "inferencex-agentx-mvp"
MIN_DURATION_S = 900.0
LOADER_FLAG = "--input-file (loader)"
DURATION_FLAG = "--benchmark-duration"
# The timeouts InferenceX sets around an AgentX run; the `agentx` preset sets them itself.
MVP_TIMEOUT_ENV = {"AIPERF_HTTP_TCP_USER_TIMEOUT": "900000", "AIPERF_DATASET_CONFIGURATION_TIMEOUT": "1800",
                   "AIPERF_SERVICE_PROFILE_CONFIGURE_TIMEOUT": "1800"}


@dataclass(frozen=True)
class Preset:
    """What the `agentx` preset sets that the harness therefore leaves out of a point's command."""

    seed: int = 42
    trajectory_start_ratios: tuple[float, float] = (0.25, 0.75)
    failed_request_threshold: float = 0.10
    cli_defaults: tuple[tuple[str, object], ...] = (
        ("endpoint_type", "chat"), ("streaming", True), ("use_server_token_count", True), ("no_gpu_telemetry", True))
    environment: tuple[tuple[str, str, object], ...] = (
        ("HTTP", "TCP_USER_TIMEOUT", 900000), ("DATASET", "CONFIGURATION_TIMEOUT", 1800),
        ("SERVICE", "PROFILE_CONFIGURE_TIMEOUT", 1800))


AGENTX_PRESET = Preset()


@dataclass(frozen=True)
class Violation:
    flag: str
    current: str
    required: str

    def line(self) -> str:
        return f"{self.flag} {self.current} (AIPerf requires {self.required})"


def fast_violations(client: ClientPlan) -> list[Violation]:
    """The scenario invariants this client plan breaks, as far as a recipe can break them."""

    found = []
    if not is_pinned_spec(client.traces):
        found.append(Violation(LOADER_FLAG, f"local corpus {client.traces}",
                               "the pinned corpus: client.traces: public-dataset:ALIAS@COMMIT"))
    if client.duration_s < MIN_DURATION_S:
        found.append(Violation(DURATION_FLAG, f"{client.duration_s:g} s", f"a window of at least {MIN_DURATION_S:g} s"))
    return found


def refusal(where: str, scenario: str, violations: list[Violation]) -> str:
    """One line: what the client's scenario refuses, and the two ways out."""
    broken = "; ".join(v.line() for v in violations)
    return (f"{where}: AIPerf's {scenario} scenario refuses this run: {broken}. Run the pinned corpus at a window "
            f"of {MIN_DURATION_S:g} s or more, or mark the run unofficial (--unofficial, or client.unofficial: "
            "true; AIPerf then records submission_valid: false)")


@dataclass(frozen=True)
class Resolution:
    """What AIPerf's own configuration resolution said of one `aiperf profile` argv."""

    accepted: bool                        # AIPerf would start this run
    submission_valid: bool | None         # its scenario check when accepted (None: no scenario)
    violations: list[Violation] = field(default_factory=list)
    error: str | None = None              # AIPerf's refusal, in its words (first line)

    def to_json(self) -> dict[str, Any]:
        return {"accepted": self.accepted, "submission_valid": self.submission_valid,
                "violations": [v.__dict__ for v in self.violations], "error": self.error}


def resolve(argv: list[str]) -> Resolution:
    """Run AIPerf's CLI parsing, config building and pre-launch resolvers (dataset, scenario, timing) on the
    arguments of `aiperf profile` (argv without the executable and `profile`). Nothing is launched or fetched:
    a public dataset is resolved from AIPerf's plugin registry, a local corpus from its directory."""
    quiet = io.StringIO()
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            return _resolve(argv)
    finally:
        logging.disable(previous)


def _resolve(argv: list[str]) -> Resolution:
    from aiperf.cli import app
    from aiperf.cli_runner import _make_benchmark_run
    from aiperf.common.scenario.base import ScenarioLockError
    from aiperf.config.flags.resolver import resolve_config
    from aiperf.config.loader import build_benchmark_plan
    from aiperf.config.resolution.resolvers import (
        ConfigResolverChain,
        DatasetResolver,
        ScenarioResolver,
        TimingResolver,
    )
    from aiperf.orchestrator.orchestrator import resolve_run_seed

    try:
        _, bound, _ = app.parse_args(["profile", *argv], exit_on_error=False, print_error=False)
        plan = build_benchmark_plan(resolve_config(bound.kwargs["cli_config"], None))
        run = _make_benchmark_run(plan.configs[0], random_seed=resolve_run_seed(plan, plan.variations[0]),
                                  variables=plan.variables)
        ConfigResolverChain([DatasetResolver(), ScenarioResolver(), TimingResolver()]).resolve_all(run)
    except ScenarioLockError as exc:
        return Resolution(False, None, [_violation(v) for v in exc.violations], _first_line(exc))
    except (Exception, SystemExit) as exc:  # AIPerf's own input errors (cyclopts, pydantic, its resolvers)
        return Resolution(False, None, [], _first_line(exc) or type(exc).__name__)
    outcome = run.resolved.scenario_outcome
    if outcome is None or outcome.scenario_name is None:
        return Resolution(True, None)
    return Resolution(True, bool(outcome.submission_valid), [_violation(v) for v in outcome.violations])


def _violation(v: Any) -> Violation:
    return Violation(str(v.flag), str(v.current_value), str(v.required_value))


def _first_line(exc: BaseException) -> str:
    return " ".join(str(exc).split("\n", 1)[0].split())[:300]
