"""The one error the bridge raises: a message naming what it could not handle (and where)."""


class BridgeError(ValueError):
    """A kernel, option or file the bridge cannot handle; `str()` is the message to print."""
