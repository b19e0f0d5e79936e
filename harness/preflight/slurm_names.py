"""The profile's partition, account and QOS against what the cluster knows, so a misspelled name fails preflight
instead of `sbatch` after the queue wait: partitions from `sinfo`, the user's associations and the cluster's QOS
from `sacctmgr`, and whether Slurm enforces them from `scontrol show config` (`AccountingStorageEnforce`).

A name Slurm does not know is a FAIL naming the ones it does where Slurm would refuse the job (every partition;
an account or QOS where associations or QOS are enforced), else a WARN: `sbatch` accepts it, the job is not
charged or limited as meant. What cannot be asked (no `sinfo` or `sacctmgr` here, no controller or accounting
database answering, no association of the user) is a SKIP naming why, never a failure.
"""

from __future__ import annotations

import difflib
import getpass
import re
from dataclasses import dataclass
from typing import Any

from harness.preflight.checks import PLACEHOLDER, Finding, Level
from slurm.query import SlurmError, run_command, run_scontrol

SINFO = ["sinfo", "-h", "-a", "-o", "%P|%a"]
ASSOCIATIONS = ["sacctmgr", "-n", "-P", "show", "associations", "format=account,partition,qos", "where"]
QOS = ["sacctmgr", "-n", "-P", "show", "qos", "format=name"]


@dataclass(frozen=True)
class Association:
    account: str
    partition: str      # "" : every partition
    qos: tuple[str, ...]


@dataclass(frozen=True)
class SlurmNames:
    """What the cluster answered; each field a value, or a string saying why it could not be asked."""
    partitions: dict[str, str] | str                  # name -> availability (up, down, drain, inact)
    associations: list[Association] | str            # the user's
    qos: list[str] | str                             # every QOS of the cluster
    enforce: frozenset[str] | None                   # AccountingStorageEnforce; None: unknown
    user: str


def parse_partitions(sinfo: str) -> dict[str, str]:
    """`sinfo -h -a -o '%P|%a'`: partition -> availability; the default partition's `*` is dropped."""
    out: dict[str, str] = {}
    for line in sinfo.splitlines():
        name, _, avail = line.strip().partition("|")
        if name:
            out.setdefault(name.rstrip("*"), avail.strip())
    return out


def parse_associations(sacctmgr: str) -> list[Association]:
    """`sacctmgr -n -P show associations format=account,partition,qos where user=U`: one association a line,
    its QOS comma separated."""
    out = []
    for line in sacctmgr.splitlines():
        fields = line.strip().split("|")
        if len(fields) < 3 or not fields[0]:
            continue
        out.append(Association(fields[0], fields[1], tuple(q for q in fields[2].split(",") if q)))
    return out


def parse_qos(sacctmgr: str) -> list[str]:
    """`sacctmgr -n -P show qos format=name`: one name a line."""
    return [ln.strip() for ln in sacctmgr.splitlines() if ln.strip()]


def parse_enforce(config: str) -> frozenset[str] | None:
    """`AccountingStorageEnforce` of `scontrol show config` as a set (`none`: empty); None when absent."""
    match = re.search(r"^AccountingStorageEnforce\s*=\s*(\S*)", config, re.MULTILINE)
    if match is None:
        return None
    flags = {f.strip().lower() for f in match.group(1).split(",") if f.strip()}
    return frozenset(flags - {"none", "0"})


def ask(user: str | None = None) -> SlurmNames:
    """Ask Slurm (each command bounded by `slurm.query`'s timeout); a command that is missing or fails leaves
    its reason in place of the answer."""

    user = user or getpass.getuser()

    def answer(argv: list[str]) -> str | None:
        try:
            return run_command(argv)
        except SlurmError as exc:
            reasons.append(str(exc))
            return None

    reasons: list[str] = []
    sinfo = answer(SINFO)
    partitions: dict[str, str] | str = parse_partitions(sinfo) if sinfo is not None else reasons[-1]
    assoc_out = answer([*ASSOCIATIONS, f"user={user}"])
    associations: list[Association] | str = (parse_associations(assoc_out) if assoc_out is not None
                                             else reasons[-1])
    qos_out = answer(QOS) if assoc_out is not None else None
    qos: list[str] | str = parse_qos(qos_out) if qos_out is not None else (reasons[-1] if reasons else "")
    try:
        enforce = parse_enforce(run_scontrol(["show", "config"]))
    except SlurmError:
        enforce = None
    return SlurmNames(partitions, associations, qos, enforce, user)


def findings(profile: Any, cluster_src: str, names: SlurmNames | None = None) -> list[Finding]:
    """The partition, account and QOS the profile sets, each checked against `names` (default: Slurm is asked,
    only when the profile sets one; unset ones and placeholders are `checks.cluster_fields`' findings)."""
    out: list[Finding] = []
    part, acct, q = (v if v and not PLACEHOLDER.search(v) else None   # a placeholder fails as one already
                     for v in (profile.partition, profile.account, profile.qos))
    if not (part or acct or q):
        return out
    names = names or ask()
    if part:
        out += partition(part, names.partitions, cluster_src)
    if acct:
        out += account(acct, names, cluster_src)
    if q:
        out += qos(q, acct, part, names, cluster_src)
    return out


def partition(value: str, known: dict[str, str] | str, cluster_src: str) -> list[Finding]:
    """Every partition of `value` (Slurm takes a comma-separated list) exists; one that is not up is a WARN."""
    where = f"{cluster_src}:partition"
    if isinstance(known, str):
        return [Finding("skip", "slurm_partition", where, f"{value}, not checked: cannot ask Slurm ({known})")]
    if not known:
        return [Finding("skip", "slurm_partition", where, f"{value}, not checked: sinfo lists no partition")]
    out = []
    for name in [n.strip() for n in value.split(",") if n.strip()]:
        if name not in known:
            out.append(Finding("fail", "slurm_partition", where, f"{name!r}: no such partition on this cluster"
                                                                 f"{_closest(name, known)}; its partitions: "
                                                                 f"{_names(known)}"))
        elif known[name] != "up":
            out.append(Finding("warn", "slurm_partition", where, f"{name!r} is {known[name]}: jobs wait until it "
                                                                 "is up"))
    return out or [Finding("pass", "slurm_partition", where, f"{value}: known to Slurm and up")]


def account(value: str, names: SlurmNames, cluster_src: str) -> list[Finding]:
    """The account is one of the user's associations."""
    where = f"{cluster_src}:account"
    if isinstance(names.associations, str):
        return [Finding("skip", "slurm_account", where, f"{value}, not checked: cannot ask the accounting database "
                                                        f"({names.associations})")]
    if not names.associations:
        return [Finding("skip", "slurm_account", where, f"{value}, not checked: the accounting database has no "
                                                        f"association of user {names.user!r}")]
    accounts = sorted({a.account for a in names.associations})
    if value in accounts:
        return [Finding("pass", "slurm_account", where, f"{value}: an account of user {names.user!r}")]
    level, consequence = _enforced(names.enforce, "associations")
    return [Finding(level, "slurm_account", where, f"{value!r} is not an account of user {names.user!r}"
                                                   f"{_closest(value, accounts)}; theirs: {_names(accounts)} "
                                                   f"({consequence})")]


def qos(value: str, account_name: str | None, partition_name: str | None, names: SlurmNames,
        cluster_src: str) -> list[Finding]:
    """The QOS exists and the user's associations (of the profile's account and partition) allow it."""
    where = f"{cluster_src}:qos"
    if isinstance(names.qos, str) or isinstance(names.associations, str):
        why = names.qos if isinstance(names.qos, str) else names.associations
        return [Finding("skip", "slurm_qos", where, f"{value}, not checked: cannot ask the accounting database "
                                                    f"({why})")]
    level, consequence = _enforced(names.enforce, "qos")
    if names.qos and value not in names.qos:
        return [Finding(level, "slurm_qos", where, f"{value!r}: no such QOS on this cluster"
                                                   f"{_closest(value, names.qos)}; its QOS: {_names(names.qos)} "
                                                   f"({consequence})")]
    parts = set((partition_name or "").split(",")) | {""}
    mine = [a for a in names.associations if (account_name is None or a.account == account_name)
            and a.partition in parts]
    if not mine:
        return [Finding("skip", "slurm_qos", where, f"{value}, not checked against associations: user "
                                                    f"{names.user!r} has none"
                                                    + (f" with account {account_name!r}" if account_name else ""))]
    allowed = sorted({q for a in mine for q in a.qos})
    if value not in allowed:
        return [Finding(level, "slurm_qos", where, f"{value!r} is not allowed to user {names.user!r}"
                                                   + (f" on account {account_name!r}" if account_name else "")
                                                   + f"; allowed: {_names(allowed)} ({consequence})")]
    return [Finding("pass", "slurm_qos", where, f"{value}: allowed to user {names.user!r}")]


def _enforced(enforce: frozenset[str] | None, what: str) -> tuple[Level, str]:
    """FAIL where Slurm enforces `what` (or enforcement is unknown), else WARN. The `qos` flag implies
    associations."""
    if enforce is None or what in enforce or (what == "associations" and "qos" in enforce):
        return "fail", "sbatch refuses the job"
    shown = ",".join(sorted(enforce)) or "none"
    return "warn", f"AccountingStorageEnforce={shown}: sbatch accepts it, but the job is not charged or limited as meant"


def _closest(name: str, known: Any) -> str:
    match = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {match[0]!r}?)" if match else ""


def _names(known: Any, most: int = 12) -> str:
    names = sorted(known)
    return ", ".join(names[:most]) + (f", {len(names) - most} unnamed" if len(names) > most else "")
