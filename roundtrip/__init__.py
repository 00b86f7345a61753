"""Round-trip checks of PTX files and folders: `ptx2py check`."""
