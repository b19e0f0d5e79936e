"""How a sweep reaches a Slurm cluster: one job array per sweep, one array task per point.

`profile` (strict cluster profiles), `render` (sbatch command line and the tiny batch script, pure),
`images` (locked squashfs import into the image cache), `submit` (plan file + sbatch --parsable),
`jobs` (the record of jobs this harness submitted), `state` (sacct/scontrol parsing and per-point
states, pure), `query` (running the Slurm client commands), `follow` (live phases and log tails).
"""
