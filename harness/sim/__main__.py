import sys

from harness.sim.cli import main

sys.exit(main())
