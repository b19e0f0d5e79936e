"""The point's state on disk, beside every stage.

`status` is the point's `status.json` (phase, holder, exit code), kept under its lock (`ownership`) and a
reserve that lets a full disk still be recorded (`disk_full`); `attempt` numbers a point's attempts and
`status_dir` reads a point directory's state; `variant` says where a run with overrides lands; `watch`
follows stop signals and the client's progress while a point runs.
"""
