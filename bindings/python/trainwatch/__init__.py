from . import native
