"""Curves: the points of one InferenceX series, and each curve's Pareto frontiers.

A curve is what InferenceX-app draws as one line: the points of one series (`harness.report.results.series`: model,
scenario, base GPU + framework, precision). Every config of that series in the report is on it: a recipe's
points, other recipes and config keys, InferenceX rows of other recipe fingerprints, aggregated and
disaggregated deployments, other images. Their differences (KV offload, speculative method, DP attention,
topology, config, image, fingerprint) are attributes of points (`harness.report.results.attributes`), and the frontier
is taken over all of the curve's points, so a point dominated by another config's point is dominated, as
InferenceX's code-owner review counts it (throughput per GPU against E2EL p90; p75 beside it).

Two things the harness keeps as curves of their own: simulated and real results (the simulator is an engine,
not hardware; its numbers never sit on a line with measured ones), and a hand-tuned variant or tagged run
(`--set`/`--tag`, never a published row), drawn beside the recipe's own points. Within a curve a concurrency
may appear once per config (`harness.report.results.configs` keeps the newest result of a config's concurrency).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from harness.point.state.variant import derived_name
from harness.report.analysis.pareto import Direction, Frontier, pareto_frontier
from harness.report.results.attributes import identities, varying
from harness.report.results.configs import Config, config_name, group_configs
from harness.report.results.load import PointResult
from harness.report.results.series import Series
from harness.vocabulary import TOTAL_PER_GPU

POWER_NOT_MEASURED_SIM = "not measured (simulator)"

CURVE_DEFINITION = ("A curve is one InferenceX series: model, scenario, GPU+framework, precision; KV offload, "
                    "speculative method, DP attention, topology, config, image and recipe fingerprint are point "
                    "attributes. Simulated and real results never share a curve; a tuned variant or tag is a "
                    "curve of its own.")


@dataclass(frozen=True)
class Axis:
    """One frontier view: an x metric with its direction against total throughput per GPU (higher is better)."""

    name: str
    label: str
    direction: Direction
    value: Callable[[PointResult], float | None]


# In reading order (and the plots' order): the headline E2EL p90 view the review counts, E2EL p75 beside it,
# then interactivity.
FRONTIER_AXES: tuple[Axis, ...] = (
    Axis("e2el_p90", "E2EL p90 (s)", "min", lambda p: p.stat("e2el", "p90")),
    Axis("e2el_p75", "E2EL p75 (s)", "min", lambda p: p.stat("e2el", "p75")),
    Axis("intvty_p90", "interactivity p90 (tok/s/user)", "max", lambda p: p.stat("intvty", "p90")),
    Axis(
        "e2e_norm_intvty_p90",
        "E2E-normalized interactivity p90 (tok/s/user)",
        "max",
        lambda p: p.stat("e2e_norm_intvty", "p90"),
    ),
)
Y_LABEL = f"total throughput per GPU ({TOTAL_PER_GPU}: input + output tokens; higher is better)"


def y_value(p: PointResult) -> float | None:
    return p.total_tput_per_gpu


@dataclass(frozen=True)
class Curve:
    """The points of one curve (by concurrency, then config), each point's identity (`ids`, in the same
    order) and the frontier per axis over those identities."""

    series: Series | None          # None: no point of the curve has a record that names it
    simulated: bool
    engine: str
    points: list[PointResult]
    ids: list[str]
    frontiers: dict[str, Frontier[str]]
    configs: tuple[Config, ...] = ()
    warnings: list[str] = field(default_factory=list)
    variant: str | None = None
    overrides: tuple[str, ...] = ()
    varying: tuple[str, ...] = ()   # the point attributes that differ between the curve's points

    @property
    def config_keys(self) -> tuple[str, ...]:
        """The config keys of the curve's points (keys derived from identity for InferenceX rows)."""
        return tuple(dict.fromkeys(c.config_key for c in self.configs))

    @property
    def config_names(self) -> tuple[str, ...]:
        """The configs by the names their points go by (`harness.report.results.configs.config_name`)."""
        return tuple(n for n in dict.fromkeys(config_name(p) for p in self.points) if n)

    @property
    def image(self) -> str:
        """The image, or the images joined by `, ` where the curve's points ran on several."""
        return ", ".join(dict.fromkeys(p.image for p in self.points if p.image))

    @property
    def engine_label(self) -> str | None:
        """"real SGLang, plain-torch CPU path" when any point says so (`harness.point.record.engine_label`)."""
        return next((p.engine_label for p in self.points if p.engine_label), None)

    @property
    def variant_of(self) -> str | None:
        """The config key of the recipe a tuned variant or tagged run belongs to."""
        return self.configs[0].config_key if self.variant and self.configs else None

    @property
    def key(self) -> str:
        """The curve's name: the series (`model/scenario/hwKey/precision`), or for a tuned variant or tagged
        run its recipe's config key with `[variant]`."""
        if self.variant:
            return f"{self.variant_of} [{self.variant}]"
        return self.series.name if self.series else (self.config_keys or ("?",))[0]

    @property
    def titled(self) -> str:
        """The name a report shows over the curve: the key, and the configs a series curve gathers."""
        names = ", ".join(self.config_names)
        return f"{self.key} · {names}" if names and not self.variant else self.key

    @property
    def label(self) -> str:
        """The series label in plots: the name, the overrides of a variant (unless its name already spells
        them), and the engine."""

        changes = f" ({', '.join(self.overrides)})" if self.variant and self.overrides and \
            derived_name(self.overrides) != self.variant else ""
        return f"{self.titled}{changes} [{self.engine}]" if self.engine else f"{self.titled}{changes}"

    @property
    def invalid(self) -> list[PointResult]:
        return [p for p in self.points if not p.valid]

    def labelled(self) -> list[tuple[str, PointResult]]:
        """(identity, point) in the curve's order."""
        return list(zip(self.ids, self.points))

    def point(self, conc: int) -> PointResult | None:
        """The first point of concurrency `conc` (a curve of several configs may hold more than one)."""
        return next((p for p in self.points if p.conc == conc), None)


def frontiers_for(points: list[PointResult], ids: list[str]) -> dict[str, Frontier[str]]:
    """Frontier per axis over the points, named by their identities. Invalid points are excluded (shown
    elsewhere, never on a frontier)."""
    out: dict[str, Frontier[str]] = {}
    for axis in FRONTIER_AXES:
        rows = [(i, axis.value(p), y_value(p)) if p.valid else (i, None, None) for i, p in zip(ids, points)]
        out[axis.name] = pareto_frontier(rows, axis.direction, "max")
    return out


def _recorded_series(c: Config) -> Series | None:
    return next((p.series for p in c.points if p.recorded and p.series is not None), None)


def curve_of(configs: list[Config], series: Series | None) -> Curve:
    """One curve of configs of one series (or of one variant): points by concurrency, then config."""
    order = {id(c): i for i, c in enumerate(configs)}
    members = sorted(((p, order[id(c)]) for c in configs for p in c.points), key=lambda t: (t[0].conc, t[1]))
    points = [p for p, _ in members]
    ids = identities(points)
    variant = configs[0].variant
    return Curve(series=series, simulated=configs[0].simulated,
                 engine="/".join(sorted({e for c in configs for e in c.engine.split("/")})), points=points,
                 ids=ids, frontiers=frontiers_for(points, ids), configs=tuple(configs),
                 warnings=[w for c in configs for w in c.warnings], variant=variant,
                 overrides=configs[0].overrides if variant else (), varying=varying(points))


def group_curves(points: Iterable[PointResult]) -> list[Curve]:
    """Curves in order of (series, engine kind, variant): every config of one series and engine kind on one
    curve, a tuned variant or tagged run on a curve of its own after it. A config with no record (its points
    failed before measuring) joins the series of its config key's recorded points."""
    configs = group_configs(points)
    by_key: dict[str, Series] = {}
    for c in configs:
        found = _recorded_series(c)
        if found is not None:
            by_key.setdefault(c.config_key, found)
    groups: dict[tuple[str, bool, str, str], list[Config]] = {}
    series_of: dict[tuple[str, bool, str, str], Series | None] = {}
    for c in configs:
        series = _recorded_series(c) or by_key.get(c.config_key)
        name = series.name if series is not None else f"?{c.config_key}"   # unknown: one curve per config key
        gkey = (name, c.simulated, c.config_key if c.variant else "", c.variant or "")
        groups.setdefault(gkey, []).append(c)
        series_of[gkey] = series
    return [curve_of(groups[k], series_of[k]) for k in sorted(groups)]


def power_text(p: PointResult) -> str:
    """Power of a point in words: valid, invalid (reasons), or not measured on the simulator."""
    if p.simulated:
        return POWER_NOT_MEASURED_SIM
    if p.power_valid is None:
        return "-"
    return "valid" if p.power_valid else "invalid (" + ",".join(p.power_invalid_reasons) + ")"
