"""Multi-node and prefill/decode deployments: the recipe's `deployment` section, each node's command, their checks
and the router's command."""
