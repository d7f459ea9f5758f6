# SPDX-License-Identifier: GPL-2.0-or-later
import sys

from .cli import main

sys.exit(main())
