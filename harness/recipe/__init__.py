"""The recipe compiler: a recipe YAML file in, exact per-point plans out.

Takes a recipe (`recipes/*.yaml`), `--set` overrides, the pinned SGLang flag tables (`server_flags/flag_tables/`) and
the golden acceptance-length curves (`golden_al_distribution/`). Gives validated `Point`s and, for each,
a `PointPlan`: the exact server argv and env (synthetic acceptance injected here and nowhere else), the
client settings and the resources. Nothing here starts a process.

    schema      the strict recipe models            load        YAML → Recipe → Points (extends, zip)
    flags       pinned flag tables, value checks     flag_dump   a flag table from a live argparse parser
    golden      golden AL curves → SGLANG_SIMULATE_ACC_*         plan        Point → PointPlan
    points      the front half of run/sweep/plan/submit: file → overrides → plans
    override_effect   which `--set`s change no setting of the selected points (warned about)
    diff        what changed between two recipe versions

Files are read through `harness.inputs.yaml_input` (bounded; one-line errors naming file:line: key).
"""
