"""``python -m ocnb.commands COMMAND`` (and the old ``python -m ocnb.cli``): the ``ocnb`` command."""

import sys

from . import main

sys.exit(main())
