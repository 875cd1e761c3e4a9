"""`@autotune(configs=[...], key=[...])`: the explicit form of tuning, as Triton users write it.

    from pypto.tune.autotune import autotune

    @autotune(configs=[{"stitch_function_max_num": 128},
                       {"stitch_function_max_num": 512, "vec_tile@attn.py:40": (16, 512)}],
              key=["q"])
    @pypto.frontend.jit
    def attn(q: ..., k: ..., out: ...): ...

A config is a mapping of knobs (`frontend.knobs` addresses: option names, `vec_tile@FILE:LINE`,
`cube_tile@FILE:LINE`, `unroll@FILE:LINE`, `sg_scope@FILE:LINE`, `cache_policy@PARAM`); all
are checked when the decorator runs. Configs are simulated in this process, one after another
(the call waits for them; `kernel.tune` is the form that uses a process pool or Ray). `key` names arguments: their
shapes and dtypes (tensors) or values (others) select the cached choice. The first call with
a new key simulates every config on the call's own arguments, timing only (outputs untouched;
on copies with numerics when the kernel's control flow reads computed values); the fastest by
`metric` is kept for that key, and the call itself then runs once, with it. Later calls with
the key run the kept config directly. `.choices` maps each key to (config index, times).
"""
from __future__ import annotations

import functools
from typing import Any, Mapping, Sequence

from pypto.errors import PyptoError, PyptoTypeError, PyptoValueError
from pypto.frontend import knobs as knob_state

METRICS = {"kernel_us": "kernel_cycles", "e2e_us": "e2e_cycles"}


def autotune(configs: Sequence[Mapping[str, Any]], key: Sequence[str] = (),
             metric: str = "kernel_us") -> Any:
    """Decorate a jit kernel (see the module docstring)."""
    if not configs:
        raise PyptoValueError("autotune: configs must list at least one knob mapping")
    parsed = [knob_state.parse(c) for c in configs]   # (checked now, named by the knob)
    if metric not in METRICS:
        raise PyptoValueError(f"autotune: metric must be one of {sorted(METRICS)}, "
                              f"got {metric!r}")

    def wrap(kernel: Any) -> Any:
        if not hasattr(kernel, "tensor_params") or not callable(kernel):
            raise PyptoTypeError("autotune decorates a @pypto.frontend.jit kernel (put "
                                 "@autotune above @pypto.frontend.jit)")
        return Autotuned(kernel, [dict(c) for c in configs], parsed, tuple(key), metric)
    return wrap


class Autotuned:
    """A jit kernel whose knobs are chosen per `key` among declared configs."""

    def __init__(self, kernel: Any, configs: list[dict], parsed: list, key: tuple,
                 metric: str):
        self.kernel, self.configs, self.key_names, self.metric = kernel, configs, key, metric
        self._parsed = parsed
        self.choices: dict[tuple, tuple[int, list[float | None]]] = {}
        functools.update_wrapper(self, kernel.func)
        names = {n for n, _ in kernel.signature.tensor_params} | \
            {p.name for p in kernel.signature.other_params}
        unknown = [k for k in key if k not in names]
        if unknown:
            raise PyptoValueError(f"autotune: key names {unknown} that kernel "
                                  f"'{kernel.__name__}' does not take")

    def __getattr__(self, name: str) -> Any:   # last_run, last_program, whatif, tune, ...
        return getattr(self.kernel, name)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        bound, others, _ = self.kernel.bind(args, kwargs)
        key = self._key(bound, others)
        if key not in self.choices:
            times = [self._time(args, kwargs, c) for c in self._parsed]
            feasible = [(t, i) for i, t in enumerate(times) if t is not None]
            if not feasible:
                raise PyptoValueError(f"autotune '{self.kernel.__name__}': no config compiles "
                                      f"for {key}")
            self.choices[key] = (min(feasible)[1], times)
        chosen = self._parsed[self.choices[key][0]]
        with knob_state.applied(knob_state.Knobs(dict(chosen.options), chosen.sites, {})):
            self.kernel(*args, **kwargs)

    def _key(self, bound: list, others: dict) -> tuple:
        by_name = {b.name: (tuple(b.array.shape), b.dtype.name) for b in bound}
        by_name.update({k: repr(v) for k, v in others.items()})
        return tuple((n, by_name.get(n)) for n in self.key_names)

    def _time(self, args: tuple, kwargs: dict, config: Any) -> float | None:
        """The config's simulated time on these arguments (None: the compiler refused it)."""
        try:
            run = self.kernel.evaluate(*args, knobs=config, **kwargs).run
        except PyptoError:
            return None
        return run.us(run.stats[METRICS[self.metric]])
