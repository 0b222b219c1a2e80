"""Token-local functions: a causal layer's sampled tokens as functions of those tokens alone.

The diagonal block ``D_t = dy_t / dx_t`` of a causal sequence layer holds every other token at
its recorded value. A product with it through the layer costs a pass over the sequence (or
its prefix), most of it spent on tokens whose tangents are zero. A *token-local* function
maps the sampled tokens of each sample, gathered into a short sequence of their own
(``(B, R, d)``; entry ``r`` is token ``t_r``), to their outputs, with no entry moving another:

* a token-wise step (an MLP with its residual, a norm) is itself token-local;
* an attention layer that reads its keys and values through a key/value cache (Hugging Face
  decoders: ``cache=`` or ``past_key_values=``) is made token-local with a cache that holds the
  recorded keys and values of the whole sequence: entry ``r``'s query attends to the recorded
  keys of tokens ``< t_r`` and to its own key, computed from the entry, through the layer's own
  code and an attention mask that hides the rest (the other entries' keys included). Positions
  (``position_ids``, rotary ``position_embeddings``) are read at ``t_r``. The recorded keys are
  shared by every entry of a sample, so an entry costs the layer's matrix products on one token
  plus one row of attention.

These are *candidates*: :class:`~depthdyn.nn.analysis.operators.LayerOperator` takes one only
where it reproduces the recorded outputs at the sampled tokens and a random product of the
whole-sequence operator, and otherwise computes on prefixes or the whole sequence.

Same-shaped layers (one class, the same parameter names and shapes, arguments of one layout)
have token-local functions that differ only in tensors: their weights, their recorded keys and
values, and any argument that differs. :class:`Stack` runs several as one function, ``vmap``
over those tensors stacked (:mod:`~depthdyn.nn.analysis.stacked`).
"""

from __future__ import annotations

import inspect as pyinspect
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten  # torch.func's own pytrees (no public module)

from .record import detached, first_tensor

__all__ = ["Stack", "TokenLocalSpec", "cached_attention", "tokenwise"]

#: Keyword names under which Hugging Face layers take their key/value cache.
CACHE_KEYWORDS = ("cache", "past_key_values")


def tokenwise(fn: Callable) -> Callable:
    """Candidates for a step that may act on each token alone: the step itself."""
    return lambda tokens: [fn]


class _Tape:
    """A key/value cache that keeps what the layer gives it and hands it back unchanged."""

    def __init__(self):
        self.kv = []

    def update(self, key_states, value_states, *args, **kwargs):
        self.kv.append((key_states.detach(), value_states.detach()))
        return key_states, value_states


class _Prefix:
    """A key/value cache holding the recorded keys and values of the whole sequence: ``update``
    returns them with the entries' own keys and values appended (nothing is stored, so the same
    cache serves every product, also under ``vmap``)."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor):
        self.keys, self.values = keys, values

    def update(self, key_states, value_states, *args, **kwargs):
        return torch.cat([self.keys, key_states], dim=-2), torch.cat([self.values, value_states], dim=-2)


def _named(call) -> tuple[str, str, dict] | None:
    """The cache keyword of the layer, the name of its state argument and its recorded call as
    keyword arguments, or None where it takes no cache or its arguments cannot all be named."""
    try:
        sig = pyinspect.signature(call.module.forward)
        bound = sig.bind(*call.args, **call.kwargs)
    except (TypeError, ValueError):
        return None
    kw = next((k for k in CACHE_KEYWORDS if k in sig.parameters), None)
    named = {}
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if kind is pyinspect.Parameter.VAR_KEYWORD:
            named.update(value)
        elif kind in (pyinspect.Parameter.VAR_POSITIONAL, pyinspect.Parameter.POSITIONAL_ONLY):
            return None
        else:
            named[name] = value
    state = next(iter(sig.parameters)) if call.where == 0 else call.where
    return (kw, state, detached(named)) if kw is not None else None


def _recorded_keys(call):
    """``(cache keyword, state name, keyword arguments, keys, values)`` of one call of the layer
    on its recorded state with a recording cache, or None where that is not one attention."""
    x, named = call.state.detach(), _named(call)
    if x.dim() != 3 or named is None:
        return None
    kw, state, kwargs = named
    tape = _Tape()
    try:
        with torch.no_grad():
            call.module(**{**kwargs, state: x.clone(), kw: tape})
    except Exception:  # noqa: BLE001 - a layer that rejects the cache is simply not token-local
        return None
    if len(tape.kv) != 1:  # no attention through the cache, or several (cross-attention): unknown
        return None
    keys, values = tape.kv[0]
    B, T = x.shape[:2]
    if keys.dim() != 4 or keys.shape[0] != B or keys.shape[-2] != T or values.shape[-2] != T:
        return None
    return kw, state, kwargs, keys, values


def _at(value, B: int, T: int, t_idx):
    """An argument of the recorded call at the sampled tokens: a tensor laid out ``(B, T, ...)``
    or ``(1, T, ...)`` (positions, rotary tables) is read at ``t_idx`` along its token axis;
    tuples and lists item by item; anything else as it is."""
    if isinstance(value, torch.Tensor):
        if value.dim() >= 2 and value.shape[0] in (1, B) and value.shape[1] == T:
            return value[:, t_idx.to(value.device)]
        return value
    if isinstance(value, (tuple, list)):
        return type(value)(_at(v, B, T, t_idx) for v in value)
    return value


def _key_mask(recorded, B: int, T: int, t_idx, dtype) -> torch.Tensor | None:
    """The additive mask ``(B, 1, R, T + R)`` over the recorded keys and the entries' own keys:
    entry ``r`` sees recorded key ``j`` where ``j < t_r`` (and the recorded mask lets token
    ``t_r`` see it) and, of the entries' keys, its own alone (where the recorded mask lets
    ``t_r`` see itself). None where the recorded mask has a layout this does not know."""
    R = t_idx.shape[0]
    seen = (torch.arange(T)[None, :] < t_idx[:, None]).expand(B, R, T)
    own = torch.eye(R, dtype=torch.bool).expand(B, R, R)
    if recorded is not None:
        if not isinstance(recorded, torch.Tensor) or recorded.dim() != 4 or recorded.shape[-2:] != (T, T):
            return None
        if recorded.shape[0] not in (1, B) or recorded.shape[1] != 1:
            return None
        rows = recorded[:, 0].cpu()[:, t_idx]  # (B or 1, R, T): what token t_r may see
        ok = rows if rows.dtype == torch.bool else rows == 0
        seen = seen & ok
        own = own & ok[:, torch.arange(R), t_idx][:, :, None]
    allowed = torch.cat([seen, own], dim=2)
    mask = torch.zeros(B, 1, R, T + R, dtype=dtype)
    return mask.masked_fill(~allowed[:, None], torch.finfo(dtype).min)


def cached_attention(call) -> Callable:
    """Candidates for a recorded layer call (:class:`~depthdyn.nn.analysis.record.Call`): the
    token-local function described above where its attention takes a key/value cache, then the
    call as a token-wise step. The keys and values are recorded once, on first use."""
    fallback = call.function()
    memo = {}

    def candidates(tokens):
        if "keys" not in memo:
            memo["keys"] = _recorded_keys(call)
        made = None if memo["keys"] is None else _token_local(call, memo["keys"], tokens)
        return [fallback] if made is None else [made, fallback]

    return candidates


def _token_local(call, recorded, tokens) -> Callable | None:
    kw, state, kwargs, keys, values = recorded
    x, module = call.state, call.module
    B, T = x.shape[:2]
    t_idx = torch.tensor(tokens)
    mask = _key_mask(kwargs.get("attention_mask"), B, T, t_idx, x.dtype)
    if mask is None:
        return None
    local = {k: _at(v, B, T, t_idx) for k, v in kwargs.items() if k not in (state, kw, "cache_position")}
    local["attention_mask"] = mask.to(x.device)
    cache = _Prefix(keys, values)

    def fn(entries: torch.Tensor) -> torch.Tensor:
        return first_tensor(module(**local, **{kw: cache, state: entries.clone()}))

    fn.spec = TokenLocalSpec(module, local, kw, state, keys, values)
    return fn


@dataclass(frozen=True, eq=False)
class TokenLocalSpec:
    """What a cached-attention token-local function is made of: the layer, its other arguments
    at the sampled tokens (the mask included), the names of its cache and state arguments, and
    the recorded keys and values the cache holds."""

    module: torch.nn.Module
    kwargs: dict
    cache: str
    state: str
    keys: torch.Tensor
    values: torch.Tensor


def _layout(module: torch.nn.Module) -> list:
    return [(n, tuple(t.shape), t.dtype) for n, t in (*module.named_parameters(), *module.named_buffers())]


class Stack:
    """The weights and recorded keys of same-shaped layers, stacked once: :meth:`function` makes
    the function of all their entries at once, ``(G, B, R, d) -> (G, B, R, d)``, from the layers'
    token-local functions (for one count of entries; masks and positions depend on it).

    :meth:`of` returns None where the layers do not fit: another class, other parameter shapes,
    arguments of another layout, or a function that is not a cached-attention one.
    """

    def __init__(self, specs: list[TokenLocalSpec]):
        from torch.func import stack_module_state

        params, buffers = stack_module_state([s.module for s in specs])
        # constants of the products (no gradient is taken with respect to them)
        self.params = {k: v.detach() for k, v in params.items()}
        self.buffers = {k: v.detach() for k, v in buffers.items()}
        self.keys = torch.stack([s.keys for s in specs])
        self.values = torch.stack([s.values for s in specs])
        self.base, self.cache, self.state = specs[0].module, specs[0].cache, specs[0].state
        self.size = len(specs)

    @classmethod
    def of(cls, fns: list) -> Stack | None:
        specs = [getattr(f, "spec", None) for f in fns]
        if len(specs) < 2 or any(not isinstance(s, TokenLocalSpec) for s in specs):
            return None
        first = specs[0]
        if any(type(s.module) is not type(first.module) or (s.cache, s.state) != (first.cache, first.state)
               or _layout(s.module) != _layout(first.module) or s.keys.shape != first.keys.shape
               or s.values.shape != first.values.shape for s in specs):
            return None
        return cls(specs) if _split_arguments(specs) is not None else None

    def function(self, fns: list) -> Callable | None:
        """The stacked function of the layers' token-local functions ``fns`` (one per layer, in
        the order of the stack, for the same entries), or None where their arguments differ in
        layout."""
        specs = [getattr(f, "spec", None) for f in fns]
        if len(specs) != self.size or any(not isinstance(s, TokenLocalSpec) for s in specs):
            return None
        split = _split_arguments(specs)
        if split is None:
            return None
        leaves, spec, varying = split
        stacked = [torch.stack([tree_flatten(s.kwargs)[0][i] for s in specs]) for i in varying]

        def one(params, buffers, keys, values, tensors, entries):
            held = list(leaves)
            for i, t in zip(varying, tensors, strict=True):
                held[i] = t
            kwargs = tree_unflatten(held, spec)
            kwargs.update({self.cache: _Prefix(keys, values), self.state: entries.clone()})
            out = torch.func.functional_call(self.base, (params, buffers), args=(), kwargs=kwargs)
            return first_tensor(out)

        def fn(entries: torch.Tensor) -> torch.Tensor:
            return torch.func.vmap(one)(self.params, self.buffers, self.keys, self.values, stacked, entries)

        return fn


def _split_arguments(specs: list[TokenLocalSpec]):
    """The layers' other arguments as one layout: ``(leaves, treespec, varying)`` with the first
    layer's leaves, and the indices of the tensor leaves that differ between layers (stacked and
    mapped over); None where the layouts, or a leaf that is not a tensor, differ."""
    flat = [tree_flatten(s.kwargs) for s in specs]
    leaves, spec = flat[0]
    if any(f[1] != spec for f in flat):
        return None
    varying = []
    for i, leaf in enumerate(leaves):
        others = [f[0][i] for f in flat[1:]]
        if isinstance(leaf, torch.Tensor):
            if any(not isinstance(o, torch.Tensor) or o.shape != leaf.shape or o.dtype != leaf.dtype
                   for o in others):
                return None
            if not all(o is leaf or torch.equal(o, leaf) for o in others):
                varying.append(i)
        elif any(o is not leaf and (isinstance(o, torch.Tensor) or not _same(o, leaf)) for o in others):
            return None
    return leaves, spec, varying


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - an object that cannot say: not the same
        return False
