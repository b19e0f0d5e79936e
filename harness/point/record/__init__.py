"""Record and publish: a point's record, its validity verdict and its InferenceX row.

`result` gathers a finished point's artifacts into the record (`result_fields` builds its fields, purely,
from the client's metrics, `accept_length`, `stickiness`, `router_version` and `engine_label`), `validity`
gives its verdict and `publishable` says whether it may be published. `inferencex_row` (single node) and
`multinode_row` (prefill/decode) lay the record out as the published InferenceX row, with its server
metrics from `inferencex_server_metrics`.
"""
