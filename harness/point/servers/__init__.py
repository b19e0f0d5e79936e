"""Launch and ready: the servers and deployments a point talks to.

A point's server starts here (`serve` for one node, `deployment_server` for a multi-node deployment, and
`deployment_reuse` when one deployment serves several points), each inside its own process group
(`process_group`, `srun_step`). It is ready when `readiness` sees it alive, healthy and answering a chat,
with the harness's API key (`server_auth`) from a process that is ours (`port_owner`). While it serves,
`server_metrics` scrapes its Prometheus counters, `node_power` samples each node's GPUs, `server_crash`
notices a crash, `server_failure` reads why a server failed from the end of its log and `server_logs`
names its log files.
"""
