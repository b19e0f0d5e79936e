"""The simulator's front: its command line and HTTP surface.

`cli` reads the same flags as `sglang.launch_server` (`flagtable`), `app` builds the simulated server from
them, `server` serves the HTTP endpoints (with `auth`), and `metrics` exposes the Prometheus counters.
"""
