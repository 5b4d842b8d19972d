import sys

from ppy_check.cli import main

sys.exit(main())
