"""Preflight's partition, account and QOS checks (`harness.preflight.slurm_names`): the parsers on the outputs of
the Slurm 22.05 client commands (the local Slurm's own, and a site's with several partitions, accounts and QOS in
the same formats), the findings, and what is said when Slurm cannot be asked."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness.preflight import slurm_names
from harness.preflight.checks import Finding
from harness.preflight.slurm_names import (
    Association,
    SlurmNames,
    findings,
    parse_associations,
    parse_enforce,
    parse_partitions,
    parse_qos,
)

# `sinfo -h -a -o '%P|%a'`, `sacctmgr -n -P show associations format=account,partition,qos where user=root`,
# `sacctmgr -n -P show qos format=name` and `scontrol show config` of tools/slurm-local-setup.sh's cluster
LOCAL_SINFO = "debug*|up\n"
LOCAL_ASSOC = "root||normal\n"
LOCAL_QOS = "normal\n"
LOCAL_CONFIG = """Configuration data as of 2026-12-04T22:20:11
AccountingStorageBackupHost = (null)
AccountingStorageEnforce = none
AccountingStorageHost   = localhost
AccountingStorageExternalHost = (null)
"""
# a site: several partitions (one draining, one listed twice as sinfo does for nodes in two states), accounts per
# partition and QOS lists
SITE_SINFO = "gb300*|up\ngb300-long|up\nh200|up\nh200|up\nmaint|drain\n"
SITE_ASSOC = "bench-team||normal,high\nbench-team|gb300-long|long\ninfra|h200|normal\n"
SITE_QOS = "normal\nhigh\nlong\nscavenger\n"
SITE_CONFIG = "AccountingStorageEnforce = associations,limits,qos,safe\n"


def profile(partition: str | None = None, account: str | None = None, qos: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(partition=partition, account=account, qos=qos)


def names(sinfo: str = SITE_SINFO, assoc: str = SITE_ASSOC, qos: str = SITE_QOS,
          config: str = SITE_CONFIG) -> SlurmNames:
    return SlurmNames(parse_partitions(sinfo), parse_associations(assoc), parse_qos(qos), parse_enforce(config),
                      "bench")


def lines(found: list[Finding]) -> dict[str, tuple[str, str]]:
    return {f.code: (f.level, f.line()) for f in found}


def test_parsers_on_the_local_slurms_outputs() -> None:
    assert parse_partitions(LOCAL_SINFO) == {"debug": "up"}
    assert parse_associations(LOCAL_ASSOC) == [Association("root", "", ("normal",))]
    assert parse_qos(LOCAL_QOS) == ["normal"]
    assert parse_enforce(LOCAL_CONFIG) == frozenset()
    assert parse_enforce(SITE_CONFIG) == {"associations", "limits", "qos", "safe"}
    assert parse_enforce("SlurmctldPort = 6817\n") is None
    assert parse_partitions(SITE_SINFO) == {"gb300": "up", "gb300-long": "up", "h200": "up", "maint": "drain"}
    assert parse_associations(SITE_ASSOC)[1] == Association("bench-team", "gb300-long", ("long",))


def test_a_misspelled_partition_fails_naming_the_partitions() -> None:
    level, line = lines(findings(profile(partition="gb30"), "c.yaml", names()))["slurm_partition"]
    assert level == "fail"
    assert "c.yaml:partition: 'gb30': no such partition on this cluster (did you mean 'gb300'?); its partitions: " \
           "gb300, gb300-long, h200, maint" in line


def test_partitions_known_draining_and_listed() -> None:
    assert lines(findings(profile(partition="gb300"), "c", names()))["slurm_partition"][0] == "pass"
    level, line = lines(findings(profile(partition="maint"), "c", names()))["slurm_partition"]
    assert level == "warn" and "'maint' is drain" in line
    both = findings(profile(partition="h200,nope"), "c", names())
    assert [f.level for f in both] == ["fail"] and "'nope'" in both[0].message


def test_account_and_qos_enforced_fail_else_warn() -> None:
    found = lines(findings(profile("gb300", "bench-tem", "hihg"), "c", names()))
    assert found["slurm_account"][0] == "fail" and "(did you mean 'bench-team'?); theirs: bench-team, infra" in \
        found["slurm_account"][1] and "sbatch refuses the job" in found["slurm_account"][1]
    assert found["slurm_qos"][0] == "fail" and "'hihg': no such QOS" in found["slurm_qos"][1]
    relaxed = lines(findings(profile("debug", "nosuch", "hi"), "c", names(LOCAL_SINFO, LOCAL_ASSOC, LOCAL_QOS,
                                                                           LOCAL_CONFIG)))
    assert relaxed["slurm_partition"][0] == "pass"
    assert relaxed["slurm_account"][0] == "warn" and "AccountingStorageEnforce=none: sbatch accepts it" in \
        relaxed["slurm_account"][1]
    assert relaxed["slurm_qos"][0] == "warn"


def test_qos_is_checked_against_the_accounts_associations_on_the_partition() -> None:
    assert lines(findings(profile("gb300", "bench-team", "high"), "c", names()))["slurm_qos"][0] == "pass"
    assert lines(findings(profile("gb300-long", "bench-team", "long"), "c", names()))["slurm_qos"][0] == "pass"
    level, line = lines(findings(profile("gb300", "bench-team", "long"), "c", names()))["slurm_qos"]
    assert level == "fail" and "'long' is not allowed to user 'bench' on account 'bench-team'; allowed: high, " \
                               "normal" in line
    level, line = lines(findings(profile("h200", "infra", "scavenger"), "c", names()))["slurm_qos"]
    assert level == "fail" and "allowed: normal" in line


def test_what_cannot_be_asked_is_skipped_not_failed() -> None:
    unknown = SlurmNames("sinfo: not found (is this a Slurm login node?)",
                         "sacctmgr: error: Problem talking to the database: Connection refused",
                         "sacctmgr: error: Problem talking to the database: Connection refused", None, "bench")
    found = findings(profile("gb300", "bench-team", "normal"), "c", unknown)
    assert [(f.code, f.level) for f in found] == [("slurm_partition", "skip"), ("slurm_account", "skip"),
                                                  ("slurm_qos", "skip")]
    assert "not checked: cannot ask Slurm (sinfo: not found" in found[0].message
    assert found[0].line().startswith("SKIP slurm_partition")
    nobody = findings(profile(account="bench-team", qos="normal"), "c", names(assoc=""))
    assert [f.level for f in nobody] == ["skip", "skip"] and "no association of user 'bench'" in nobody[0].message


def test_slurm_is_asked_only_for_names_the_profile_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(user: str | None = None) -> SlurmNames:
        raise AssertionError("asked")

    monkeypatch.setattr(slurm_names, "ask", refuse)
    assert findings(profile(), "c") == []
    assert findings(profile("SITE-gb300", "SITE-account", "SITE"), "c") == []   # placeholders fail elsewhere
    qos_only = findings(profile("SITE-gb300", None, "high"), "c", names())
    assert [(f.code, f.level) for f in qos_only] == [("slurm_qos", "pass")]


def test_ask_says_why_each_command_did_not_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    from slurm import query

    def run(argv: list[str]) -> str:
        if argv[0] == "sinfo":
            return LOCAL_SINFO
        raise query.SlurmError(f"{argv[0]}: not found (is this a Slurm login node?)")

    monkeypatch.setattr(slurm_names, "run_command", run)
    monkeypatch.setattr(slurm_names, "run_scontrol", lambda args: LOCAL_CONFIG)
    asked = slurm_names.ask("bench")
    assert asked.partitions == {"debug": "up"} and asked.enforce == frozenset()
    assert asked.associations == asked.qos == "sacctmgr: not found (is this a Slurm login node?)"
