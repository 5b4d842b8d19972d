"""The one model of a region: typed values, resolved calls, effects and source spans.

``builder.build_model`` interprets a region's body once, as Python would, and
hands back a ``RegionModel``. The rules report from it; the compiler prints
C++ from it and never looks at the syntax again.
"""
