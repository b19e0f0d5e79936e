"""The server's flags: SGLang's pinned flag tables (`flag_tables/<version>.json`) and the parser built from them, the
values a flag takes, the simulator's own `--sim-*` flags, the flags a recipe implies and the secret ones held apart."""
