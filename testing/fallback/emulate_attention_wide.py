"""Lane-level CPU emulation of shim_lib/fallback/attention_wide.cu
(attn_fwd_wide), to check its index math without a GPU: every address the
kernel computes (the tile loaders' chunks, ldmatrix row addresses of both
row groups, the bias pairs, the epilogue's stores and lse rows), the
ldmatrix / mma.m16n8k16 fragment layouts of the PTX ISA, the shuffles of
the row reductions and the double-buffer indices, against float64
attention with the semantics of attention_kernels.h.

Not a build or CI test (it needs numpy): run it by hand after changing the
kernel's indexing, and mirror any such change here first.

    python3 testing/fallback/emulate_attention_wide.py [--quick]

What it asserts besides the values: global reads and writes in bounds (no
read past a tensor, none of a row >= L or a key >= S), every output element
of rows < L and columns < D written exactly once and nothing else, every
lse row < lse_pad written once, ldmatrix row addresses 16-byte aligned and
conflict free (8 distinct 16-byte bank groups per phase), cp.async sources
and destinations 16-byte aligned, bias pairs 4-byte aligned.
Not emulated: timing (cp.async completion order, barriers): the emulation
runs each block's phases in program order, so it checks which buffer each
step reads and writes, not that the waits are sufficient.
"""

import argparse
import itertools
import math
import sys

import numpy as np

NW, RG = 4, 2
WM = 16 * RG
BM = WM * NW
NT = 32 * NW
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
NONE, UPPER_LEFT, BOTTOM_RIGHT = 0, 1, 2

LANES = np.arange(32)
G = LANES >> 2
TIG = LANES & 3


class Mem:
    """A global tensor: flat float64 storage with bounds-checked access."""

    def __init__(self, data, name):
        self.d = np.asarray(data, dtype=np.float64).copy()
        self.name = name
        self.writes = np.zeros(self.d.shape, dtype=np.int64)

    def read(self, i):
        assert 0 <= i < len(self.d), f"{self.name}: read at {i} of {len(self.d)}"
        return self.d[i]

    def write(self, i, x):
        assert 0 <= i < len(self.d), f"{self.name}: write at {i} of {len(self.d)}"
        self.d[i] = x
        self.writes[i] += 1


def ldsm_x4(smem, addr, trans=False):
    """ldmatrix.x4(.trans): lane l gives row l % 8 of matrix l // 8;
    register i of lane t holds matrix i's (row t/4, cols 2(t%4) + {0,1}),
    or with .trans (rows 2(t%4) + {0,1}, col t/4)."""
    addr = np.asarray(addr)
    assert (addr % 8 == 0).all(), "ldmatrix row address not 16-byte aligned"
    for i in range(4):  # one phase per matrix: 8 rows of 16 bytes
        groups = (addr[8 * i:8 * i + 8] // 8) % 8
        assert len(set(groups.tolist())) == 8, f"ldmatrix bank conflict {addr}"
    mats = np.stack([np.stack([smem[a:a + 8] for a in addr[8 * i:8 * i + 8]])
                     for i in range(4)])
    out = np.empty((32, 4, 2))
    for i in range(4):
        m = mats[i]
        if trans:
            out[:, i, 0], out[:, i, 1] = m[2 * TIG, G], m[2 * TIG + 1, G]
        else:
            out[:, i, 0], out[:, i, 1] = m[G, 2 * TIG], m[G, 2 * TIG + 1]
    return out


def mma(c, a, b0, b1):
    """mma.m16n8k16 row.col: c [32, 4] += A (a [32, 4, 2]) B (b0, b1 [32, 2])
    in the PTX fragment layouts."""
    A = np.zeros((16, 16))
    B = np.zeros((16, 8))
    for reg, (r, k) in enumerate([(0, 0), (8, 0), (0, 8), (8, 8)]):
        A[G + r, 2 * TIG + k] = a[:, reg, 0]
        A[G + r, 2 * TIG + k + 1] = a[:, reg, 1]
    B[2 * TIG, G], B[2 * TIG + 1, G] = b0[:, 0], b0[:, 1]
    B[2 * TIG + 8, G], B[2 * TIG + 9, G] = b1[:, 0], b1[:, 1]
    C = A @ B
    c[:, 0] += C[G, 2 * TIG]
    c[:, 1] += C[G, 2 * TIG + 1]
    c[:, 2] += C[G + 8, 2 * TIG]
    c[:, 3] += C[G + 8, 2 * TIG + 1]


def cp_async16(smem, dst, mem, src, nbytes):
    assert dst % 8 == 0 and src % 8 == 0, "cp.async not 16-byte aligned"
    n = nbytes // 2
    for e in range(8):
        smem[dst + e] = mem.read(src + e) if e < n else 0.0


def visible_end(p, last, off):
    if not p["causal"]:
        return p["S"]
    return max(0, min(p["S"], last + off + 1))


def load_rows(smem, s, mem, g, g_sl, row0, nrows, D, vec, DP, ROWS, LDS):
    CPR = DP // 8
    RPP = NT // CPR
    for tid in range(NT):
        col = (tid % CPR) * 8
        gr = row0 + tid // CPR
        src = g + gr * g_sl + col
        dst = s + (tid // CPR) * LDS + col
        step = RPP * g_sl
        col_ok = col < D
        for _ in range(ROWS // RPP):
            ok = gr < nrows and col_ok
            if vec:
                cp_async16(smem, dst, mem, src if ok else g, 16 if ok else 0)
            else:
                for e in range(8):
                    smem[dst + e] = (mem.read(src + e)
                                     if gr < nrows and col + e < D else 0.0)
            gr += RPP
            src += step
            dst += RPP * LDS


def load_bias_tile(smem, s, mem, g, sl, ss, row0, L, col0, S, bvec, BN, LDB):
    CPR = BN // 8
    RPP = NT // CPR
    for tid in range(NT):
        gc = col0 + (tid % CPR) * 8
        gr = row0 + tid // CPR
        src = g + gr * sl + gc * ss
        dst = s + (tid // CPR) * LDB + (tid % CPR) * 8
        step = RPP * sl
        nk = min(max(S - gc, 0), 8)
        for _ in range(BM // RPP):
            n = nk if gr < L else 0
            if bvec:
                cp_async16(smem, dst, mem, src if n > 0 else g, 2 * n)
            else:
                for e in range(8):
                    smem[dst + e] = mem.read(src + e * ss) if e < n else 0.0
            gr += RPP
            src += step
            dst += RPP * LDB


def shfl_xor(x, m):
    return x[LANES ^ m]


def run_block(p, mem, bx, by, grid_y, DP, BN, QREG, BIAS, vec, pair, bvec):
    LDS, LDB = DP + 8, BN + 8
    kQ, kK = 0, BM * LDS
    kV = kK + 2 * BN * LDS
    kB = kV + 2 * BN * LDS
    smem = np.full(kB + (2 * BM * LDB if BIAS else 0), np.nan)
    sQ, sK, sV, sB = kQ, kK, kV, kB
    b, h = bx // p["Hq"], bx % p["Hq"]
    hk = h // (p["Hq"] // p["Hkv"])
    m0 = (grid_y - 1 - by) * BM
    L, S, D = p["L"], p["S"], p["D"]
    off = S - L if p["causal"] == BOTTOM_RIGHT else 0
    gq = b * p["q_sb"] + h * p["q_sh"]
    gk = b * p["k_sb"] + hk * p["k_sh"]
    gv = b * p["v_sb"] + hk * p["v_sh"]
    gb = b * p["b_sb"] + h * p["b_sh"] if BIAS else 0
    ntiles = (visible_end(p, min(m0 + BM, L) - 1, off) + BN - 1) // BN

    load_rows(smem, sQ, mem["q"], gq, p["q_sl"], m0, L, D, vec, DP, BM, LDS)
    if ntiles > 0:
        load_rows(smem, sK, mem["k"], gk, p["k_sl"], 0, S, D, vec, DP, BN, LDS)
        load_rows(smem, sV, mem["v"], gv, p["v_sl"], 0, S, D, vec, DP, BN, LDS)
        if BIAS:
            load_bias_tile(smem, sB, mem["bias"], gb, p["b_sl"], p["b_ss"], m0,
                           L, 0, S, bvec, BN, LDB)
    NS, NO, KS = BN // 8, DP // 8, DP // 16
    o = np.zeros((NW, 32, RG, NO, 4))
    m_r = np.full((NW, 32, 2 * RG), -np.inf)
    l_r = np.zeros((NW, 32, 2 * RG))
    qf = np.zeros((NW, 32, RG, KS, 4, 2))
    sl2 = p["scale"] * LOG2E

    def a_addr(w, r, kk):
        return (sQ + w * WM * LDS + (16 * r + (LANES & 7) + ((LANES >> 3) & 1) * 8)
                * LDS + kk * 16 + (LANES >> 4) * 8)

    for t in range(ntiles):
        buf, nb, n0 = t & 1, (t & 1) ^ 1, t * BN
        if t + 1 < ntiles:  # all threads, before any warp computes tile t
            load_rows(smem, sK + nb * BN * LDS, mem["k"], gk, p["k_sl"], n0 + BN,
                      S, D, vec, DP, BN, LDS)
            load_rows(smem, sV + nb * BN * LDS, mem["v"], gv, p["v_sl"], n0 + BN,
                      S, D, vec, DP, BN, LDS)
            if BIAS:
                load_bias_tile(smem, sB + nb * BM * LDB, mem["bias"], gb,
                               p["b_sl"], p["b_ss"], m0, L, n0 + BN, S, bvec,
                               BN, LDB)
        for w in range(NW):
            wr0 = m0 + w * WM
            nomask_end = visible_end(p, wr0, off)
            if QREG and t == 0:
                for r, kk in itertools.product(range(RG), range(KS)):
                    qf[w, :, r, kk] = ldsm_x4(smem, a_addr(w, r, kk))
            # S = Q K^T
            s = np.zeros((32, RG, NS, 4))
            ks = sK + buf * BN * LDS
            for kk in range(KS):
                a = [qf[w, :, r, kk] if QREG else ldsm_x4(smem, a_addr(w, r, kk))
                     for r in range(RG)]
                for nn in range(BN // 16):
                    bb = ldsm_x4(smem, ks + (nn * 16 + (LANES & 7) + (LANES >> 4) * 8)
                                 * LDS + kk * 16 + ((LANES >> 3) & 1) * 8)
                    for r in range(RG):
                        mma(s[:, r, 2 * nn], a[r], bb[:, 0], bb[:, 1])
                        mma(s[:, r, 2 * nn + 1], a[r], bb[:, 2], bb[:, 3])
            # to_log2
            bs = sB + buf * BM * LDB + w * WM * LDB
            for r, j, hh in itertools.product(range(RG), range(NS), range(2)):
                if BIAS:
                    idx = bs + (16 * r + G + 8 * hh) * LDB + j * 8 + 2 * TIG
                    assert (idx % 2 == 0).all(), "bias pair not 4-byte aligned"
                    b0, b1 = smem[idx], smem[idx + 1]
                    s[:, r, j, 2 * hh] = s[:, r, j, 2 * hh] * sl2 + b0 * LOG2E
                    s[:, r, j, 2 * hh + 1] = s[:, r, j, 2 * hh + 1] * sl2 + b1 * LOG2E
                else:
                    s[:, r, j, 2 * hh] *= sl2
                    s[:, r, j, 2 * hh + 1] *= sl2
            # mask_tile
            if n0 + BN > nomask_end:
                row0 = wr0 + G
                for q in range(2 * RG):
                    r, hh = q >> 1, q & 1
                    lim = np.array([visible_end(p, int(x), off) - 1
                                    for x in row0 + 16 * r + 8 * hh])
                    for j, e in itertools.product(range(NS), range(2)):
                        col = n0 + j * 8 + 2 * TIG + e
                        s[:, r, j, 2 * hh + e] = np.where(col > lim, -np.inf,
                                                          s[:, r, j, 2 * hh + e])
            # softmax_tile
            with np.errstate(invalid="ignore"):
                for r in range(RG):
                    mx = [np.maximum(m_r[w, :, 2 * r], s[:, r, :, 0:2].max(axis=(1, 2))),
                          np.maximum(m_r[w, :, 2 * r + 1], s[:, r, :, 2:4].max(axis=(1, 2)))]
                    base, alpha = [], []
                    for hh in range(2):
                        mx[hh] = np.maximum(mx[hh], shfl_xor(mx[hh], 1))
                        mx[hh] = np.maximum(mx[hh], shfl_xor(mx[hh], 2))
                        base.append(np.where(mx[hh] == -np.inf, 0.0, mx[hh]))
                        alpha.append(np.exp2(m_r[w, :, 2 * r + hh] - base[hh]))
                        m_r[w, :, 2 * r + hh] = mx[hh]
                    rs = [0.0, 0.0]
                    for j, e in itertools.product(range(NS), range(4)):
                        s[:, r, j, e] = np.exp2(s[:, r, j, e] - base[e >> 1])
                        rs[e >> 1] = rs[e >> 1] + s[:, r, j, e]
                    for hh in range(2):
                        l_r[w, :, 2 * r + hh] = l_r[w, :, 2 * r + hh] * alpha[hh] + rs[hh]
                    o[w, :, r, :, 0:2] *= alpha[0][:, None, None]
                    o[w, :, r, :, 2:4] *= alpha[1][:, None, None]
            # pv_tile
            vs = sV + buf * BN * LDS
            for kc in range(BN // 16):
                pa = np.zeros((RG, 32, 4, 2))
                for r in range(RG):
                    pa[r, :, 0] = s[:, r, 2 * kc, 0:2]
                    pa[r, :, 1] = s[:, r, 2 * kc, 2:4]
                    pa[r, :, 2] = s[:, r, 2 * kc + 1, 0:2]
                    pa[r, :, 3] = s[:, r, 2 * kc + 1, 2:4]
                for dn in range(DP // 16):
                    bb = ldsm_x4(smem, vs + (kc * 16 + (LANES & 7) + ((LANES >> 3) & 1) * 8)
                                 * LDS + dn * 16 + (LANES >> 4) * 8, trans=True)
                    for r in range(RG):
                        mma(o[w, :, r, 2 * dn], pa[r], bb[:, 0], bb[:, 1])
                        mma(o[w, :, r, 2 * dn + 1], pa[r], bb[:, 2], bb[:, 3])
    # epilogue
    go = b * p["o_sb"] + h * p["o_sh"]
    gl = b * p["lse_sb"] + h * p["lse_sh"]
    for w in range(NW):
        wr0 = m0 + w * WM
        lr = l_r[w] + shfl_xor(l_r[w], 1)
        lr = lr + shfl_xor(lr, 2)
        for lane in range(32):
            g, tig = lane >> 2, lane & 3
            for r, hh in itertools.product(range(RG), range(2)):
                row = wr0 + 16 * r + g + 8 * hh
                if row >= L:
                    continue
                lv = lr[lane, 2 * r + hh]
                inv = 1.0 if lv == 0 else 1.0 / lv
                for i in range(DP // 8):
                    col = i * 8 + 2 * tig
                    if col >= D:
                        continue
                    x0 = o[w, lane, r, i, 2 * hh] * inv
                    x1 = o[w, lane, r, i, 2 * hh + 1] * inv
                    base = go + row * p["o_sl"]
                    if pair and col + 1 < D:
                        assert (base + col) % 2 == 0, "pair store not 4-byte aligned"
                    mem["out"].write(base + col, x0)
                    if col + 1 < D:
                        mem["out"].write(base + col + 1, x1)
            if p["lse"] and tig == 0:
                for q in range(2 * RG):
                    row = wr0 + 16 * (q >> 1) + g + 8 * (q & 1)
                    lv, mv = lr[lane, q], m_r[w, lane, q]
                    if row < L:
                        mem["lse"].write(gl + row, p["empty_lse"] if lv == 0
                                         else mv * LN2 + math.log(lv))
                    elif row < p["lse_pad"]:
                        mem["lse"].write(gl + row, math.inf)


def dense_strides(shape):
    st, acc = [], 1
    for n in reversed(shape):
        st.append(acc)
        acc *= n
    return list(reversed(st))


def run_case(B, Hq, Hkv, L, S, D, causal, bias_kind, vec, seed, lse_mode):
    """One case on the emulated kernel against float64 attention."""
    rng = np.random.default_rng(seed)
    DP = 64 if D <= 64 else 128
    BIAS = bias_kind is not None
    BN = 32 if (BIAS and DP == 128) else 64
    QREG = DP == 64
    # q/k/v with a padded row (odd strides when vec is off: the kernel's
    # element loads) and the sequence dim outermost but one.
    pad = 0 if vec else 1
    qs = [B, Hq, L, D + pad]
    ks = [B, Hkv, S, D + pad]
    q = rng.standard_normal(qs)
    k = rng.standard_normal(ks)
    v = rng.standard_normal(ks)
    if vec:  # the kernel's vec rule
        assert D % 8 == 0
    bias = None
    p = dict(B=B, Hq=Hq, Hkv=Hkv, L=L, S=S, D=D, causal=causal,
             scale=1.0 / math.sqrt(D))
    for name, shape in (("q", qs), ("k", ks), ("v", ks)):
        st = dense_strides(shape)
        p[name + "_sb"], p[name + "_sh"], p[name + "_sl"] = st[0], st[1], st[2]
    mem = {"q": Mem(q.ravel(), "q"), "k": Mem(k.ravel(), "k"),
           "v": Mem(v.ravel(), "v")}
    bvec = False
    if BIAS:
        S8 = (S + 7) // 8 * 8
        if bias_kind == "padded":  # [B, Hq, L, S8][..., :S]: 16-byte loads
            full = rng.standard_normal((B, Hq, L, S8))
            st = dense_strides([B, Hq, L, S8])
            p.update(b_sb=st[0], b_sh=st[1], b_sl=st[2], b_ss=1)
            bvec = True
        elif bias_kind == "keypad":  # [B, 1, 1, S8]: rows and heads broadcast
            full = rng.standard_normal((B, 1, 1, S8))
            full[..., S - S // 3:S] = -np.inf
            p.update(b_sb=S8, b_sh=0, b_sl=0, b_ss=1)
            bvec = True
        elif bias_kind == "dense":  # [B, Hq, L, S], S odd: element loads
            full = rng.standard_normal((B, Hq, L, S))
            full[0, 0, min(5, L - 1), :] = -np.inf  # a row without keys
            st = dense_strides([B, Hq, L, S])
            p.update(b_sb=st[0], b_sh=st[1], b_sl=st[2], b_ss=1)
            bvec = S % 8 == 0
        elif bias_kind == "rows":  # [1, Hq, L, 1] expanded: key stride 0
            full = rng.standard_normal((1, Hq, L, 1))
            p.update(b_sb=0, b_sh=L, b_sl=1, b_ss=0)
        else:
            raise ValueError(bias_kind)
        mem["bias"] = Mem(full.ravel(), "bias")
        # the bias as [B, Hq, L, S] for the reference
        flat = full.ravel()
        bi = (np.arange(B)[:, None, None, None] * p["b_sb"] +
              np.arange(Hq)[None, :, None, None] * p["b_sh"] +
              np.arange(L)[None, None, :, None] * p["b_sl"] +
              np.arange(S)[None, None, None, :] * p["b_ss"])
        bias = flat[bi]
    else:
        p.update(b_sb=0, b_sh=0, b_sl=0, b_ss=0)
    # out: efficient-style [B, L, Hq, D] storage (o_sl = Hq * D: odd for
    # odd D and Hq), pair stores when D and the strides are even.
    ost = dense_strides([B, L, Hq, D])
    p.update(o_sb=ost[0], o_sh=ost[2], o_sl=ost[1])
    mem["out"] = Mem(np.full(B * L * Hq * D, np.nan), "out")
    pair = D % 2 == 0 and p["o_sb"] % 2 == 0 and p["o_sh"] % 2 == 0 and p["o_sl"] % 2 == 0
    lse_len = {"flash": L, "eff": (L + 31) // 32 * 32, "none": 0}[lse_mode]
    p["lse"] = lse_mode != "none"
    p["lse_pad"] = lse_len
    p["lse_sh"], p["lse_sb"] = lse_len, lse_len * Hq
    p["empty_lse"] = math.inf if lse_mode == "flash" else -math.inf
    mem["lse"] = Mem(np.full(max(1, B * Hq * lse_len), np.nan), "lse")

    grid_y = (L + BM - 1) // BM
    for bx in range(B * Hq):
        for by in range(grid_y):
            run_block(p, mem, bx, by, grid_y, DP, BN, QREG, BIAS, vec, pair, bvec)

    # float64 reference over the unpadded views
    qd, kd, vd = q[..., :D], k[..., :D], v[..., :D]
    kd = np.repeat(kd, Hq // Hkv, axis=1)
    vd = np.repeat(vd, Hq // Hkv, axis=1)
    sc = np.einsum("bhld,bhsd->bhls", qd, kd) * p["scale"]
    if BIAS:
        sc = sc + bias
    if causal:
        off = S - L if causal == BOTTOM_RIGHT else 0
        keep = np.arange(S)[None, :] <= np.arange(L)[:, None] + off
        sc = np.where(keep, sc, -np.inf)
    mx = sc.max(axis=-1, keepdims=True)
    empty = np.isneginf(mx)
    e = np.exp(sc - np.where(empty, 0, mx))
    den = e.sum(axis=-1, keepdims=True)
    want = np.einsum("bhls,bhsd->bhld", e / np.where(den == 0, 1, den), vd)
    with np.errstate(divide="ignore"):
        wlse = np.where(empty[..., 0], p["empty_lse"], (mx + np.log(den))[..., 0])

    out = mem["out"].d.reshape(B, L, Hq, D).transpose(0, 2, 1, 3)
    writes = mem["out"].writes
    assert (writes == 1).all(), f"out written {writes.min()}..{writes.max()} times"
    err = np.abs(out - want).max() if out.size else 0.0
    assert err < 1e-9, f"max error {err}"
    if p["lse"]:
        lse = mem["lse"].d.reshape(B, Hq, lse_len)
        assert (mem["lse"].writes == 1).all(), "lse rows not written exactly once"
        assert np.isposinf(lse[..., L:]).all(), "lse pad rows not +inf"
        got = lse[..., :L]
        assert (np.isinf(got) == np.isinf(wlse)).all(), "lse infinities differ"
        assert (got[np.isinf(got)] == wlse[np.isinf(wlse)]).all(), "lse inf signs"
        fin = ~np.isinf(got)
        if fin.any():
            assert np.abs(got[fin] - wlse[fin]).max() < 1e-9, "lse error"
    else:
        assert (mem["lse"].writes == 0).all(), "lse written without lse"
    return err


def cases(quick):
    lens = [1, 33, 65, 127, 129, 255] if not quick else [1, 33, 129]
    for L, S in itertools.product(lens, lens):
        for causal in (NONE, UPPER_LEFT, BOTTOM_RIGHT):
            yield dict(B=1, Hq=1, Hkv=1, L=L, S=S, D=64, causal=causal,
                       bias_kind=None, vec=True, lse_mode="flash")
    for D, vec in [(8, True), (33, False), (40, True), (64, False), (80, True),
                   (96, False), (128, True), (128, False)]:
        for causal in (UPPER_LEFT, BOTTOM_RIGHT):
            yield dict(B=1, Hq=3, Hkv=3, L=129, S=80, D=D, causal=causal,
                       bias_kind=None, vec=vec, lse_mode="eff")
    for D in (64, 128):  # GQA, two batches, lse padded
        for causal in (NONE, BOTTOM_RIGHT):
            yield dict(B=2, Hq=4, Hkv=2, L=65, S=129, D=D, causal=causal,
                       bias_kind=None, vec=True, lse_mode="eff")
    for D in (40, 128):
        for kind in ("padded", "keypad", "dense", "rows"):
            for causal in (NONE, UPPER_LEFT):
                yield dict(B=2, Hq=2, Hkv=1, L=130, S=75, D=D, causal=causal,
                           bias_kind=kind, vec=D % 8 == 0, lse_mode="eff")
    yield dict(B=1, Hq=1, Hkv=1, L=40, S=100, D=64, causal=BOTTOM_RIGHT,
               bias_kind=None, vec=True, lse_mode="none")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    n = 0
    for i, c in enumerate(cases(a.quick)):
        try:
            run_case(seed=i, **c)
        except AssertionError as e:
            print(f"FAIL {c}: {e}")
            sys.exit(1)
        n += 1
        print(f"ok {c}", flush=True)
    print(f"{n} passed, 0 failed")


if __name__ == "__main__":
    main()
