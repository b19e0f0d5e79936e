import sys

from harness.sim.frontend.cli import main

sys.exit(main())
