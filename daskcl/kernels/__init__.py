# SPDX-License-Identifier: GPL-2.0-or-later
"""The kernels on the runtime: the declarative rows of the nmath functions, the elementwise
launch (broadcasting by strides, sorted launches, R's warnings), the random generators' counter
streams and the Wilcoxon and signed-rank count tables.  :mod:`daskcl.nmath` is their public
face."""
