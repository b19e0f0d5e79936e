"""A simulated server beyond one worker: tensor/expert/pipeline parallel costs, attention-DP ranks, multi-node
workers, and prefill/decode disaggregation (its roles, rooms and the KV handover's bootstrap server)."""
