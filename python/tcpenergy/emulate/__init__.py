"""The kernel mode: the machine's own TCP between network namespaces, through the engine's media."""
