"""One module per `harness` subcommand: `add_arguments(parser)` and `main(args) -> exit status`.

Grouped as the data flows: `recipes` (read and check recipes before anything runs), `running` (run points,
submit them and follow them), `results` (read what the runs left).
"""
