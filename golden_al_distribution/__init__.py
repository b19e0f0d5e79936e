"""Golden acceptance-length curves: one YAML per curve, read by `harness.recipe.golden`.

Each file maps one model key to `thinking_on` / `thinking_off` tables of draft length k -> mean
acceptance length (accepted tokens per verify step, bonus token included, two decimals).
"""
