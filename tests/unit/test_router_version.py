"""The router's version comes from the pip freeze of the interpreter it ran with (the first worker's, in its
fingerprint), never from what the harness expects."""

from __future__ import annotations

from harness.point.record.router_version import frozen_version, router_metadata

WHEEL = ("sglang-router @ file:///tmp/x/sglang_router-0.3.2-cp38-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
         "#sha256=ba5a24951e5e0357fe390782fcd1abd861448a87216832dbf2e501a1dd1548eb")


def _fingerprint(freeze: list[str]) -> dict:
    return {"capture": {"python_executable": "/venv/bin/python3"},
            "pip_packages": {"/venv/bin/python3": freeze, "python3": ["smg==9.9.9", "sglang-router==9.9.9"]}}


def test_the_version_is_the_one_pip_freeze_pins_or_the_wheel_file_names():
    assert frozen_version(["smg-grpc-proto==0.4.28", "SGLang_Router==0.3.3"], "sglang-router") == "0.3.3"
    assert frozen_version([WHEEL], "sglang-router") == "0.3.2"
    assert frozen_version(["smg-grpc-proto==0.4.28"], "smg") is None
    assert frozen_version(["-e git+https://example.invalid/smg.git@abc#egg=smg"], "smg") is None


def test_metadata_reads_the_first_workers_interpreter_only():
    assert router_metadata("smg", _fingerprint(["smg==1.13.0"])) == ({"name": "smg", "version": "1.13.0"}, None)
    # the PATH python3 lists 9.9.9, but the router ran with the worker's interpreter, which has none
    meta, why = router_metadata("sglang-router", _fingerprint(["smg==1.13.0"]))
    assert meta is None and why == ("router_version_unmeasured: sglang-router is not in the pip freeze of "
                                    "/venv/bin/python3 (the first worker's interpreter)")
    assert router_metadata("smg", None) == (None, "router_version_unmeasured: the first worker's fingerprint "
                                                  "was not captured")
