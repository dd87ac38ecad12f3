"""Decomposition: variable-length (packed) attention as plain tensor math.

Covers `torch.nn.attention.varlen.varlen_attn` (in torch 2.11 the custom
op `torch_attn._varlen_attn`) and `aten._flash_attention_forward` called
with cumulative sequence offsets (its varlen mode); the dense 4-D
`_flash_attention_forward` is left alone.

Guarantee: the decomposition computes, for packed query tokens (T_q, H, D)
and key/value tokens (T_k, H_kv, D), with sequence b holding queries
cu_seq_q[b]..cu_seq_q[b+1]-1 and keys cu_seq_k[b]..cu_seq_k[b+1]-1:

* attention over a block-diagonal mask: a query attends only to keys of
  its own sequence;
* windows as Flash Attention 2 (torch 2.11's CUDA kernel) defines them,
  aligned to the bottom right of each sequence: query i of a sequence of
  L_q queries and L_k keys sees key j when
  `i + L_k - L_q - left <= j <= i + L_k - L_q + right` (a negative bound
  is unlimited; `is_causal` or window (-1, 0) means right = 0);
* grouped-query attention: H a multiple of H_kv, query head h reads key
  head h // (H / H_kv);
* different query and key lengths per sequence, an optional scale
  (default 1/sqrt(D)), and the log-sum-exp output (H, T_q) in float32;
* the output (T_q, H, D_v) is contiguous, in the query's dtype, computed in
  float32;
* a query with no visible key (a window that misses all keys) gets zeros
  and a log-sum-exp of +inf, as Flash Attention 2 does;
* tokens outside every sequence (before cu_seq[0], at or after
  cu_seq[-1]) change no output, even when they hold NaN or inf: their
  scores are masked with `where` (not added), their values are zeroed
  before the matmul, and padding queries output zeros.

Errors (PassError, naming the node's values): a right window of max_k or
more when `max_q <= max_k + 1` is not known (Flash Attention 2 treats such a
window as unlimited, later Flash versions and the math definition do not:
the results differ for sequences with more than right + 1 queries),
`seqused_k`, ALiBi slopes, dropout, the debug mask, paged KV (a key or value
cache of 4 dims with a block table), H not a multiple of H_kv.

The decomposition materialises (H, T_q, T_k) scores: memory grows with the
square of the packed token count (fine for the batch sizes of serving; a
fused varlen kernel in the shim would avoid it).
"""

import math

from .graph_utils import PassError


def _known(pred) -> bool:
    """pred (a bool or SymBool) is known to be true."""
    from torch.fx.experimental.symbolic_shapes import statically_known_true
    return bool(statically_known_true(pred))


def _check_window(left, right, max_q, max_k, where: str):
    if right is not None and right >= 0:
        may_exceed = not _known(right < max_k)
        if may_exceed and not _known(max_q <= max_k + 1):
            raise PassError(
                f"{where}: window_size right={right} with max_k={max_k}, "
                f"max_q={max_q}: Flash Attention 2 treats a right window of "
                "max_k or more as unlimited, other Flash versions do not, and "
                "they differ for sequences with more than right+1 queries; "
                "use right=-1 (unlimited) or a window below max_k, or "
                "ensure max_q <= max_k + 1")


def _segments(cu, total):
    """Per token of a packed tensor of `total` tokens: (sequence index
    clamped to a valid one, position in its sequence, length of its
    sequence, whether the token is inside a sequence)."""
    import torch
    cu = cu.to(torch.int64)
    n = cu.shape[0] - 1
    t = torch.arange(total, device=cu.device, dtype=torch.int64)
    seg = (t.unsqueeze(1) >= cu[1:].unsqueeze(0)).sum(1)
    inside = (t >= cu[0]) & (t < cu[n])
    seg = seg.clamp(max=n - 1)
    start = cu[seg]
    length = cu[seg + 1] - start
    return seg, t - start, length, inside


def varlen_attention(query, key, value, cu_seq_q, cu_seq_k, max_q, max_k,
                     is_causal=False, scale=None, window_left=-1,
                     window_right=-1, where="varlen attention"):
    """(output, logsumexp) of packed attention; see the module docstring."""
    import torch
    if key.dim() != 3 or value.dim() != 3 or query.dim() != 3:
        raise PassError(
            f"{where}: query, key and value must be packed (tokens, heads, "
            f"head_dim); got {query.dim()}, {key.dim()} and {value.dim()} "
            "dims (a 4-dim key/value cache with a block table is paged KV, "
            "which the decomposition does not support)")
    tq, h, d = query.shape
    tk, hkv = key.shape[0], key.shape[1]
    if h % hkv:
        raise PassError(f"{where}: {h} query heads is not a multiple of "
                        f"{hkv} key/value heads")
    if is_causal:
        window_right = 0
    left = window_left if window_left is not None and window_left >= 0 \
        else -1
    right = window_right if window_right is not None and window_right >= 0 \
        else -1
    _check_window(left, right, max_q, max_k, where)
    if scale is None:
        scale = 1.0 / math.sqrt(d)

    seg_q, pos_q, len_q, in_q = _segments(cu_seq_q, tq)
    seg_k, pos_k, len_k, in_k = _segments(cu_seq_k, tk)
    allowed = (seg_q.unsqueeze(1) == seg_k.unsqueeze(0)) & \
        in_q.unsqueeze(1) & in_k.unsqueeze(0)
    # Bottom-right alignment per sequence: the query's diagonal key.
    diag = pos_q.unsqueeze(1) + len_k.unsqueeze(0) - len_q.unsqueeze(1)
    if right >= 0:
        allowed = allowed & (pos_k.unsqueeze(0) <= diag + right)
    if left >= 0:
        allowed = allowed & (pos_k.unsqueeze(0) >= diag - left)

    q = query.to(torch.float32).permute(1, 0, 2)            # (H, Tq, D)
    k = key.to(torch.float32)
    v = torch.where(in_k.view(tk, 1, 1), value.to(torch.float32),
                    torch.zeros((), dtype=torch.float32,
                                device=value.device))
    groups = h // hkv
    if groups > 1:   # head h reads kv head h // groups
        k = k.unsqueeze(2).expand(tk, hkv, groups, d).reshape(tk, h, d)
        dv = v.shape[2]
        v = v.unsqueeze(2).expand(tk, hkv, groups, dv).reshape(tk, h, dv)
    k = k.permute(1, 2, 0)                                  # (H, D, Tk)
    v = v.permute(1, 0, 2)                                  # (H, Tk, Dv)
    scores = torch.matmul(q, k) * scale                     # (H, Tq, Tk)
    neg_inf = torch.full((), float("-inf"), dtype=torch.float32,
                         device=query.device)
    scores = torch.where(allowed.unsqueeze(0), scores, neg_inf)
    any_key = allowed.any(1)                                # (Tq,)
    row_max = scores.amax(-1, keepdim=True)
    row_max = torch.where(any_key.view(1, tq, 1), row_max,
                          torch.zeros_like(row_max))
    p = torch.exp(scores - row_max)
    denom = p.sum(-1, keepdim=True)
    safe = torch.where(denom > 0, denom, torch.ones_like(denom))
    out = torch.matmul(p, v) / safe                         # (H, Tq, Dv)
    out = torch.where(any_key.view(1, tq, 1), out, torch.zeros_like(out))
    out = out.permute(1, 0, 2).to(query.dtype).contiguous()
    lse = torch.where(any_key.view(1, tq), torch.log(safe.squeeze(-1)) +
                      row_max.squeeze(-1),
                      torch.full((), float("inf"), dtype=torch.float32,
                                 device=query.device))
    return out, lse


def decompose_varlen_attn(query, key, value, cu_seq_q, cu_seq_k, max_q,
                          max_k, is_causal=False, scale=None,
                          window_size=None):
    """torch_attn._varlen_attn -> (output, logsumexp, rng_state)."""
    import torch
    left, right = (window_size if window_size is not None else (-1, -1))
    out, lse = varlen_attention(query, key, value, cu_seq_q, cu_seq_k,
                                max_q, max_k, is_causal, scale, left, right,
                                where="torch_attn._varlen_attn")
    rng = torch.zeros((2,), dtype=torch.uint64, device=query.device)
    return out, lse, rng


def decompose_flash_attention_forward(
        query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p,
        is_causal, return_debug_mask, *, scale=None, window_size_left=None,
        window_size_right=None, seqused_k=None, alibi_slopes=None):
    """aten._flash_attention_forward in varlen mode -> its 5 outputs;
    NotImplemented (kept as is) in its dense 4-D mode."""
    import torch
    if cum_seq_q is None:
        return NotImplemented
    where = "aten._flash_attention_forward (varlen)"
    for name, val in (("seqused_k", seqused_k),
                      ("alibi_slopes", alibi_slopes)):
        if val is not None:
            raise PassError(f"{where}: {name} is not supported by the "
                            "varlen attention decomposition")
    if dropout_p:
        raise PassError(f"{where}: dropout_p={dropout_p}: exported programs "
                        "do not use random dropout in attention")
    if return_debug_mask:
        raise PassError(f"{where}: return_debug_mask=True is not supported")
    out, lse = varlen_attention(query, key, value, cum_seq_q, cum_seq_k,
                                max_q, max_k, is_causal, scale,
                                window_size_left, window_size_right, where)
    seed = torch.zeros((2,), dtype=torch.uint64, device=query.device)
    offset = torch.zeros((), dtype=torch.uint64, device=query.device)
    debug = torch.empty((0,), dtype=query.dtype, device=query.device)
    return out, lse, seed, offset, debug
