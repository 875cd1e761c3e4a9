"""The tuner's "optuna" strategy: Optuna's TPE sampler over the knob candidates (the `tune`
extra), for spaces too large to sweep knob by knob.

Each knob is one categorical parameter over its candidates' indices (candidates are tuples
and dicts, which Optuna's categorical values cannot be). The first trial is the kernel's own
setting (already evaluated: the baseline), so the sampler starts from what the user has. Trials
are asked `BATCH` at a time and evaluated together on the search's backend (`backends`);
TPE's constant liar keeps one round's settings apart. A refused setting is a failed trial, one
pruned by its lower bound a pruned trial (`TrialState.PRUNED`: Optuna's own name for a trial
stopped early because it cannot win). The sampler is seeded and a round's size does not depend
on the workers, so a seed gives the same search everywhere. As after a descent, evaluations
are kept for the end (two per knob when the budget is over four per knob, else one): each knob
the best trial changed is put back, and stays put back when it did not pay, in passes until
none does or the budget is spent, so the answer changes only knobs that matter (TPE sets
every knob, those that do not matter included).
"""
from __future__ import annotations

from typing import Any

from pypto.errors import PyptoValueError

BATCH = 4          # trials per round
ASKS_PER_EVAL = 8  # give up when the sampler keeps proposing settings already evaluated


def optuna_search(search: Any, seed: int) -> None:
    """Spend `search`'s budget (a `search._Search`) on TPE trials."""
    optuna = _import_optuna()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    dims = search.dims
    sampler = optuna.samplers.TPESampler(seed=seed, multivariate=True, constant_liar=True,
                                         n_startup_trials=min(10, max(2, search.budget // 5)))
    study = optuna.create_study(direction="minimize", sampler=sampler)
    study.enqueue_trial({d.knob: 0 for d in dims})   # candidates[0] is the current value
    # keep evaluations for the put-back check: TPE changes most knobs, so a pass costs about
    # one per knob, and putting one back can make another worth a second look
    for passes in (2, 1):
        if search.budget > 2 * passes * len(dims):
            search.limit = search.budget - passes * len(dims)
            break
    _trials(search, study, optuna)
    search.limit = search.budget
    best = search.best
    search.prune({d.knob: best.config.get(d.knob, d.current) for d in dims}, best.value_us)


def _trials(search: Any, study: Any, optuna: Any) -> None:
    """Rounds of `BATCH` trials until the search's current limit."""
    dims = search.dims
    asks = 0
    while search.room() and asks < ASKS_PER_EVAL * search.budget:
        trials = [study.ask() for _ in range(min(BATCH, search.room()))]
        asks += len(trials)
        choices = [{d.knob: d.candidates[t.suggest_categorical(d.knob,
                                                               list(range(len(d.candidates))))]
                    for d in dims} for t in trials]
        for trial, e in zip(trials, search.evaluate_batch(choices)):
            if e.value_us is not None:
                study.tell(trial, e.value_us)
            else:
                state = optuna.trial.TrialState.PRUNED if e.pruned else \
                    optuna.trial.TrialState.FAIL
                study.tell(trial, state=state)


def _import_optuna() -> Any:
    try:
        import optuna
    except ImportError:
        raise PyptoValueError("tune(strategy='optuna'): Optuna is not installed; pip install "
                              "'openpto[tune]' (or pip install optuna)") from None
    return optuna
