"""Pinned SGLang server flag tables, one JSON per SGLang version (see `harness.recipe.server_flags.flags`).

Each file is a dump of `sglang.srt.server_args.ServerArgs.add_cli_args` made by `harness flags dump`
inside the engine image: `{"sglang_version", "source", "options": {dest: {flags, action, type, nargs,
choices, default}}}`.
"""
