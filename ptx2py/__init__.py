"""ptx2py from Python (notebooks): `ptx2py.open(path_or_compiled_kernel)`, `ptx2py.from_triton(compiled)`."""

from .notebook import from_triton, open  # noqa: A004 - `ptx2py.open` is the API's name

__all__ = ["open", "from_triton"]
