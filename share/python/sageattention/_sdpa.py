"""The exact path: torch.nn.functional.scaled_dot_product_attention for what the kernels do not
take (any attn_mask, head_dim > 128, v's head_dim unlike q's, float64, a non-positive scale).

Semantics match the kernel path: causal masking with q_len != kv_len is aligned bottom-right,
and a query row that sees no key at all (causal with q_len > kv_len) gives zeros and LSE -inf.
A user's mask is applied as SDPA applies it (broadcast to [batch, heads, q_len, kv_len]).
The LSE, when asked for, is computed in fp32 from the scores, a block of query rows at a time
so that the scores held at once stay within the workspace cap.
"""

import torch
import torch.nn.functional as F

from . import _dispatch, _settings


def _hnd(t, layout):
    return t if layout == "HND" else t.transpose(1, 2)


def _causal_allowed(dims, device, rows=None):
    """Bool [rows, kv_len]: key j visible from query i (bottom-right aligned)."""
    r0, r1 = rows if rows is not None else (0, dims.q_len)
    i = torch.arange(r0, r1, device=device).unsqueeze(1)
    j = torch.arange(dims.kv_len, device=device).unsqueeze(0)
    return j <= i + _dispatch.causal_offset(dims.q_len, dims.kv_len)


def _combined_mask(attn_mask, is_causal, dims, dtype, device):
    """The one mask SDPA gets: the user's (bool, or additive in q's dtype) with the causal
    rule folded in; None when there is neither."""
    mask = attn_mask
    if mask is not None:
        if mask.device != device:
            mask = mask.to(device)
        if mask.dtype != torch.bool and mask.dtype != dtype:
            mask = mask.to(dtype)
    if not is_causal:
        return mask
    allowed = _causal_allowed(dims, device)
    if mask is None:
        return allowed
    if mask.dtype == torch.bool:
        return mask & allowed
    return mask.masked_fill(~allowed, float("-inf"))


def _sdpa(q, k, v, mask, scale, causal_square, gqa):
    kwargs = {"attn_mask": mask, "scale": scale, "is_causal": causal_square}
    if gqa:
        try:
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kwargs)
        except TypeError:  # torch < 2.5 has no enable_gqa
            group = q.shape[1] // k.shape[1]
            k = k.repeat_interleave(group, dim=1)
            v = v.repeat_interleave(group, dim=1)
    return F.scaled_dot_product_attention(q, k, v, **kwargs)


def attention(q, k, v, attn_mask, layout, dims, is_causal, scale, return_lse):
    """(o, lse or None): o contiguous in q's layout and dtype, lse float32 [B, H, Lq]."""
    q4, k4, v4 = _hnd(q, layout), _hnd(k, layout), _hnd(v, layout)
    gqa = dims.q_heads != dims.kv_heads
    square_causal = is_causal and attn_mask is None and dims.q_len == dims.kv_len
    mask = None if square_causal else _combined_mask(attn_mask, is_causal, dims, q.dtype,
                                                     q.device)
    o = _sdpa(q4, k4, v4, mask, scale, square_causal, gqa)
    if is_causal and dims.q_len > dims.kv_len:
        # Rows before the first visible key: zeros, as the kernels write (SDPA gives NaN).
        o[:, :, :dims.q_len - dims.kv_len] = 0
    o = _hnd(o, layout).contiguous()
    lse = _lse(q4, k4, attn_mask, is_causal, dims, scale) if return_lse else None
    return o, lse


def _lse(q4, k4, attn_mask, is_causal, dims, scale):
    """logsumexp over keys of scale * q.k (+ mask), fp32, [B, Hq, Lq]; -inf for rows that
    see no key."""
    b, hq, hkv, lq, lk = dims.batch, dims.q_heads, dims.kv_heads, dims.q_len, dims.kv_len
    group = hq // hkv
    out = torch.empty((b, hq, lq), dtype=torch.float32, device=q4.device)
    kt = k4.float().transpose(-1, -2).unsqueeze(2)  # [B, Hkv, 1, D, Lk]
    mask = None
    if attn_mask is not None:
        mask = attn_mask.to(q4.device)
        mask = mask if mask.dtype == torch.bool else mask.float()
        mask = torch.broadcast_to(mask, (b, hq, lq, lk))
    step = _dispatch.lse_rows_per_chunk(b, hq, lq, lk, _settings.workspace_limit())
    for r0 in range(0, lq, step):
        r1 = min(lq, r0 + step)
        qs = q4[:, :, r0:r1].float().reshape(b, hkv, group, r1 - r0, -1)
        s = torch.matmul(qs, kt).mul_(scale).reshape(b, hq, r1 - r0, lk)
        if mask is not None:
            m = mask[:, :, r0:r1]
            if m.dtype == torch.bool:
                s.masked_fill_(~m, float("-inf"))
            else:
                s.add_(m)
        if is_causal:
            s.masked_fill_(~_causal_allowed(dims, q4.device, (r0, r1)), float("-inf"))
        out[:, :, r0:r1] = torch.logsumexp(s, dim=-1)
    return out
