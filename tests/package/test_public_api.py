"""The public namespace of ocnb is exactly its __all__."""

import types

import ocnb


def test_public_namespace_is_all() -> None:
    public = {n for n, v in vars(ocnb).items() if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    public |= {"__version__"}
    assert public == set(ocnb.__all__)


def test_all_names_resolve() -> None:
    for name in ocnb.__all__:
        assert getattr(ocnb, name) is not None
