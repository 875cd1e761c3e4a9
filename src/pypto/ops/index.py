"""Index ops: gather, scatter, scatter_update, index_add, index_select, topk, argsort,
triu/tril, one_hot. (Filled in by the index-ops work; see tests/ops/test_index.py.)"""
from __future__ import annotations
