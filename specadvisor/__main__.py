import sys

from specadvisor.cli.main import main

sys.exit(main())
