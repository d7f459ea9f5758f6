# SPDX-License-Identifier: GPL-2.0-or-later
"""The generator: Philox4x32-10's published known answers, and the stream layout.

The known-answer vectors are the ``philox4x32 10`` lines of ``kat_vectors`` in the Random123
distribution (D. E. Shaw Research).  A NumPy model of Philox4x32-10 written from Salmon et al.
(2011) reproduces them too, and then predicts, from the raw words of each element's stream,
the variates of the inversion methods: runif to the bit, the others to rounding.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from daskcl import nmath
from daskcl.random import philox4x32_10

# counter (4 words), key (2 words), expected (4 words)
KAT = [
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x00000000, 0x00000000),
     (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF),
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]
# the same file's 7-round line for the pi inputs (checks the model's round count handling)
KAT7 = ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
        (0x4DFCCABA, 0x190A87F0, 0xC47362BA, 0xB6B5242A))

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)
MASK = np.uint64(0xFFFFFFFF)


def philox_model(ctr: np.ndarray, key: np.ndarray, rounds: int = 10) -> np.ndarray:
    """Philox4x32-R on NumPy arrays (m, 4) and (m, 2) of uint32, from the paper."""
    c = [ctr[:, i].astype(np.uint64) for i in range(4)]
    k0, k1 = key[:, 0].astype(np.uint32), key[:, 1].astype(np.uint32)
    with np.errstate(over="ignore"):
        for r in range(rounds):
            if r:
                k0 = k0 + W0
                k1 = k1 + W1
            p0, p1 = M0 * c[0], M1 * c[2]
            c = [(p1 >> np.uint64(32)) ^ c[1] ^ k0.astype(np.uint64), p1 & MASK,
                 (p0 >> np.uint64(32)) ^ c[3] ^ k1.astype(np.uint64), p0 & MASK]
    return np.stack(c, axis=1).astype(np.uint32)


def stream_words(seed: int, elems: np.ndarray, nblocks: int = 1) -> np.ndarray:
    """The first 2 nblocks 64-bit words of each element's stream, shape (m, 2 nblocks)."""
    elems = np.asarray(elems, dtype=np.uint64)
    key = np.tile(np.array([seed & 0xFFFFFFFF, seed >> 32], dtype=np.uint32), (len(elems), 1))
    words = []
    for j in range(nblocks):
        ctr = np.stack([elems & MASK, elems >> np.uint64(32), np.full_like(elems, j),
                        np.zeros_like(elems)], axis=1).astype(np.uint32)
        r = philox_model(ctr, key).astype(np.uint64)
        words += [r[:, 0] | (r[:, 1] << np.uint64(32)), r[:, 2] | (r[:, 3] << np.uint64(32))]
    return np.stack(words, axis=1)


def unif(x: np.ndarray) -> np.ndarray:
    return ((x >> np.uint64(12)).astype(np.float64) + 0.5) * 2.0**-52


def half(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """rng_half: p in (0, 1/2) and the upper flag."""
    upper = (x >> np.uint64(63)).astype(bool)
    m = x & np.uint64(0x7FFFFFFFFFFFFFFF)
    length = np.array([int(v).bit_length() for v in m])
    sh = np.maximum(length - 52, 0).astype(np.uint64)
    p = ((m >> sh).astype(np.float64) + 0.5) * np.ldexp(1.0, sh.astype(np.int64) - 64)
    return p, upper


def test_known_answers():
    ctr = np.array([c for c, _, _ in KAT], dtype=np.uint32)
    key = np.array([k for _, k, _ in KAT], dtype=np.uint32)
    want = np.array([w for _, _, w in KAT], dtype=np.uint32)
    np.testing.assert_array_equal(philox4x32_10(ctr, key), want)
    np.testing.assert_array_equal(philox_model(ctr, key), want)
    c7, k7, w7 = KAT7
    np.testing.assert_array_equal(
        philox_model(np.array([c7], dtype=np.uint32), np.array([k7], dtype=np.uint32), 7)[0], w7
    )


def test_device_matches_model_on_random_counters():
    rng = np.random.default_rng(20110101)
    ctr = rng.integers(0, 2**32, size=(4096, 4), dtype=np.uint32)
    key = rng.integers(0, 2**32, size=(4096, 2), dtype=np.uint32)
    np.testing.assert_array_equal(philox4x32_10(ctr, key), philox_model(ctr, key))


def test_runif_is_the_first_word_of_each_stream():
    seed, offset = 0x0123456789ABCDEF, 2**40 - 7      # the element counter crosses 2^40
    x = nmath.runif(1000, -2.0, 3.0, seed=seed, offset=offset)
    w = stream_words(seed, offset + np.arange(1000, dtype=np.uint64))[:, 0]
    np.testing.assert_array_equal(x, -2.0 + 5.0 * unif(w))
    assert x.min() > -2.0 and x.max() < 3.0


@pytest.mark.parametrize("elem0", [0, 2**32 - 500, 2**63])
def test_counter_words_carry(elem0):
    """Elements straddling a 32-bit boundary of the counter use both counter words."""
    seed = 99
    x = nmath.runif(1000, seed=seed, offset=elem0)
    w = stream_words(seed, elem0 + np.arange(1000, dtype=np.uint64))[:, 0]
    np.testing.assert_array_equal(x, unif(w))


def test_inversion_methods_follow_the_stream():
    """rnorm, rexp, rcauchy, rlogis, rweibull are the quantile of rng_half's U."""
    seed, n = 7, 20000
    w = stream_words(seed, np.arange(n, dtype=np.uint64))[:, 0]
    p, upper = half(w)
    sign = np.where(upper, -1.0, 1.0)
    u_log = np.log(p)                     # log U for the lower half
    cases = {
        "rnorm": ((), sign * special.ndtri(p)),
        "rexp": ((), np.where(upper, -np.log1p(-p), -u_log)),
        "rcauchy": ((), -sign * np.where(p <= 0.25, 1 / np.tan(np.pi * p),
                                         np.tan(np.pi * (0.5 - p)))),
        "rlogis": ((), sign * (np.log(p) - np.log1p(-p))),
        "rweibull": ((1.7,), np.where(upper, -np.log1p(-p), -u_log) ** (1 / 1.7)),
    }
    for name, (params, want) in cases.items():
        got = getattr(nmath, name)(n, *params, seed=seed)
        np.testing.assert_allclose(got, want, rtol=2e-14, atol=0, err_msg=name)


def test_rsignrank_uses_the_bits_of_its_words():
    seed, n, k = 5, 500, 100
    x = nmath.rsignrank(n, k, seed=seed)
    w = stream_words(seed, np.arange(n, dtype=np.uint64), nblocks=1)       # 128 bits >= 100
    bits = np.array([[(int(w[e, i // 64]) >> (i % 64)) & 1 for i in range(k)] for e in range(n)])
    np.testing.assert_array_equal(x, bits @ np.arange(1, k + 1))
