"""Replay: the AgentX client that drives a ready server.

`corpus_input` lays the trace corpus out as AIPerf reads it, `aiperf` builds the client's command line, runs
it and reads its output (`aiperf_keyed` is the entry point that keeps the API key off the command line),
`aiperf_check` checks its output is whole, `progress` turns its lines into loading and window progress, and
`stall` notices a server that stopped producing tokens.
"""
