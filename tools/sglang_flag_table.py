"""Regenerate a shipped SGLang flag table from SGLang's own argparse parser, without a GPU or its dependencies.

    python tools/sglang_flag_table.py 0.5.23            # downloads the wheel from PyPI (no dependencies)
    python tools/sglang_flag_table.py 0.5.23 --wheel-dir /tmp/sglang-0.5.23   # an unpacked or downloaded wheel

It downloads `sglang==VERSION` with `pip download --no-deps`, unpacks it into a temporary directory, imports
the real `sglang.srt.server_args` from it (the package `__init__` is skipped; third-party modules that are not
installed here, such as torch, triton or zmq, are replaced by inert stand-ins that only satisfy imports), builds
the parser with `ServerArgs.add_cli_args` and writes it with the harness's own `table_from_parser` to
`harness/recipe/server_flags/flag_tables/VERSION.json` (or `--out`). Run it with the project's venv interpreter. Argument
*parsing* does not depend on the stand-ins: types, nargs, choices and defaults come from SGLang's code.
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.machinery
import importlib.util
import json
import subprocess
import sys
import tempfile
import types
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# Attributes whose presence SGLang reads as "running on that accelerator" (`hasattr(torch, "npu")`).
_ABSENT = {"npu", "musa", "hpu"}


def _any_schema() -> Any:
    """A stand-in used as a pydantic field type accepts anything."""
    from pydantic_core import core_schema

    return core_schema.any_schema()


class _StubBase:
    """What a class deriving from a stand-in derives from instead."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __init_subclass__(cls, **kwargs: Any) -> None:  # e.g. `class X(StandIn, total=False)`
        pass

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        return _any_schema()


class _Stub:
    """An inert stand-in: every attribute, call, index or operator result is another stand-in; it can be
    subclassed (a class deriving from it derives from `_StubBase`) and used as a decorator."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, name: str) -> Any:
        if (name.startswith("__") and name.endswith("__")) or name in _ABSENT:
            raise AttributeError(name)
        return _Stub(f"{self._name}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs and not isinstance(args[0], _Stub):
            return args[0]  # used as a decorator: keep the decorated function or class
        return _Stub(f"{self._name}()")

    def __getitem__(self, item: Any) -> Any:
        return self

    def __or__(self, other: Any) -> Any:
        return self

    __ror__ = __or__

    def __iter__(self) -> Any:
        return iter(())

    def __bool__(self) -> bool:
        return False

    def __len__(self) -> int:
        return 0

    def __int__(self) -> int:
        return 0

    def __index__(self) -> int:
        return 0

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (_StubBase,)

    def __repr__(self) -> str:
        return f"<stand-in {self._name}>"

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        return _any_schema()


class _StubModule(types.ModuleType):
    __path__: list[str] = []
    __version__ = "0.0.0"

    def __getattr__(self, name: str) -> Any:
        if (name.startswith("__") and name.endswith("__")) or name in _ABSENT:
            raise AttributeError(name)
        return _Stub(f"{self.__name__}.{name}")


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _StubModule(spec.name)
        module.__path__ = []
        module.__spec__ = spec
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class _StubFinder(importlib.abc.MetaPathFinder):
    """Last on sys.meta_path: a module that SGLang's own code imports and that is not installed here becomes
    a stand-in. Imports from other packages (optional imports inside installed libraries) fail as usual."""

    def __init__(self, package_root: Path) -> None:
        self.package_root = str(package_root / "sglang")
        self.stubbed: set[str] = set()

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        top = fullname.split(".")[0]
        if top == "sglang" or not self._imported_by_sglang(top):
            return None
        self.stubbed.add(top)
        return importlib.machinery.ModuleSpec(fullname, _StubLoader(), is_package=True)

    def _imported_by_sglang(self, top: str) -> bool:
        parent = sys.modules.get(top)
        if parent is not None and not isinstance(parent, _StubModule):
            return False  # a missing submodule of an installed package: a real ImportError
        frame = sys._getframe(1)
        while frame is not None:
            name = frame.f_code.co_filename
            if not name.startswith("<frozen") and name != __file__:
                return name.startswith(self.package_root)
            frame = frame.f_back  # type: ignore[assignment]
        return False


def unpack_wheel(version: str, wheel_dir: Path | None, work: Path) -> Path:
    """The directory holding the unpacked `sglang` package of `version`."""
    if wheel_dir is not None and (wheel_dir / "sglang" / "srt" / "server_args.py").is_file():
        return wheel_dir
    source = wheel_dir or work / "download"
    wheels = sorted(source.glob(f"sglang-{version}-*.whl")) if source.is_dir() else []
    if not wheels:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", f"sglang=={version}", "--no-deps", "-q", "-d", str(source)],
            check=True,
        )
        wheels = sorted(source.glob(f"sglang-{version}-*.whl"))
    target = work / "unpacked"
    with zipfile.ZipFile(wheels[0]) as wheel:
        wheel.extractall(target)
    return target


def real_parser(package_root: Path, **kwargs: Any) -> argparse.ArgumentParser:
    """SGLang's own launch parser (`ServerArgs.add_cli_args`) from the package under `package_root`."""
    finder = _StubFinder(package_root)
    sys.meta_path.append(finder)
    sglang = types.ModuleType("sglang")  # skip sglang/__init__.py: it imports the whole runtime
    sglang.__path__ = [str(package_root / "sglang")]
    sys.modules["sglang"] = sglang
    server_args = importlib.import_module("sglang.srt.server_args")
    parser = argparse.ArgumentParser(add_help=False, **kwargs)
    server_args.ServerArgs.add_cli_args(parser)
    print(f"stand-ins for modules not installed here: {', '.join(sorted(finder.stubbed))}", file=sys.stderr)
    return parser


def dump(version: str, package_root: Path) -> dict[str, Any]:
    """The flag-table document of the SGLang package under `package_root`."""
    sys.path.insert(0, str(ROOT))
    from harness.recipe.server_flags.flag_dump import table_from_parser

    table = table_from_parser(real_parser(package_root), version)
    table["source"] = (
        f"argparse parser of sglang.srt.server_args.ServerArgs.add_cli_args, sglang {version} wheel "
        "(tools/sglang_flag_table.py)"
    )
    return table


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("version", help="SGLang version, e.g. 0.5.23")
    ap.add_argument("--wheel-dir", type=Path, default=None, help="a downloaded wheel's directory or an unpacked one")
    ap.add_argument("--out", type=Path, default=None, help="default: harness/recipe/server_flags/flag_tables/VERSION.json")
    args = ap.parse_args()
    out = args.out or ROOT / "harness" / "recipe" / "server_flags" / "flag_tables" / f"{args.version}.json"
    with tempfile.TemporaryDirectory(prefix="sglang-flags-") as tmp:
        root = unpack_wheel(args.version, args.wheel_dir, Path(tmp))
        table = dump(args.version, root)
        from harness.artifacts import write_text

        write_text(out, json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out} ({len(table['options'])} options, sglang {args.version})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
