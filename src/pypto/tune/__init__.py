"""Tuning, above the driver: what-if (`whatif`), the search space (`space`), the search
(`search`, `optuna_search`), where evaluations run (`backends`), the tuning database (`db`),
`@autotune` (`autotune`), the `tune` command's report (`report`) and the tuning guide's
before/after cases (`cases`).

Every module here drives a kernel through its public API only: `JitKernel.evaluate` (a call
with knobs, as a `CallRecord`, leaving the kernel's record and cache alone), `kernel.last`,
`kernel.options()` and the option specs. The driver imports nothing from here: `import pypto`
lends it the entries it needs (`driver.lend`: the database lookup of `use_tuned`,
`kernel.whatif`, `kernel.tune`).
"""
