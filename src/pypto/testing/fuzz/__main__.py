import sys

from pypto.testing.fuzz.cli import main

sys.exit(main())
