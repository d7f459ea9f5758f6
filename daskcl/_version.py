# SPDX-License-Identifier: GPL-2.0-or-later
__version__ = "0.1.0"
