"""One module per `harness` subcommand: `add_arguments(parser)` and `main(args) -> exit status`."""
