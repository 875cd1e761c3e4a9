"""The op library: one module per family. Importing it binds `Tensor`'s op methods and
operators (defined in frontend/tensor_methods.py) to the op functions (`tensor_api.METHODS`),
so `frontend` need not import `ops`."""
from __future__ import annotations

from pypto.frontend import tensor_methods
from pypto.ops.core import REGISTRY as REGISTRY
from pypto.ops.tensor_api import FAMILIES as FAMILIES
from pypto.ops.tensor_api import METHODS

tensor_methods.bind({name: fn for name, (fn, _) in METHODS.items()})

